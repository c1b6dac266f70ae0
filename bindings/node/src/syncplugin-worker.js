/**
 * The worker of a SyncPlugin (syncplugin.js): one main-thread instance of
 * the plug-in on this thread, answering each call on the port, then
 * waking the waiting thread through the shared flag.
 * @module
 */
import { workerData } from 'node:worker_threads';
import { ClipfoldError } from './errors.js';
import { HOST_NAMESPACE, stubHostFunctions } from './hostfns.js';
import { compileWasm, PluginInstance } from './instance.js';

const { wasm, port, flag } = /** @type {{wasm: string | WebAssembly.Module, port: import('node:worker_threads').MessagePort, flag: Int32Array}} */ (workerData);
const dec = new TextDecoder();

/** @type {Promise<PluginInstance> | null} */
let instance = null;

/** @returns {Promise<PluginInstance>} */
function plugin() {
  instance ??= compileWasm(wasm).then((module) => new PluginInstance({
    module, runInWorker: false, functions: { [HOST_NAMESPACE]: stubHostFunctions() },
  }));
  instance.catch(() => { instance = null; });
  return instance;
}

/** @param {object} answer */
function reply(answer) {
  port.postMessage(answer);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
}

/** The call being answered: the waiting thread is told if this thread ends first. @type {{id: number, name: string} | null} */
let current = null;

// A worker that ends with a call under way (process.exit in the plug-in's
// thread, an uncaught error) says so to the waiting thread, which would
// otherwise wait for an answer until its timeout. (A worker killed from
// outside, or out of memory, runs no code: that call still times out.)
process.on('exit', (code) => {
  if (current === null) return;
  reply({ id: current.id, ended: true, error: { code: 'internal', detail: `the plug-in failed (${current.name}) - its worker thread ended (exit code ${code}) before answering`, pluginOriginated: false } });
  current = null;
});

port.on('message', async (/** @type {{id: number, name: string, input: string, warm?: string[][]}} */ m) => {
  if (m.warm) {
    try {
      const p = await plugin();
      for (const [name, input] of m.warm) await p.call(name, input).catch(() => {});
    } catch {
      // not loaded: the first call says why
    }
    return;
  }
  current = { id: m.id, name: m.name };
  try {
    const out = await (await plugin()).call(m.name, m.input);
    current = null;
    reply({ id: m.id, output: dec.decode(out) });
  } catch (err) {
    current = null;
    const e = err instanceof ClipfoldError ? err
      : new ClipfoldError('internal', `the plug-in failed (${m.name}) - ${err instanceof Error ? err.message : String(err)}`);
    reply({ id: m.id, error: { code: e.code, detail: e.detail, pluginOriginated: e.pluginOriginated } });
  }
});
