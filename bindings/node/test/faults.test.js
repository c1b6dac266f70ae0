// The fault-injection matrix (docs/spec.md#nothing-is-lost): fail each host call in
// turn — the 1st, 2nd, … llm_complete, memory_list, compaction_commit with
// an error and with a conflict — and check that the returned history is
// the input byte for byte, `failed: true` with the right failure_code, and
// the store is exactly as before.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createCompactor } from '../src/index.js';
import { requireExports, wasmPath } from './helpers/common.js';
import { makeConversation } from './helpers/conversation.js';
import { assertHistoryUnchanged, compressRaw, controllableLLM, controllableStore } from './helpers/harness.js';

// No breaker trips inside the matrix: every case uses its own conversation.
const CONFIG = { keep_recent: 6, chunk_size: 10, backoff_base_ms: 1, compaction_max_retries: 2 };
const SIZE = 60;

const err = (/** @type {string} */ code, retryable = false) => ({ error: { code, message: `injected ${code}`, retryable } });

describe('fault injection', () => {
  const llm = controllableLLM();
  const st = controllableStore();
  /** @type {string[]} */
  let trace = [];
  /** @type {Awaited<ReturnType<typeof createCompactor>>} */
  let c;
  let seq = 0;
  let baselineLLMCalls = 0;

  before(async () => {
    requireExports('compress');
    c = await createCompactor({ wasmPath: wasmPath(), llm: llm.llm, store: st.api, onHostCall: (e) => trace.push(e.name) });
    // Baseline: how many llm_complete calls one compaction makes.
    const conv = 'baseline';
    st.store.append(conv, makeConversation(conv, SIZE));
    const { result } = await compressRaw(c, conv, st.store.history(conv), { config: CONFIG, dry_run: true });
    assert.equal(result.failed, false, `baseline failed: ${result.failure_code} ${result.failure_message}`);
    baselineLLMCalls = result.llm_calls;
    assert.ok(baselineLLMCalls >= 3, `baseline made only ${baselineLLMCalls} llm calls`);
  });
  after(async () => { await c?.close(); });

  /**
   * One case: a fresh conversation and store, the injection, one compress.
   * @param {() => void} inject
   * @param {{seedMissing?: boolean}} [o]
   */
  async function runCase(inject, o = {}) {
    st.reset();
    llm.reset();
    trace = [];
    const conv = `fault-${++seq}`;
    const history = makeConversation(conv, SIZE);
    // seedMissing: the store lacks one old message (another compaction
    // removed it): the commit must then be a real conflict.
    st.store.append(conv, o.seedMissing ? history.filter((_, i) => i !== 1) : history);
    inject();
    const snapshot = st.store.snapshot();
    const run = await compressRaw(c, conv, history, { config: CONFIG });
    assert.equal(run.result.failed, true, 'the compaction did not fail');
    assertHistoryUnchanged(run.input, run.out);
    assert.deepEqual(st.store.snapshot(), snapshot, 'the store changed');
    assert.deepEqual(run.result.batches, []);
    assert.equal(run.result.messages_compressed, 0);
    return run.result;
  }

  test('the matrix covers every llm call of a compaction', (t) => {
    t.diagnostic(`one compaction of ${SIZE} messages makes ${baselineLLMCalls} llm_complete calls`);
    assert.ok(baselineLLMCalls > 0);
  });

  test('a failed re-summarization is not fatal: the new batches are committed, with a warning', async () => {
    st.reset();
    llm.reset();
    const conv = 'resummary';
    st.store.append(conv, makeConversation(conv, 80));
    const cfg = { ...CONFIG, chunk_size: 5 };
    // Find the re-summarization request: the one made of "Summary batch:" messages.
    const isResummary = (/** @type {any} */ req) => req.messages.some((/** @type {any} */ m) => typeof m.content === 'string' && m.content.startsWith('Summary batch:\n'));
    let resummaries = 0;
    llm.plan = (_n, req) => (isResummary(req) ? (resummaries++, err('invalid_request')) : undefined);
    const { result } = await compressRaw(c, conv, st.store.history(conv), { config: cfg });
    assert.ok(resummaries >= 1, 'no re-summarization was attempted');
    assert.equal(result.failed, false, `${result.failure_code} ${result.failure_message}`);
    assert.ok(result.warnings.length > 0, 'no warning');
    assert.ok(result.batches.length > 6, `only ${result.batches.length} batches`);
    assert.ok(result.batches.every((/** @type {any} */ b) => b.depth === 0));
    assert.deepEqual(st.store.history(conv), result.history);
  });

  // Each llm_complete in turn, with a non-retryable error, a thrown
  // exception and a rejected promise: llm_failed, no retry.
  const kinds = /** @type {const} */ ([
    ['a non-retryable error', () => err('invalid_request')],
    ['a thrown exception', () => { throw new Error('boom'); }],
    ['a rejected promise', () => Promise.reject(new Error('network gone'))],
  ]);
  for (const [kind, make] of kinds) {
    test(`llm_complete #k fails with ${kind}: llm_failed, for every k`, async () => {
      for (let k = 1; k <= baselineLLMCalls; k++) {
        const r = await runCase(() => { llm.plan = (n) => (n === k ? make() : undefined); });
        assert.equal(r.failure_code, 'llm_failed', `k=${k}: ${r.failure_code} ${r.failure_message}`);
        assert.equal(llm.calls, k, `k=${k}: a non-retryable failure was retried or the pipeline went on`);
        assert.ok(!trace.includes('compaction_commit'), `k=${k}: committed`);
      }
    });
  }

  test('llm_complete keeps failing with a retryable error: llm_failed after compaction_max_retries retries', async () => {
    for (let k = 1; k <= baselineLLMCalls; k++) {
      const r = await runCase(() => { llm.plan = (n) => (n >= k ? err('rate_limited', true) : undefined); });
      assert.equal(r.failure_code, 'llm_failed', `k=${k}`);
      assert.equal(llm.calls, k + CONFIG.compaction_max_retries, `k=${k}: retries`);
    }
  });

  test('llm_complete keeps timing out: llm_timeout', async () => {
    for (let k = 1; k <= baselineLLMCalls; k++) {
      const r = await runCase(() => { llm.plan = (n) => (n >= k ? err('timeout', true) : undefined); });
      assert.equal(r.failure_code, 'llm_timeout', `k=${k}: ${r.failure_code} ${r.failure_message}`);
    }
  });

  test('llm_complete answers an empty summary every time: a failure, never an empty batch', async () => {
    const r = await runCase(() => { llm.plan = () => ({ content: [{ type: 'text', text: '' }], stop_reason: 'end_turn' }); });
    assert.ok(['llm_failed', 'invalid_summary'].includes(r.failure_code), r.failure_code);
  });

  test('one retryable failure at each k is retried and the compaction succeeds', async () => {
    for (let k = 1; k <= baselineLLMCalls; k++) {
      st.reset();
      llm.reset();
      const conv = `retry-${k}`;
      st.store.append(conv, makeConversation(conv, SIZE));
      llm.plan = (n) => (n === k ? err('unavailable', true) : undefined);
      const { result } = await compressRaw(c, conv, st.store.history(conv), { config: CONFIG });
      assert.equal(result.failed, false, `k=${k}: ${result.failure_code} ${result.failure_message}`);
      assert.equal(result.llm_calls, baselineLLMCalls + 1, `k=${k}`);
      assert.deepEqual(st.store.history(conv), result.history);
    }
  });

  test('memory_list fails: host_error', async () => {
    for (const make of [() => err('unavailable', true), () => { throw new Error('db down'); }]) {
      const r = await runCase(() => { st.list = make; });
      assert.equal(r.failure_code, 'host_error', `${r.failure_code} ${r.failure_message}`);
      assert.ok(!trace.includes('compaction_commit'));
    }
  });

  test('memory_list answers garbage: host_error', async () => {
    const r = await runCase(() => { st.list = () => ({ blocks: 'not a list' }); });
    assert.equal(r.failure_code, 'host_error', `${r.failure_code} ${r.failure_message}`);
  });

  test('compaction_commit fails with an error: host_error', async () => {
    for (const make of [() => err('unavailable', true), () => { throw new Error('disk full'); }]) {
      const r = await runCase(() => { st.commit = make; });
      assert.equal(r.failure_code, 'host_error', `${r.failure_code} ${r.failure_message}`);
      assert.equal(trace.filter((n) => n === 'compaction_commit').length, 1, 'the commit is attempted exactly once');
    }
  });

  test('compaction_commit answers conflict: commit_conflict', async () => {
    const r = await runCase(() => { st.commit = () => err('conflict'); });
    assert.equal(r.failure_code, 'commit_conflict', `${r.failure_code} ${r.failure_message}`);
  });

  test('a real conflict (a message to remove is already gone) changes nothing: commit_conflict', async () => {
    const r = await runCase(() => {}, { seedMissing: true });
    assert.equal(r.failure_code, 'commit_conflict', `${r.failure_code} ${r.failure_message}`);
  });

  test('the breaker opens after max_consecutive_failures and then calls nothing', async () => {
    st.reset();
    llm.reset();
    const conv = 'breaker';
    const history = makeConversation(conv, SIZE);
    st.store.append(conv, history);
    llm.plan = () => err('auth');
    const cfg = { ...CONFIG, max_consecutive_failures: 2, breaker_cooldown_ms: 3_600_000 };
    for (let i = 1; i <= 2; i++) {
      const { result } = await compressRaw(c, conv, history, { config: cfg });
      assert.equal(result.failure_code, 'llm_failed');
      assert.equal(result.consecutive_failures, i);
    }
    trace = [];
    const snapshot = st.store.snapshot();
    const run = await compressRaw(c, conv, history, { config: cfg });
    assert.equal(run.result.failure_code, 'breaker_open');
    assert.deepEqual(trace, [], 'an open breaker called the host');
    assertHistoryUnchanged(run.input, run.out);
    assert.deepEqual(st.store.snapshot(), snapshot);
  });
});
