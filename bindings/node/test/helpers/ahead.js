// Compaction ahead of time in an adapter's run, watched: a compactor that
// summarizes through an OpenAI-compatible summarizer on a real node:http
// server, held (gated) until the agent's model is called while it holds a
// request, and whose compactAhead answers are recorded. The fake model of
// each framework calls modelCall() at every model call, which lasts, as a
// provider's call does, as long as a summarizer request of a compaction in
// the background: the first one after a compaction started until the
// summarizer holds its request, which it then lets through; later ones
// until the summarizer answers one more (none when nothing is under way).
import assert from 'node:assert/strict';
import { createCompactor, openaiCompatible } from '../../src/index.js';
import { wasmPath } from './common.js';
import { summarizer } from './summarizer.js';

/**
 * @param {{store: any, config: object}} o
 */
export async function watchedAhead(o) {
  const s = await summarizer({ gated: true });
  const compactor = await createCompactor({
    wasmPath: wasmPath(), store: o.store, config: o.config, llm: openaiCompatible({ baseUrl: s.url, apiKey: 'k', model: 'm' }),
  });
  /** @type {(import('../../src/index.js').AheadResult & {modelCalls: number})[]} every compactAhead answer, with the model calls made before it */
  const results = [];
  let modelCalls = 0;
  /** the model call that found the summarizer holding a request, and let it answer */
  let heldAt = 0;
  /** @type {'model' | 'guard' | null} */
  let releasedBy = null;
  const real = compactor.compactAhead;
  compactor.compactAhead = async (conversationId, history, opts) => {
    // Liveness only: a call that waits for the held summarizer (a compaction at the limit) lets it answer after a
    // while, and check() then fails; nothing is asserted on the time.
    const guard = setTimeout(() => {
      if (releasedBy === null) {
        releasedBy = 'guard';
        s.release();
      }
    }, 5000);
    try {
      const r = await real(conversationId, history, opts);
      results.push({ ...r, modelCalls });
      return r;
    } finally {
      clearTimeout(guard);
    }
  };
  return {
    compactor,
    summarizer: s,
    results,
    /** At each model call (see the module comment). */
    async modelCall() {
      await new Promise((resolve) => setImmediate(resolve));
      modelCalls++;
      if (releasedBy !== null) {
        await Promise.race([s.nextAnswer(), compactor.aheadSettled()]);
        return;
      }
      if (!results.some((r) => r.started)) return;
      const held = await Promise.race([s.requested().then(() => true), compactor.aheadSettled().then(() => false)]);
      if (held) {
        heldAt = modelCalls;
        releasedBy = 'model';
        s.release();
      }
    },
    /**
     * Asserts that a compaction started in the background, that the model
     * was called while the summarizer worked on it, that it was applied on
     * a later call, and that no check answered a history over the limit.
     * Returns what happened, counted.
     */
    check() {
      const started = results.findIndex((r) => r.started);
      assert.ok(started >= 0, 'no compaction started in the background');
      assert.equal(releasedBy, 'model', 'the model was called while the summarizer held the request of the compaction started in the background');
      const applied = results.findIndex((r) => r.prepared && r.compaction !== null && !r.compaction.failed && r.compaction.messages_compressed > 0);
      assert.ok(applied > started, `a prepared compaction applied after the call that started it (started at ${started}, applied at ${applied})`);
      assert.ok(results[applied].modelCalls >= heldAt && heldAt > results[started].modelCalls,
        'the model was called between the start and the application');
      for (const [i, r] of results.entries()) assert.ok(r.tokens <= r.limit, `check ${i}: ${r.tokens} tokens > ${r.limit}`);
      return {
        checks: results.length,
        started: results.filter((r) => r.started).length,
        prepared: results.filter((r) => r.prepared).length,
        compactedNow: results.filter((r) => r.compaction !== null && !r.prepared).length,
        waited: results.filter((r) => r.waited_ms > 0).length,
        discarded: results.filter((r) => r.discarded !== null).map((r) => r.discarded),
        summarizerCalls: s.calls,
      };
    },
    async close() {
      s.release();
      await compactor.close();
      await s.close();
    },
  };
}
