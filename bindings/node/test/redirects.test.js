// The OpenAI-compatible adapter keeps the key and the conversation on the
// configured host (real node:http servers on 127.0.0.1), and no URL it
// prints keeps a password or a key.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ClipfoldError, openaiCompatible } from '../src/index.js';
import { redact } from '../src/redact.js';
import { repoRoot } from './helpers/common.js';

const STATUSES = [301, 302, 303, 307, 308];

const COMPLETION = {
  id: 'chatcmpl-1', object: 'chat.completion', created: 1772272800, model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: 'stolen summary' }, finish_reason: 'stop' }],
};

const REQUEST = {
  system: 'You are summarizing.',
  messages: [{ role: 'user', content: 'The private conversation' }, { role: 'user', content: 'Summarize the conversation above.' }],
  model: 'm', max_tokens: 64, temperature: 0, timeout_ms: 5000,
};

/**
 * A server that counts connections (before any request is read) and
 * requests, and answers each with `answer`.
 * @param {(req: {method: string, url: string, headers: import('node:http').IncomingHttpHeaders, body: string}, res: import('node:http').ServerResponse) => void} answer
 */
async function server(answer) {
  const s = { connections: 0, /** @type {{method: string, url: string, headers: import('node:http').IncomingHttpHeaders, body: string}[]} */ requests: [], url: '' };
  const srv = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      const r = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      s.requests.push(r);
      answer(r, res);
    });
  });
  srv.on('connection', () => { s.connections++; });
  await new Promise((r) => srv.listen(0, '127.0.0.1', () => r(null)));
  s.url = `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (srv.address()).port}`;
  servers.push(srv);
  return s;
}

/** @type {import('node:http').Server[]} */
const servers = [];
after(() => Promise.all(servers.map((s) => { s.closeAllConnections(); return new Promise((r) => s.close(() => r(null))); })));

/** @param {import('node:http').ServerResponse} res @param {number} status @param {unknown} body @param {Record<string, string>} [headers] */
function send(res, status, body, headers = {}) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

describe('redirects', () => {
  for (const status of STATUSES) {
    test(`HTTP ${status} to another host: refused, naming both hosts; the other host is never contacted`, async () => {
      const sink = await server((_r, res) => send(res, 200, COMPLETION));
      const redirector = await server((r, res) => send(res, status, {}, { location: sink.url + r.url }));
      const out = /** @type {any} */ (await openaiCompatible({ baseUrl: redirector.url, apiKey: 'sk-secret' }).complete(REQUEST));
      assert.deepEqual(Object.keys(out), ['error'], 'no summary');
      assert.equal(out.error.code, 'other');
      assert.equal(out.error.retryable, false);
      assert.ok(out.error.message.includes(redirector.url) && out.error.message.includes(sink.url), out.error.message);
      assert.ok(!out.error.message.includes('sk-secret'));
      assert.equal(sink.connections, 0, 'no connection to the other host');
      assert.equal(sink.requests.length, 0);
      assert.equal(redirector.requests.length, 1);
    });

    test(`HTTP ${status} on the same host: ${status >= 307 ? 'followed with the key and the body' : 'refused'}`, async () => {
      const srv = await server((r, res) => {
        if (r.url.startsWith('/moved/')) send(res, 200, COMPLETION);
        else send(res, status, {}, { location: `/moved${r.url}?sig=s3cret` });
      });
      const out = /** @type {any} */ (await openaiCompatible({ baseUrl: srv.url, apiKey: 'sk-secret' }).complete(REQUEST));
      if (status >= 307) {
        assert.equal(out.content[0].text, 'stolen summary');
        const [, moved] = srv.requests;
        assert.equal(moved.method, 'POST');
        assert.equal(moved.url, '/moved/v1/chat/completions?sig=s3cret');
        assert.equal(moved.headers.authorization, 'Bearer sk-secret');
        assert.match(moved.body, /The private conversation/);
      } else {
        assert.equal(out.error.code, 'other');
        assert.equal(out.error.retryable, false);
        assert.ok(out.error.message.includes(`${srv.url}/v1/chat/completions`), out.error.message);
        assert.ok(out.error.message.includes(`${srv.url}/moved/v1/chat/completions?sig=xxxxx`), out.error.message);
        assert.ok(!out.error.message.includes('s3cret'));
        assert.equal(srv.requests.length, 1, 'not followed');
      }
    });
  }
});

describe('redaction', () => {
  test('the cases every host passes (Go: internal/redact)', () => {
    const v = JSON.parse(readFileSync(join(repoRoot, 'testdata', 'redact', 'vectors.json'), 'utf8'));
    assert.ok(v.url.length > 0 && v.text.length > 0);
    for (const c of [...v.url, ...v.text]) {
      assert.equal(redact(c.in), c.out, c.in);
      assert.equal(redact(redact(c.in)), c.out, c.in);
    }
  });

  test("a provider's message and an unreachable URL keep no password, no key", async () => {
    const srv = await server((_r, res) => send(res, 400, { error: { message: 'cannot fetch https://u:hunter2@files.example/doc?api_key=sk-9', type: 'invalid_request_error' } }));
    let out = /** @type {any} */ (await openaiCompatible({ baseUrl: srv.url, apiKey: 'k' }).complete(REQUEST));
    assert.equal(out.error.code, 'invalid_request');
    assert.ok(out.error.message.endsWith('cannot fetch https://u:xxxxx@files.example/doc?api_key=xxxxx'), out.error.message);
    out = /** @type {any} */ (await openaiCompatible({ baseUrl: 'http://me:hunter2@127.0.0.1:1/v1', apiKey: 'k' }).complete(REQUEST));
    assert.equal(out.error.code, 'unavailable');
    assert.ok(!out.error.message.includes('hunter2') && out.error.message.includes('http://me:xxxxx@127.0.0.1:1/'), out.error.message);
  });

  test('bad options are a ClipfoldError naming the option, the URL redacted', () => {
    /** @param {any} opts @param {string} field */
    const refused = (opts, field) => assert.throws(() => openaiCompatible(opts),
      (/** @type {any} */ e) => e instanceof ClipfoldError && e.code === 'invalid_input' && e.field === field && !e.message.includes('hunter2'));
    refused({ baseUrl: 'ftp://me:hunter2@x' }, 'baseUrl');
    refused({ baseUrl: 42 }, 'baseUrl');
    refused({ apiKey: 7 }, 'apiKey');
    refused({ model: {} }, 'model');
    refused({ timeoutMs: Number.NaN }, 'timeoutMs');
    refused({ timeoutMs: '100' }, 'timeoutMs');
    refused({ headers: { 'x-extra': 1 } }, 'headers');
    refused({ fetch: 'yes' }, 'fetch');
  });
});
