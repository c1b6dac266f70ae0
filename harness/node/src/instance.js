/**
 * One clipfold plug-in instance behind @extism/extism: calls are
 * serialized (an instance is not re-entrant), Extism memory is reset after
 * every call (the JS SDK keeps every block until a reset), and an instance
 * that trapped is thrown away and made again on the next call.
 * @module
 */
import createPlugin from '@extism/extism';
import { readFile } from 'node:fs/promises';
import { toClipfoldError } from './errors.js';

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
 */

const LOG_LEVEL_WARN = 3;
const LOG_LEVEL_OFF = 0x7fffffff;

export class PluginInstance {
  /** @type {InstanceOptions} */
  #opts;
  /** @type {Promise<import('@extism/extism').Plugin> | null} */
  #plugin = null;
  /** @type {Promise<unknown>} */
  #queue = Promise.resolve();
  #closed = false;

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
      // go-pdk ≥ 1.1 imports extism:host/env get_log_level, which
      // @extism/extism 1.0.3 does not provide: answer it here (levels
      // trace 0 … error 4; above error silences the plug-in's logging).
      const level = onLog ? LOG_LEVEL_WARN : LOG_LEVEL_OFF;
      const all = { ...functions, 'extism:host/env': { get_log_level: () => level, ...functions['extism:host/env'] } };
      this.#plugin = createPlugin({ wasm: [{ module }], config: config ?? {} }, {
        useWasi: true,
        runInWorker,
        functions: all,
        // @extism/extism 1.0.3 reads the config map from the options only
        // (the manifest's is ignored): pass it in both.
        config: config ?? {},
        logger,
        enableWasiOutput: false,
      });
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
      try {
        out = await plugin.call(name, input);
      } catch (err) {
        const pluginError = err instanceof Error && err.message.startsWith('Plugin-originated error: ');
        if (pluginError) {
          await plugin.reset();
        } else {
          // A trap (or a dead worker): the Go runtime inside cannot be
          // trusted any more. Start afresh on the next call.
          this.#plugin = null;
          await plugin.close().catch(() => {});
        }
        throw toClipfoldError(name, err);
      }
      // Copy before reset: the output is a view of Extism memory.
      const bytes = out ? new Uint8Array(out.bytes()) : new Uint8Array(0);
      await plugin.reset();
      return bytes;
    });
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
