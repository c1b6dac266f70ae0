/**
 * One clipfold plug-in instance behind @extism/extism: calls are
 * serialized (an instance is not re-entrant), Extism memory is reset after
 * every call (the JS SDK keeps every block until a reset), and an instance
 * that trapped is thrown away and made again on the next call.
 * @module
 */
import { readFile } from 'node:fs/promises';
import { toClipfoldError } from './errors.js';

/**
 * Node prints "ExperimentalWarning: WASI is an experimental feature" when
 * `node:wasi` is first loaded in a thread, and @extism/extism 1.0.3 loads
 * it on import (main thread) and in every worker it starts. Both are
 * silenced here, and nothing else (RATIONALE.md, "No WASI warning"):
 * - the main thread imports the SDK lazily, with process.emitWarning
 *   wrapped for the duration of that import to drop exactly this warning;
 * - a worker is started with NODE_NO_WARNINGS=1 in the environment it
 *   copies at construction (it runs only the SDK's worker and the plug-in);
 *   the variable is restored before any I/O callback can run (see
 *   #get), and left alone when the user set it.
 * @param {unknown} warning
 * @param {unknown} type
 */
function isWasiWarning(warning, type) {
  const text = warning instanceof Error ? warning.message : String(warning);
  const kind = warning instanceof Error ? warning.name : typeof type === 'string' ? type : /** @type {any} */ (type)?.type;
  return kind === 'ExperimentalWarning' && text.startsWith('WASI is an experimental feature');
}

/** @type {Promise<typeof import('@extism/extism').default> | null} */
let extism = null;

/**
 * The fetch the SDK is given: the global one, looked up only if called
 * (see PluginInstance's options).
 * @type {typeof fetch}
 */
const lazyFetch = (input, init) => globalThis.fetch(input, init);

/** @returns {Promise<typeof import('@extism/extism').default>} */
function loadExtism() {
  extism ??= (async () => {
    const original = process.emitWarning;
    /** @type {typeof process.emitWarning} */
    const filtered = /** @type {any} */ (function emitWarning(/** @type {any} */ warning, /** @type {any[]} */ ...rest) {
      if (isWasiWarning(warning, rest[0])) return;
      return Reflect.apply(original, process, [warning, ...rest]);
    });
    process.emitWarning = filtered;
    try {
      return (await import('@extism/extism')).default;
    } finally {
      if (process.emitWarning === filtered) process.emitWarning = original;
    }
  })();
  return extism;
}

/**
 * Runs start() (which constructs a worker synchronously or within the
 * current microtask queue) with NODE_NO_WARNINGS=1, restored on the next
 * macrotask.
 * @template T
 * @param {() => T} start
 * @returns {T}
 */
function withWorkerWarningsOff(start) {
  if (process.env.NODE_NO_WARNINGS !== undefined) return start();
  process.env.NODE_NO_WARNINGS = '1';
  try {
    return start();
  } finally {
    setImmediate(() => { if (process.env.NODE_NO_WARNINGS === '1') delete process.env.NODE_NO_WARNINGS; });
  }
}

/**
 * Compiles the plug-in once; instances share the compiled module.
 * @param {string | URL | Uint8Array | WebAssembly.Module} wasm a path, bytes or a compiled module
 * @returns {Promise<WebAssembly.Module>}
 */
export async function compileWasm(wasm) {
  if (wasm instanceof WebAssembly.Module) return wasm;
  const bytes = wasm instanceof Uint8Array ? wasm : await readFile(wasm);
  return WebAssembly.compile(bytes);
}

/**
 * @typedef {object} InstanceOptions
 * @property {WebAssembly.Module} module
 * @property {Record<string, Record<string, Function>>} functions host functions by namespace
 * @property {boolean} runInWorker run the Wasm on a worker thread (required for async host functions)
 * @property {Record<string, string>} [config] the Extism manifest config map
 * @property {(level: string, message: string) => void} [onLog] receives the plug-in's log lines
 * @property {number} [stageMin] the smallest input that is staged (default STAGE_MIN; tests set 1)
 * @property {number} [maxMemory] bytes of linear memory above which a main-thread instance is
 *   replaced by a fresh one after the call (its breakers start over); default DEFAULT_MAX_MEMORY, 0 never
 */

/**
 * Wasm memory never shrinks, and TinyGo's collector retains memory on long
 * runs of multi-megabyte calls: an instance left above this after a call
 * is replaced before the next one. Same as the Go host's.
 */
export const DEFAULT_MAX_MEMORY = 256 * 1024 * 1024;

/**
 * Inputs of at least this many bytes are staged (see #stager): written
 * straight into the plug-in's memory instead of into Extism memory, from
 * which go-pdk copies them eight bytes per host call. Same as the Go
 * host's harness.StageMin.
 */
