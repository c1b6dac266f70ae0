import assert from 'node:assert/strict';
import { MemoryStore, offlineLLM } from '../../src/index.js';
import { rawArrayItems } from './rawjson.js';

/**
 * A short deterministic summary of a summarization request, so that the
 * fault-injection tests do not depend on the summarizer's quality.
 * @param {any} req
 */
export function stubSummary(req) {
  const msgs = (req.messages ?? []).filter((/** @type {any} */ m) => m.role !== 'system');
  const first = String(typeof msgs[0]?.content === 'string' ? msgs[0].content : '').slice(0, 60);
  return { content: [{ type: 'text', text: `Summary of ${msgs.length - 1} messages, starting: ${first}` }], stop_reason: 'end_turn',
    usage: { input_tokens: 0, output_tokens: 0 } };
}

/**
 * An llm whose behaviour each test sets: `plan(n, req)` may return an
 * error object (or throw) for the n-th call (1-based) of the current case;
 * anything else is answered by stubSummary, or by the offline summarizer
 * with `{offline: true}`.
 * @param {{offline?: boolean}} [o]
 */
export function controllableLLM(o = {}) {
  const inner = offlineLLM();
  const ctl = {
    calls: 0,
    /** @type {(n: number, req: any) => any} */
    plan: () => undefined,
    reset() { ctl.calls = 0; ctl.plan = () => undefined; },
    llm: {
      /** @param {any} p */
      bindPlugin(p) { inner.bindPlugin(p); },
      /** @param {any} req */
      async complete(req) {
        ctl.calls++;
        const injected = await ctl.plan(ctl.calls, req);
        if (injected !== undefined) return injected;
        return o.offline ? inner.complete(req) : stubSummary(req);
      },
    },
  };
  return ctl;
}

/**
 * A MemoryStore whose list/commit a test may replace for one case.
 */
export function controllableStore() {
  const ctl = {
    store: new MemoryStore(),
    /** @type {((req: any, real: MemoryStore) => any) | null} */
    list: null,
    /** @type {((req: any, real: MemoryStore) => any) | null} */
    commit: null,
    reset() { ctl.store = new MemoryStore(); ctl.list = null; ctl.commit = null; },
    api: {
      /** @param {any} req */
      list: async (req) => (ctl.list ? ctl.list(req, ctl.store) : ctl.store.list(req)),
      /** @param {any} req */
      commit: async (req) => (ctl.commit ? ctl.commit(req, ctl.store) : ctl.store.commit(req)),
      /** @param {string} id */
      history: (id) => ctl.store.history(id),
    },
  };
  return ctl;
}

const dec = new TextDecoder();

/**
 * Runs compress with exact input bytes; returns the input text, the
 * output text and the parsed result.
 * @param {any} c compactor
 * @param {string} conversationId
 * @param {any[]} history
 * @param {Record<string, unknown>} [extra] config, dry_run, now, …
 */
export async function compressRaw(c, conversationId, history, extra = {}) {
  const input = JSON.stringify({ conversation_id: conversationId, history, ...extra });
  const out = dec.decode(await c.callRaw('compress', input));
  return { input, out, result: JSON.parse(out) };
}

/**
 * The failure guarantee: the output history is the input history, byte
 * for byte.
 * @param {string} input
 * @param {string} out
 */
export function assertHistoryUnchanged(input, out) {
  const a = rawArrayItems(input, 'history');
  const b = rawArrayItems(out, 'history');
  assert.equal(b.length, a.length, 'history length changed');
  for (let i = 0; i < a.length; i++) assert.equal(b[i], a[i], `history[${i}] differs byte-for-byte`);
}
