// The createCompactor API: manifest config, logging, errors, memory reuse.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createCompactor, ClipfoldError, manifestConfig, PluginInstance, compileWasm, stubHostFunctions, HOST_NAMESPACE } from '../src/index.js';
import { requireExports, wasmPath } from './helpers/common.js';
import { makeConversation } from './helpers/conversation.js';
import { assertHistoryUnchanged, compressRaw, controllableLLM, controllableStore } from './helpers/harness.js';

/** The exports of docs/spec.md#exports this build must have. */
const SPEC_EXPORTS = ['score', 'split', 'chunk', 'estimateTokens', 'buildSummarizationRequest', 'buildResummarizationRequest',
  'buildClipArchive', 'providerRequest', 'providerResponse', 'shouldCompact', 'compress', 'version'];

describe('createCompactor', () => {
  /** @type {[string, string][]} */
  const logs = [];
  /** @type {Awaited<ReturnType<typeof createCompactor>>} */
  let c;
  before(async () => {
    c = await createCompactor({ wasmPath: wasmPath(), config: { keep_recent: 2, no_such_key: 1 }, onLog: (l, m) => logs.push([l, m]) });
  });
  after(async () => { await c?.close(); });

  test('manifestConfig turns values into strings, lists into JSON', () => {
    assert.deepEqual(manifestConfig({ keep_recent: 2, pin_system: false, important_keywords: ['a', 'b'], prompt: null }),
      { keep_recent: '2', pin_system: 'false', important_keywords: '["a","b"]' });
  });

  test('the manifest config is the default; a call config overrides it', async () => {
    const h = makeConversation('cfg', 12);
    assert.equal((await c.split(h)).to_keep.filter((/** @type {any} */ m) => m.role !== 'system').length, 2);
    assert.equal((await c.split(h, { keep_recent: 4 })).to_keep.filter((/** @type {any} */ m) => m.role !== 'system').length, 4);
  });

  test('pure exports answer through the API', async () => {
    assert.deepEqual(await c.estimateTokens('abcdefgh'), { tokens: 2 });
    assert.equal((await c.version()).abi, 1);
    // Every export of docs/spec.md#exports is there (and the build's own list agrees).
    for (const name of SPEC_EXPORTS) assert.ok(c.exports.includes(name), `the plug-in does not export ${name}`);
    requireExports(...SPEC_EXPORTS);
    assert.equal((await c.chunk(makeConversation('ch', 30), { chunk_size: 7 })).chunks[0].length, 7);
  });

  test('errors are ClipfoldErrors with code, field and message', async () => {
    await assert.rejects(c.callRaw('score', '{"messages": ['), (/** @type {any} */ e) =>
      e instanceof ClipfoldError && e.code === 'invalid_json' && e.message.startsWith('invalid_json: '));
    await assert.rejects(c.score(/** @type {any} */ ([{ role: 'user', content: 'a' }, { role: 'x', content: 'b' }])), (/** @type {any} */ e) =>
      e instanceof ClipfoldError && e.code === 'invalid_input' && e.field === 'messages[1].role' && e.message.startsWith('invalid_input: messages[1].role: '));
    await assert.rejects(c.callRaw('noSuchExport', '{}'), (/** @type {any} */ e) => e instanceof ClipfoldError && e.code === 'internal');
    // The instance still answers after errors.
    assert.equal((await c.score([{ role: 'user', content: 'a' }])).scores.length, 1);
  });

  test('a Uint8Array view (subarray, pooled Buffer) is read as its own bytes, not its whole buffer', async () => {
    // @extism/extism 1.0.3 stores a Uint8Array's whole ArrayBuffer
    // (ignoring byteOffset and length): the instance copies views first.
    const json = JSON.stringify({ text: 'abcdefgh' });
    const padded = new TextEncoder().encode(`XXXXXXXX${json}YYYYYYYYYYYYYYYY`);
    const view = padded.subarray(8, 8 + json.length);
    assert.notEqual(view.byteOffset, 0);
    const dec = new TextDecoder();
    assert.deepEqual(JSON.parse(dec.decode(await c.callRaw('estimateTokens', view))), { tokens: 2 });
    // A small Node Buffer is a view into a shared pool.
    const pooled = Buffer.from(JSON.stringify({ messages: [{ role: 'user', content: 'a?' }] }));
    assert.ok(pooled.byteLength < pooled.buffer.byteLength, 'Buffer.from of a short string is pooled');
    assert.equal(JSON.parse(dec.decode(await c.callRaw('score', pooled))).scores.length, 1);
    // A view at offset 0 that is shorter than its buffer, and the input left untouched.
    const head = new TextEncoder().encode(`${json}  trailing garbage`).subarray(0, json.length);
    assert.deepEqual(JSON.parse(dec.decode(await c.callRaw('estimateTokens', head))), { tokens: 2 });
    assert.equal(dec.decode(view), json);
  });

  test('the plug-in\'s warnings reach onLog', async () => {
    await c.split(makeConversation('w', 12), /** @type {any} */ ({ no_such_key: 1 }));
    assert.ok(logs.some(([l, m]) => l === 'warn' && m.includes('no_such_key')), JSON.stringify(logs));
  });

  test('memory does not grow with the number of calls', async () => {
    setFlagsFromString('--expose_gc');
    const gc = runInNewContext('gc');
    const inst = new PluginInstance({ module: await compileWasm(wasmPath()), runInWorker: false, functions: { [HOST_NAMESPACE]: stubHostFunctions() } });
    try {
      const input = JSON.stringify({ messages: makeConversation('mem', 400) });
      // Host-side memory: every array buffer except the Wasm linear memory
      // (the Go heap may grow). A leak of Extism blocks would add ~30 MB
      // per 100 calls.
      const batch = async () => {
        for (let i = 0; i < 100; i++) await inst.call('split', input);
        // Array buffers are freed by a concurrent sweeper after a GC.
        for (let i = 0; i < 3; i++) { gc(); await new Promise((r) => setTimeout(r, 20)); }
        return process.memoryUsage().arrayBuffers - /** @type {number} */ (await inst.wasmMemoryBytes());
      };
      const m1 = await batch();
      const m2 = await batch();
      const grown = m2 - m1;
      assert.ok(grown < 8e6, `host array buffers grew by ${(grown / 1e6).toFixed(1)} MB over 100 calls`);
    } finally {
      await inst.close();
    }
  });
});