export const STAGE_MIN = 16 * 1024;

const encoder = new TextEncoder();

/**
 * The input as @extism/extism can take it. Its store() keeps a
 * Uint8Array's whole underlying ArrayBuffer (`input.buffer`), ignoring
 * byteOffset and length: a view — a subarray, or a small Node Buffer,
 * which lives in a shared 8 KiB pool — would hand the plug-in the bytes
 * around it too. A view is copied into a buffer of its own; a string or
 * a Uint8Array that spans its whole buffer is passed as is.
 * @param {string | Uint8Array} input
 * @returns {string | Uint8Array}
 */
export function ownBuffer(input) {
  if (typeof input === 'string') return input;
  if (input.byteOffset === 0 && input.byteLength === input.buffer.byteLength && input.buffer instanceof ArrayBuffer) return input;
  return new Uint8Array(input);
}

export class PluginInstance {
  /** @type {InstanceOptions} */
  #opts;
  /** @type {Promise<import('@extism/extism').Plugin> | null} */
  #plugin = null;
  /** @type {Promise<unknown>} */
  #queue = Promise.resolve();
  #closed = false;
  /** @type {{ stage: Function, release: Function, memory: WebAssembly.Memory } | null | undefined} */
  #stage;
  /** staged calls so far (tests check the path is taken) */
  stagedCalls = 0;

  /** @param {InstanceOptions} opts */
  constructor(opts) {
    this.#opts = opts;
  }

  /** Instantiates now rather than on the first call. */
  async ready() {
    await this.#get();
  }

