// The OpenAI-compatible llm_complete adapter against a local node:http
// server speaking the chat-completions wire format.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { ClipfoldError, openaiCompatible, endpoint } from '../src/index.js';

/**
 * @typedef {{method: string, url: string, headers: import('node:http').IncomingHttpHeaders, body: any}} Seen
 * @typedef {(req: Seen, res: import('node:http').ServerResponse) => void} Handler
 */

/** A chat-completions server whose next answers the test decides. */
function fakeOpenAI() {
  /** @type {Seen[]} */
  const seen = [];
  /** @type {Handler} */
  let handler = (_req, res) => ok(res, 'a summary');
  const server = createServer((req, res) => {
    let data = '';
    req.setEncoding('utf8');
    req.on('data', (d) => { data += d; });
    req.on('end', () => {
      let body;
      try { body = JSON.parse(data); } catch { body = data; }
      const s = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      seen.push(s);
      handler(s, res);
    });
  });
  return {
    seen,
    /** @param {Handler} h */
    on(h) { handler = h; },
    async listen() {
      await new Promise((r) => server.listen(0, '127.0.0.1', () => r(null)));
      const a = /** @type {import('node:net').AddressInfo} */ (server.address());
      return `http://127.0.0.1:${a.port}`;
    },
    close() {
      server.closeAllConnections();
      return new Promise((r) => server.close(() => r(null)));
    },
  };
}

/**
 * @param {import('node:http').ServerResponse} res
 * @param {number} status
 * @param {unknown} body
 */
function send(res, status, body) {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** A real chat.completion body. */
function completion(text, finish = 'stop') {
  return {
    id: 'chatcmpl-abc123', object: 'chat.completion', created: 1772272800, model: 'gpt-4o-mini-2024-07-18',
    choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null }, logprobs: null, finish_reason: finish }],
    usage: { prompt_tokens: 123, completion_tokens: 45, total_tokens: 168 },
    system_fingerprint: 'fp_0123456789',
  };
}

/** @param {import('node:http').ServerResponse} res @param {string} text */
function ok(res, text) { send(res, 200, completion(text)); }

const REQUEST = {
  system: 'You are summarizing.',
  messages: [
    { role: 'system', content: 'Previous summary of conversation:\nWe chose Postgres.' },
    { role: 'user', content: 'The build fails on main.go' },
    { role: 'assistant', content: [{ type: 'text', text: 'Looking' }, { type: 'text', text: 'at it' }] },
    { role: 'user', content: '   ' },
    { role: 'user', content: 'Summarize the conversation above.' },
  ],
  model: 'gpt-4o-mini', max_tokens: 512, temperature: 0, timeout_ms: 5000,
};

