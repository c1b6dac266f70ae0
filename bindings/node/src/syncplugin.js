/**
 * SyncPlugin: the plug-in's pure exports, called synchronously. The store
 * (sqlite.js) is synchronous, and what it writes and reads is the
 * plug-in's to say (planCommit, planAppend, parseBlocks: hostfuncs/store/SCHEMA.md);
 * @extism/extism only calls exports asynchronously. So the instance runs
 * on a worker thread of its own and the calling thread waits for its
 * answer (Atomics.wait on a shared flag, then receiveMessageOnPort): a call
 * costs a message each way. The worker is made on the first call, and
 * does not keep the process alive. See RATIONALE.md, "The Node store calls
 * the plug-in synchronously".
 * @module
 */
import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';
import { ClipfoldError } from './errors.js';
import { findWasm } from './paths.js';

/** How long a call waits for the worker before it gives up (ms). */
export const SYNC_CALL_TIMEOUT_MS = 120_000;

/**
 * A small valid caller-owned compaction_commit of ordinary prose (a few
 * messages to recall, their batch to the archive): what warming plans
 * (WARM_CALLS) and what a store warming its writes commits on a database
 * of its own (sqlite.js).
 */
export const WARM_COMMIT = (() => {
  const texts = [
    'We decided the retry budget stays at three attempts; the configuration was updated yesterday.',
    'The deployment failed because the connection pool was exhausted while migrations were running.',
    'Searching the logs showed timeouts after the cache layer restarted, so the rollback was approved.',
  ];
  const ids = texts.map((_, i) => `warm-${i}`);
  const role = (/** @type {number} */ i) => (i % 2 ? 'assistant' : 'user');
  const meta = { conversation_id: 'warm', operation_id: 'warm', depth: 0, start: '1970-01-01T00:00:00.000Z', end: '1970-01-01T00:00:00.000Z',
    count: texts.length, source_message_ids: ids, method: 'extractive' };
  return JSON.stringify({
    conversation_id: 'warm', operation_id: 'warm', history_owner: 'caller', archive_deletes: [], remove_message_ids: [],
    archive_writes: [{ label: 'compaction-batch-warm-1970-01-01T00:00:00.000Z', tier: 'archival', reason: 'compaction',
      content: `${JSON.stringify(meta)}\n${texts.join(' ')}` }],
    insert_message: { id: 'warm-clip', role: 'system', content: 'warm' },
    recall_writes: texts.map((t, i) => ({ id: ids[i], role: role(i), content: t, search_text: t, message: { role: role(i), content: t } })),
  });
})();

/**
 * warm()'s calls, a small valid one of each store export: what loads the
 * instance (it is made on its first call) and gets the code they run
 * compiled, so that the store's first real call, inside an agent's turn,
 * does not pay for it (about 130 ms cold, under 15 ms warmed).
 * @type {string[][]}
 */
export const WARM_CALLS = [
  ['planAppend', '{"conversation_id":"warm","messages":[{"id":"w1","role":"user","content":"warm"}]}'],
  ['planCommit', `{"now":0,"commit":${WARM_COMMIT}}`],
  ['parseBlocks', '{"contents":["warm"]}'],
];

const WAITING = 0;
const ANSWERED = 1;

export class SyncPlugin {
  /** @type {string | URL | WebAssembly.Module} */
  #wasm;
  /** @type {{worker: Worker, port: import('node:worker_threads').MessagePort, flag: Int32Array} | null} */
  #w = null;
  #seq = 0;
  #closed = false;

  /**
   * @param {string | URL | WebAssembly.Module} wasm the plug-in: a path, or a compiled module (shared with the worker)
   */
  constructor(wasm) {
    this.#wasm = wasm;
  }