  /** @returns {Promise<import('@extism/extism').Plugin>} */
  #get() {
    if (this.#closed) return Promise.reject(new Error('clipfold: the compactor is closed'));
    if (!this.#plugin) {
      const { module, functions, runInWorker, config, onLog } = this.#opts;
      const log = (/** @type {string} */ level) => (/** @type {unknown} */ msg) => onLog?.(level, String(msg));
      const logger = /** @type {Console} */ (/** @type {unknown} */ ({
        trace: log('trace'), debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error'), log: log('info'),
      }));
      const options = {
        useWasi: true,
        runInWorker,
        functions,
        // @extism/extism 1.0.3 reads the config map from the options only
        // (a manifest's is ignored).
        config: config ?? {},
        logger,
        enableWasiOutput: false,
        // The plug-in makes no HTTP requests. Reading Node's global fetch
        // (the SDK's default) loads its HTTP client, undici: a fifth of a
        // cold start. It is looked up only if ever called.
        fetch: lazyFetch,
      };
      // The compiled module itself as the manifest (config comes from the
      // options): the SDK then returns before its `instanceof Response`
      // check, which would load undici too.
      const manifest = module;
      this.#plugin = loadExtism().then((createPlugin) => (runInWorker
        ? withWorkerWarningsOff(() => createPlugin(manifest, options))
        : createPlugin(manifest, options)));
      // A failed instantiation is retried on the next call.
      this.#plugin.catch(() => { this.#plugin = null; });
    }
    return this.#plugin;
  }

  /**
   * Runs fn with exclusive use of the instance.
   * @template T
   * @param {() => Promise<T>} fn
   * @returns {Promise<T>}
   */
  #exclusive(fn) {
    const run = this.#queue.then(fn, fn);
    this.#queue = run.catch(() => {});
    return run;
  }

  /**
   * Whether the module exports a function of that name.
   * @param {string} name
   * @returns {Promise<boolean>}
   */
  exists(name) {
    return this.#exclusive(async () => (await this.#get()).functionExists(name));
  }

  /**
   * Calls an export with the exact input bytes; returns the exact output
   * bytes. An export failure is thrown as a ClipfoldError.
   * @param {string} name
   * @param {string | Uint8Array} input
   * @returns {Promise<Uint8Array>}
   */
  call(name, input) {
    return this.#exclusive(async () => {
      const plugin = await this.#get();
      let out;
      let staged = null;
      try {
        const put = await this.#put(plugin, input);
        staged = put.staged;
        out = await plugin.call(name, ownBuffer(put.input));
      } catch (err) {
        const pluginError = err instanceof Error && err.message.startsWith('Plugin-originated error: ');
        if (pluginError) {
          await plugin.reset();
        } else {
          // A trap (or a dead worker): the Go runtime inside cannot be
          // trusted any more. Start afresh on the next call.
          this.#plugin = null;
          this.#stage = undefined;
          this.#called = false;
          await plugin.close().catch(() => {});
        }
        throw toClipfoldError(name, err);
      }
      // Copy before reset: the output is a view of Extism memory.
      let bytes = out ? new Uint8Array(out.bytes()) : new Uint8Array(0);
      if (staged) bytes = this.#take(staged, bytes);
      await plugin.reset();
      this.#called = true;
      await this.#bound(plugin);
      return bytes;
    });
  }

  /** times the instance was replaced for its memory */
  replaced = 0;

  /**
   * Replaces a main-thread instance whose memory grew past maxMemory: the
   * next call makes a fresh one.
   * @param {import('@extism/extism').Plugin} plugin
   */
  async #bound(plugin) {
    const max = this.#opts.maxMemory ?? DEFAULT_MAX_MEMORY;
    if (!max || this.#opts.runInWorker) return;
    const ex = (await plugin.getInstance()).exports;
    if (!(ex.memory instanceof WebAssembly.Memory) || ex.memory.buffer.byteLength <= max) return;
    this.#plugin = null;
    this.#stage = undefined;
    this.#called = false;
    this.replaced++;
    await plugin.close().catch(() => {});
  }

  /** an export has returned on the current plug-in (its runtime is initialized) */
  #called = false;

  /**
   * The staging exports of a main-thread instance of a plug-in that has
   * them (plugin/stage.go), or null. Only after a first call: a Go
   * plug-in's exports may be called directly once its runtime is up.
   * @param {import('@extism/extism').Plugin} plugin
   */
  async #stager(plugin) {
    if (this.#stage !== undefined || !this.#called) return this.#stage ?? null;
    this.#stage = null;
    if (this.#opts.runInWorker) return null;
    const ex = (await plugin.getInstance()).exports;
    if (typeof ex.clipfold_stage === 'function' && ex.clipfold_stage.length === 2 &&
        typeof ex.clipfold_release === 'function' && ex.memory instanceof WebAssembly.Memory) {
      this.#stage = { stage: ex.clipfold_stage, release: ex.clipfold_release, memory: ex.memory };
    }
    return this.#stage;
  }

  /**
   * Writes a large input into the plug-in's own memory. Returns the
   * stager when it did (and an empty input for the export call), else
   * staged null and the input to pass the standard way (encoded once
   * already when it had to be measured).
   * @param {import('@extism/extism').Plugin} plugin
   * @param {string | Uint8Array} input
   * @returns {Promise<{ staged: { release: Function, memory: WebAssembly.Memory } | null, input: string | Uint8Array }>}
   */
  async #put(plugin, input) {
    const min = Math.max(1, this.#opts.stageMin ?? STAGE_MIN);
    if (input.length < min / 4) return { staged: null, input }; // cheap pre-check: a string's UTF-8 is at most 4× its length
    const st = await this.#stager(plugin);
    if (!st) return { staged: null, input };
    const bytes = typeof input === 'string' ? encoder.encode(input) : input;
    if (bytes.length < min) return { staged: null, input: bytes };
    const ptr = st.stage(bytes.length, 0) >>> 0;
    if (ptr === 0) return { staged: null, input: bytes }; // over the plug-in's limit: it says so on the standard path
    new Uint8Array(st.memory.buffer, ptr, bytes.length).set(bytes);
    this.stagedCalls++;
    return { staged: st, input: new Uint8Array(0) };
  }

  /**
   * Copies out the output a staged call describes (8 bytes: address and
   * length, little-endian) and lets the plug-in free it.
   * @param {{ release: Function, memory: WebAssembly.Memory }} st
   * @param {Uint8Array} desc
   */
  #take(st, desc) {
    if (desc.length !== 8) throw new Error('clipfold: staging: the plug-in answered without an output descriptor');
    const d = new DataView(desc.buffer, desc.byteOffset, 8);
    const ptr = d.getUint32(0, true);
    const len = d.getUint32(4, true);
    if (ptr + len > st.memory.buffer.byteLength) throw new Error('clipfold: staging: the output descriptor points outside the plug-in\'s memory');
    const out = new Uint8Array(st.memory.buffer, ptr, len).slice();
    st.release();
    return out;
  }

  /**
   * The size of the module's linear memory, for a main-thread instance
   * (null on a worker): diagnostics.
   * @returns {Promise<number | null>}
   */
  wasmMemoryBytes() {
    return this.#exclusive(async () => {
      if (this.#opts.runInWorker) return null;
      const inst = await (await this.#get()).getInstance();
      return /** @type {WebAssembly.Memory} */ (inst.exports.memory).buffer.byteLength;
    });
  }

  /** Releases the instance (terminates its worker). */
  async close() {
    if (this.#closed) return;
    await this.#exclusive(async () => {
      this.#closed = true;
      const p = this.#plugin;
      this.#plugin = null;
      if (p) await (await p.catch(() => null))?.close();
    });
  }
}