const ERRORS = {
  rateLimit: { status: 429, body: { error: { message: 'Rate limit reached for gpt-4o-mini in organization org-x on tokens per min (TPM): Limit 200000, Used 199000, Requested 2000.', type: 'tokens', param: null, code: 'rate_limit_exceeded' } } },
  quota: { status: 429, body: { error: { message: 'You exceeded your current quota, please check your plan and billing details.', type: 'insufficient_quota', param: null, code: 'insufficient_quota' } } },
  server: { status: 500, body: { error: { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', param: null, code: null } } },
  badGateway: { status: 502, body: '<html><body><h1>502 Bad Gateway</h1></body></html>' },
  unavailable: { status: 503, body: { error: { message: 'The engine is currently overloaded, please try again later', type: 'server_error', param: null, code: null } } },
  auth: { status: 401, body: { error: { message: 'Incorrect API key provided: sk-abc. You can find your API key at https://platform.openai.com/account/api-keys.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } } },
  forbidden: { status: 403, body: { error: { message: 'Project proj_x does not have access to model gpt-5', type: 'invalid_request_error', param: null, code: 'model_not_found' } } },
  context: { status: 400, body: { error: { message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. Please reduce the length of the messages.", type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' } } },
  contextLlamaCpp: { status: 400, body: { error: { code: 400, message: 'the request exceeds the available context size, try increasing it', type: 'exceed_context_size_error', n_prompt_tokens: 9000, n_ctx: 8192 } } },
  invalid: { status: 400, body: { error: { message: "Invalid value for 'temperature': must be between 0 and 2.", type: 'invalid_request_error', param: 'temperature', code: 'invalid_value' } } },
};

describe('openaiCompatible', () => {
  const srv = fakeOpenAI();
  let base = '';
  before(async () => { base = await srv.listen(); });
  after(() => srv.close());

  test('endpoint never doubles /v1', () => {
    assert.equal(endpoint('http://h:1', '/v1/chat/completions'), 'http://h:1/v1/chat/completions');
    assert.equal(endpoint('http://h:1/', '/v1/chat/completions'), 'http://h:1/v1/chat/completions');
    assert.equal(endpoint('http://h:1/v1', '/v1/chat/completions'), 'http://h:1/v1/chat/completions');
    assert.equal(endpoint('http://h:1/v1/', '/v1/chat/completions'), 'http://h:1/v1/chat/completions');
    assert.equal(endpoint('https://openrouter.ai/api/v1', '/v1/chat/completions'), 'https://openrouter.ai/api/v1/chat/completions');
  });

  for (const [label, suffix] of [['root base URL', ''], ['base URL ending in /v1', '/v1'], ['trailing slash', '/v1/']]) {
    test(`POSTs the chat-completions request (${label})`, async () => {
      srv.seen.length = 0;
      srv.on((_r, res) => ok(res, 'We chose Postgres; the build failure in main.go is being fixed.'));
      const llm = openaiCompatible({ baseUrl: base + suffix, apiKey: 'sk-test', model: 'default-model' });
      const out = await llm.complete(structuredClone(REQUEST));
      assert.deepEqual(out, {
        content: [{ type: 'text', text: 'We chose Postgres; the build failure in main.go is being fixed.' }],
        stop_reason: 'end_turn', usage: { input_tokens: 123, output_tokens: 45 },
      });
      assert.equal(srv.seen.length, 1);
      const s = srv.seen[0];
      assert.equal(s.method, 'POST');
      assert.equal(s.url, '/v1/chat/completions');
      assert.equal(s.headers.authorization, 'Bearer sk-test');
      assert.equal(s.headers['content-type'], 'application/json');
      assert.deepEqual(s.body, {
        model: 'gpt-4o-mini',
        messages: [
          { role: 'system', content: 'You are summarizing.' },
          { role: 'system', content: 'Previous summary of conversation:\nWe chose Postgres.' },
          { role: 'user', content: 'The build fails on main.go' },
          { role: 'assistant', content: 'Looking\nat it' },
          { role: 'user', content: 'Summarize the conversation above.' },
        ],
        max_tokens: 512,
        temperature: 0,
      });
    });
  }

  test('no key: no Authorization header; the default model fills an empty one', async () => {
    srv.seen.length = 0;
    const llm = openaiCompatible({ baseUrl: base, apiKey: '', model: 'local-model' });
    const out = await llm.complete({ ...structuredClone(REQUEST), model: '' });
    assert.ok(!('error' in out));
    assert.equal(srv.seen[0].headers.authorization, undefined);
    assert.equal(srv.seen[0].body.model, 'local-model');
  });

  test('finish_reason length maps to max_tokens; null content is empty text', async () => {
    srv.on((_r, res) => send(res, 200, { ...completion(''), choices: [{ index: 0, message: { role: 'assistant', content: null }, finish_reason: 'length' }] }));
    const out = await openaiCompatible({ baseUrl: base, apiKey: 'k' }).complete(structuredClone(REQUEST));
    assert.deepEqual(/** @type {any} */ (out).content, [{ type: 'text', text: '' }]);
    assert.equal(/** @type {any} */ (out).stop_reason, 'max_tokens');
  });

  const expectations = /** @type {const} */ ([
    ['rateLimit', 'rate_limited', true],
    ['quota', 'rate_limited', false],
    ['server', 'unavailable', true],
    ['badGateway', 'unavailable', true],
    ['unavailable', 'unavailable', true],
    ['auth', 'auth', false],
    ['forbidden', 'auth', false],
    ['context', 'context_overflow', false],
    ['contextLlamaCpp', 'context_overflow', false],
    ['invalid', 'invalid_request', false],
  ]);
  for (const [name, code, retryable] of expectations) {
    test(`HTTP ${ERRORS[name].status} (${name}) is ${code}, retryable ${retryable}`, async () => {
      srv.on((_r, res) => send(res, ERRORS[name].status, ERRORS[name].body));
      const out = /** @type {any} */ (await openaiCompatible({ baseUrl: base, apiKey: 'k' }).complete(structuredClone(REQUEST)));
      assert.equal(out.error?.code, code, JSON.stringify(out));
      assert.equal(out.error.retryable, retryable);
      assert.equal(typeof out.error.message, 'string');
      assert.ok(out.error.message.length > 0);
      if (typeof ERRORS[name].body === 'object') {
        assert.equal(out.error.message, /** @type {any} */ (ERRORS[name].body).error.message);
      }
    });
  }

  test('a 200 that is not a chat completion is a non-retryable other', async () => {
    srv.on((_r, res) => send(res, 200, '<html>captive portal</html>'));
    const out = /** @type {any} */ (await openaiCompatible({ baseUrl: base, apiKey: 'k' }).complete(structuredClone(REQUEST)));
    assert.equal(out.error.code, 'other');
    assert.equal(out.error.retryable, false);
  });

  test("request.timeout_ms bounds the call: a slow server is a retryable timeout", async () => {
    /** @type {import('node:http').ServerResponse[]} */
    const pending = [];
    srv.on((_r, res) => { pending.push(res); });
    const llm = openaiCompatible({ baseUrl: base, apiKey: 'k', timeoutMs: 60_000 });
    const t0 = performance.now();
    const out = /** @type {any} */ (await llm.complete({ ...structuredClone(REQUEST), timeout_ms: 150 }));
    const ms = performance.now() - t0;
    assert.equal(out.error.code, 'timeout');
    assert.equal(out.error.retryable, true);
    assert.ok(ms >= 140 && ms < 5000, `took ${ms} ms`);
    for (const r of pending) r.destroy();
  });

  test('the adapter timeout bounds the call when timeout_ms is larger', async () => {
    /** @type {import('node:http').ServerResponse[]} */
    const pending = [];
    srv.on((_r, res) => { pending.push(res); });
    const out = /** @type {any} */ (await openaiCompatible({ baseUrl: base, apiKey: 'k', timeoutMs: 100 })
      .complete({ ...structuredClone(REQUEST), timeout_ms: 60_000 }));
    assert.equal(out.error.code, 'timeout');
    for (const r of pending) r.destroy();
  });

  test('an unreachable server is a retryable unavailable', async () => {
    const dead = fakeOpenAI();
    const url = await dead.listen();
    await dead.close();
    const out = /** @type {any} */ (await openaiCompatible({ baseUrl: url, apiKey: 'k' }).complete(structuredClone(REQUEST)));
    assert.equal(out.error.code, 'unavailable');
    assert.equal(out.error.retryable, true);
    assert.match(out.error.message, /ECONNREFUSED|cannot reach/);
  });

  test('a malformed request is a non-retryable invalid_request without any HTTP call', async () => {
    srv.seen.length = 0;
    const out = /** @type {any} */ (await openaiCompatible({ baseUrl: base, apiKey: 'k' })
      .complete({ system: '', messages: [{ role: /** @type {any} */ ('tool'), content: 'x' }] }));
    assert.equal(out.error.code, 'invalid_request');
    assert.equal(srv.seen.length, 0);
  });

  test('baseUrl must be http(s)', () => {
    assert.throws(() => openaiCompatible({ baseUrl: 'ftp://x' }), (/** @type {any} */ e) => e instanceof ClipfoldError && e.field === 'baseUrl');
  });
});

describe('the wire format is the plug-in\'s (providerRequest / providerResponse)', () => {
  const srv = fakeOpenAI();
  let base = '';
  before(async () => { base = await srv.listen(); });
  after(() => srv.close());

  test('an empty request still sends one message', async () => {
    srv.seen.length = 0;
    srv.on((_r, res) => ok(res, 'x'));
    await openaiCompatible({ baseUrl: base, apiKey: '' }).complete({ system: '', messages: [] });
    assert.deepEqual(srv.seen[0].body, { model: '', messages: [{ role: 'user', content: '(conversation continues)' }], temperature: 0 });
  });
  for (const [status, body, code] of /** @type {const} */ ([
    [400, { error: { message: 'prompt is too long: 201234 tokens > 200000 maximum', type: 'invalid_request_error' } }, 'context_overflow'],
    [413, '', 'context_overflow'],
    [504, '<html>gateway timeout</html>', 'timeout'],
    [418, 'teapot', 'invalid_request'],
    [400, { object: 'error', message: "This model's maximum context length is 4096 tokens.", type: 'BadRequestError', param: null, code: 400 }, 'context_overflow'],
  ])) {
    test(`HTTP ${status} ${JSON.stringify(body).slice(0, 40)} is ${code}`, async () => {
      srv.on((_r, res) => send(res, status, body));
      const out = /** @type {any} */ (await openaiCompatible({ baseUrl: base, apiKey: 'k' }).complete(structuredClone(REQUEST)));
      assert.equal(out.error?.code, code, JSON.stringify(out));
    });
  }
});