describe('deadline', () => {
  test('every llm request carries timeout_ms within compaction_timeout, and nothing outlives the deadline', async () => {
    requireExports('compress');
    const llm = controllableLLM();
    const st = controllableStore();
    const c = await createCompactor({ wasmPath: wasmPath(), llm: llm.llm, store: st.api });
    try {
      /** @type {number[]} */
      const seen = [];
      // A server that never answers: the adapter gives up at timeout_ms.
      llm.plan = async (_n, req) => {
        seen.push(req.timeout_ms);
        await new Promise((r) => setTimeout(r, req.timeout_ms));
        return { error: { code: 'timeout', message: 'no answer', retryable: true } };
      };
      const conv = 'deadline';
      const history = makeConversation(conv, 60);
      st.store.append(conv, history);
      const snapshot = st.store.snapshot();
      const t0 = performance.now();
      const run = await compressRaw(c, conv, history, { config: { keep_recent: 6, chunk_size: 10, compaction_timeout: 400, backoff_base_ms: 1 } });
      const ms = performance.now() - t0;
      assert.equal(run.result.failed, true);
      assert.ok(['llm_timeout', 'deadline_exceeded'].includes(run.result.failure_code), run.result.failure_code);
      assert.ok(seen.length > 0 && seen.every((t) => t > 0 && t <= 400), JSON.stringify(seen));
      assert.ok(ms < 400 + 1500, `took ${ms} ms`);
      assertHistoryUnchanged(run.input, run.out);
      assert.deepEqual(st.store.snapshot(), snapshot);
    } finally {
      await c.close();
    }
  });
});
