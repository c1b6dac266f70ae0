// An OpenAI-compatible summarizer on a real node:http server, for tests:
// it answers each chat completion after `latencyMs` (or once released,
// when gated), with a short summary of what it was sent, cut at the
// request's max_tokens as a model would, and counts the requests;
// requested() resolves once it holds a request it has not answered,
// nextAnswer() once it has answered one more.
import { createServer } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * @param {{latencyMs?: number, gated?: boolean}} [o]
 */
export async function summarizer(o = {}) {
  /** @type {() => void} */
  let open = () => {};
  /** @type {Promise<void> | null} */
  let gate = o.gated ? new Promise((r) => { open = () => r(); }) : null;
  /** @type {(() => void)[]} */
  let waiting = [];
  /** @type {(() => void)[]} */
  let answering = [];
  const s = {
    url: '',
    calls: 0,
    answered: 0,
    /** @returns {Promise<void>} resolves when a request is in and not answered yet */
    requested() {
      if (s.calls > s.answered) return Promise.resolve();
      return new Promise((r) => { waiting.push(r); });
    },
    /** @returns {Promise<void>} resolves when the next answer is sent */
    nextAnswer() {
      return new Promise((r) => { answering.push(r); });
    },
    /** Lets the gated requests (and every later one) through. */
    release() { open(); gate = null; },
    close() {
      s.release();
      server.closeAllConnections();
      return new Promise((r) => server.close(() => r(null)));
    },
  };
  const server = createServer((req, res) => {
    let data = '';
    req.setEncoding('utf8');
    req.on('data', (d) => { data += d; });
    req.on('end', async () => {
      const body = JSON.parse(data);
      const n = ++s.calls;
      for (const w of waiting) w();
      waiting = [];
      if (gate) await gate;
      if (o.latencyMs) await sleep(o.latencyMs);
      const messages = Array.isArray(body.messages) ? body.messages : [];
      const texts = messages.filter((/** @type {any} */ m) => m.role !== 'system' && typeof m.content === 'string').map((/** @type {any} */ m) => m.content);
      const longest = texts.reduce((a, b) => (b.length > a.length ? b : a), '');
      let text = `Summary of ${messages.length} request messages (answer ${n}): ${longest.split(/\s+/).slice(0, 24).join(' ')}`;
      const limit = Number(body.max_tokens ?? body.max_completion_tokens ?? 0);
      if (limit && text.length > 2 * limit) text = text.slice(0, 2 * limit);
      const out = JSON.stringify({
        id: `c${n}`, object: 'chat.completion', created: 0, model: body.model ?? 'm',
        choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 },
      });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
      res.end(out);
      s.answered++;
      for (const w of answering) w();
      answering = [];
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', () => r(null)));
  s.url = `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}`;
  return s;
}