  #worker() {
    if (this.#closed) throw new ClipfoldError('internal', 'the plug-in instance is closed (the compactor that lent it was closed)');
    if (!this.#w) {
      const { port1, port2 } = new MessageChannel();
      const flag = new Int32Array(new SharedArrayBuffer(4));
      const wasm = this.#wasm instanceof URL ? this.#wasm.href : this.#wasm;
      const worker = new Worker(new URL('./syncplugin-worker.js', import.meta.url), {
        workerData: { wasm, port: port2, flag }, transferList: [port2], execArgv: workerExecArgv(),
      });
      worker.unref();
      port1.unref();
      const w = { worker, port: port1, flag };
      // A worker that failed or ended is made again on the next call. A
      // call waiting for it meanwhile is told by the worker as it ends
      // (syncplugin-worker.js), or, when it could not say (killed from
      // outside, out of memory), gives up after SYNC_CALL_TIMEOUT_MS.
      const gone = () => { if (this.#w === w) this.#w = null; };
      worker.on('error', gone);
      worker.on('exit', gone);
      this.#w = w;
    }
    return this.#w;
  }

  /**
   * Calls an export with its JSON input text; returns its output text. A
   * failure the export reports throws a ClipfoldError, as PluginInstance.call.
   * @param {string} name
   * @param {string} input
   * @returns {string}
   */
  call(name, input) {
    const w = this.#worker();
    const id = ++this.#seq;
    Atomics.store(w.flag, 0, WAITING);
    w.port.postMessage({ id, name, input });
    const deadline = Date.now() + SYNC_CALL_TIMEOUT_MS;
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0 || Atomics.wait(w.flag, 0, WAITING, left) === 'timed-out') {
        this.#drop();
        throw new ClipfoldError('internal', `the plug-in failed (${name}) - no answer from its worker in ${SYNC_CALL_TIMEOUT_MS / 1000} s`, { export: name });
      }
      const m = receiveMessageOnPort(w.port);
      if (!m) {
        Atomics.store(w.flag, 0, WAITING);
        continue;
      }
      const r = m.message;
      if (r.id !== id) continue; // the answer to a call that gave up
      if (r.ended) this.#drop(); // the next call makes a new worker
      if (r.error) throw new ClipfoldError(r.error.code, r.error.detail, { export: name, pluginOriginated: r.error.pluginOriginated });
      return r.output;
    }
  }

  /**
   * Starts the worker and loads the plug-in there without waiting for it,
   * so that the first call finds it ready: a compactor's store commits
   * and appends through this instance, and the first would otherwise pay
   * for the worker and the module's instantiation (tens of milliseconds)
   * inside the agent's turn.
   */
  warm() {
    if (this.#closed) return;
    this.#worker().port.postMessage({ warm: WARM_CALLS });
  }

  /**
   * call for JSON values.
   * @param {string} name
   * @param {unknown} input
   * @returns {any}
   */
  callJSON(name, input) {
    return JSON.parse(this.call(name, JSON.stringify(input)));
  }

  #drop() {
    const w = this.#w;
    this.#w = null;
    if (w) {
      w.port.close();
      w.worker.terminate().catch(() => {});
    }
  }

  /** Ends the worker; later calls throw. */
  close() {
    this.#closed = true;
    this.#drop();
  }
}

/**
 * The process's options for the worker, less --input-type: a worker
 * inherits them, and one started from a program run with
 * `node --input-type=module -e` would fail on it before running a line
 * (unseen: the waiting thread cannot take the worker's error event).
 * @returns {string[]}
 */
function workerExecArgv() {
  /** @type {string[]} */
  const out = [];
  const args = process.execArgv;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--input-type') i++;
    else if (!args[i].startsWith('--input-type=')) out.push(args[i]);
  }
  return out;
}

/** @type {SyncPlugin | null} */
let shared = null;

/**
 * One SyncPlugin of the plug-in findWasm() finds, for the process: what a
 * store that no compactor lent a plug-in uses. Made on first use.
 * @returns {SyncPlugin}
 */
export function sharedSyncPlugin() {
  shared ??= new SyncPlugin(findWasm());
  return shared;
}
