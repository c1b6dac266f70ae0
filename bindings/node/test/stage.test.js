// Staging: large inputs of a main-thread instance go straight into the
// plug-in's memory (src/instance.js #put). Same bytes and errors as the
// Extism-memory path, which worker instances and small inputs take.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compileWasm, PluginInstance, STAGE_MIN, stubHostFunctions, HOST_NAMESPACE } from '../src/index.js';
import { wasmPath } from './helpers/common.js';
import { makeConversation } from './helpers/conversation.js';

describe('staging', () => {
  /** @type {PluginInstance} */ let staged;
  /** @type {PluginInstance} */ let plain;
  before(async () => {
    const module = await compileWasm(wasmPath());
    const functions = { [HOST_NAMESPACE]: stubHostFunctions() };
    staged = new PluginInstance({ module, functions, runInWorker: false });
    plain = new PluginInstance({ module, functions, runInWorker: true }); // workers never stage
    await staged.call('version', '{}'); // the first call is never staged
  });
  after(async () => { await staged?.close(); await plain?.close(); });

  const dec = new TextDecoder();
  const big = JSON.stringify({ messages: makeConversation('stage', 400), config: { keep_recent: 5 } });
  const cases = [
    ['split', big],
    ['score', big],
    ['chunk', big],
    ['split', new TextEncoder().encode(big)],
    ['split', JSON.stringify({ messages: makeConversation('small', 3) })],
    ['score', big.slice(0, -1)],
    ['split', big.replace('"role":"assistant"', '"role":"robot"')],
  ];

  test('outputs and errors match the standard path, twice over', async () => {
    assert.ok(big.length > STAGE_MIN);
    const before = staged.stagedCalls;
    for (let round = 0; round < 2; round++) {
      for (const [name, input] of cases) {
        const want = await plain.call(/** @type {string} */ (name), input).then((b) => dec.decode(b), (e) => e);
        const got = await staged.call(/** @type {string} */ (name), input).then((b) => dec.decode(b), (e) => e);
        if (want instanceof Error) {
          assert.ok(got instanceof Error, `${name}: staged call succeeded where the standard path failed`);
          assert.equal(got.message, want.message);
          assert.equal(/** @type {any} */ (got).code, /** @type {any} */ (want).code);
        } else {
          assert.ok(!(got instanceof Error), `${name}: ${got}`);
          assert.ok(want.length > 0);
          assert.equal(got, want);
        }
      }
    }
    assert.equal(staged.stagedCalls - before, 2 * (cases.length - 1), 'every large input was staged');
    assert.equal(plain.stagedCalls, 0);
  });
});

describe('memory bound', () => {
  test('an instance left above maxMemory is replaced and answers the same', async () => {
    const module = await compileWasm(wasmPath());
    const inst = new PluginInstance({ module, functions: { [HOST_NAMESPACE]: stubHostFunctions() }, runInWorker: false, maxMemory: 4 * 1024 * 1024 });
    try {
      const small = JSON.stringify({ messages: makeConversation('small', 3) });
      await inst.call('split', small);
      const big = JSON.stringify({ messages: makeConversation('big', 6000) });
      const a = new TextDecoder().decode(await inst.call('split', big));
      assert.ok(inst.replaced >= 1, 'a split of 6000 messages needs more than 4 MiB');
      const b = new TextDecoder().decode(await inst.call('split', big));
      assert.equal(b, a);
      assert.ok((await inst.wasmMemoryBytes()) !== null);
    } finally {
      await inst.close();
    }
  });
});
