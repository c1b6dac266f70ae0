/**
 * createCompactor: clipfold's plug-in with the host functions a Node
 * program provides.
 * @module
 */
import { ClipfoldError } from './errors.js';
import { HOST_NAMESPACE, hostFunctions, stubHostFunctions } from './hostfns.js';
import { compileWasm, PluginInstance } from './instance.js';
import { OFFLINE_LLM, offlineLLM } from './llm/extractive.js';
import { MemoryStore } from './store.js';
import { findWasm } from './paths.js';

export { findWasm };

/**
 * @typedef {import('./types.js').Message} Message
 * @typedef {import('./types.js').Config} Config
 * @typedef {import('./types.js').CompactionResult} CompactionResult
 * @typedef {import('./types.js').LLM} LLM
 * @typedef {import('./types.js').Store} Store
 * @typedef {import('./types.js').HostCallEvent} HostCallEvent
 * @typedef {import('./types.js').SearchHit} SearchHit
 * @typedef {import('./types.js').SearchOptions} SearchOptions
 * @typedef {import('./types.js').SearchQuery} SearchQuery
 * @typedef {import('./types.js').ReadRecord} ReadRecord
 */

/**
 * The Extism manifest config map: same keys as Config, values as strings
 * (lists as JSON).
 * @param {Config | Record<string, unknown> | undefined} config
 * @returns {Record<string, string>}
 */
export function manifestConfig(config) {
  /** @type {Record<string, string>} */
  const out = {};
  for (const [k, v] of Object.entries(config ?? {})) {
    if (v === undefined || v === null) continue;
    out[k] = typeof v === 'string' ? v : Array.isArray(v) || typeof v === 'object' ? JSON.stringify(v) : String(v);
  }
  return out;
}

/**
 * @template {Store} [S=MemoryStore]
 * @typedef {object} CompactorOptions
 * @property {string} [wasmPath]   default: findWasm()
 * @property {Uint8Array | WebAssembly.Module} [wasm] the module's bytes or a compiled module, instead of wasmPath
 * @property {LLM} [llm]            answers llm_complete; default offlineLLM(): offline, and then the config
 *                                  defaults to `summarizer: "extractive"` (compress summarizes inside the
 *                                  plug-in, dated, and never calls llm_complete)
 * @property {S} [store]            answers memory_list / compaction_commit (an SQLiteStore, or your own); default a new MemoryStore
 * @property {Config} [config]      plug-in-wide defaults (the manifest config map); a call's config overrides them
 * @property {(level: string, message: string) => void} [onLog] the plug-in's log lines (warnings about unknown keys); default: dropped
 * @property {number} [stageMin] pure exports stage inputs of at least this many bytes (default STAGE_MIN, 16 KiB)
 * @property {number} [maxMemory] the pure-export instance is replaced after a call leaves its memory above this (default 256 MiB; 0 never)
 * @property {(e: HostCallEvent) => void} [onHostCall] observes every host-function call
 */

/**
 * @typedef {object} CompressOptions
 * @property {Config} [config]
 * @property {boolean} [dryRun]      do everything but the commit; the result carries `commit`
 * @property {string | number} [now] the clock for the circuit breaker
 * @property {string} [operationId]
 */

/**
 * @typedef {CompressOptions & {targetShare?: number}} CompactIfDueOptions
 * `targetShare`: compact to this fraction of shouldCompact's limit (default
 * 0.8), keeping the newest messages that fit; 0 compacts to keep_recent. An
 * explicit `target_tokens` in the config wins.
 */

/**
 * What createCompactor resolves to.
 * @template {Store} [S=MemoryStore]
 * @typedef {Awaited<ReturnType<typeof createCompactor<S>>>} Compactor
 */

/** The default target of compactIfDue, as a share of shouldCompact's limit. */
export const DEFAULT_TARGET_SHARE = 0.8;

/**
 * Loads the plug-in and binds the host functions.
 *
 * Two instances of the same compiled module are used: the pure exports run
 * on the calling thread (fast, no host calls), `compress` runs on a worker
 * thread (made on first use) so that llm_complete, memory_list and
 * compaction_commit may be asynchronous (fetch, a database). Each instance
 * runs one call at a time; calls queue. The circuit breaker lives in the
 * compress instance, so it spans every compress call of this compactor.
 *
 * @template {Store} [S=MemoryStore]
 * @param {CompactorOptions<S>} [opts]
 */
export async function createCompactor(opts = {}) {
  const module = await compileWasm(opts.wasm ?? opts.wasmPath ?? findWasm());
  const exportNames = new Set(WebAssembly.Module.exports(module).filter((e) => e.kind === 'function').map((e) => e.name));
  const llm = opts.llm ?? offlineLLM();
  // The offline mode summarizes inside the plug-in (the summarizer config
  // key), so batches are "extractive" and dated whichever host runs it.
  const offline = Boolean(llm && /** @type {any} */ (llm)[OFFLINE_LLM]);
  const baseConfig = offline && !Object.hasOwn(opts.config ?? {}, 'summarizer')
    ? { ...opts.config, summarizer: 'extractive' } : opts.config;
  const config = manifestConfig(baseConfig);
  const store = /** @type {S} */ (opts.store ?? new MemoryStore());

  const pure = new PluginInstance({
    module, config, onLog: opts.onLog, runInWorker: false, functions: { [HOST_NAMESPACE]: stubHostFunctions() },
    stageMin: opts.stageMin, maxMemory: opts.maxMemory,
  });
  await pure.ready();
  /** @type {PluginInstance | null} */
  let host = null;
  const hostInstance = () => {
    host ??= new PluginInstance({
      module, config, onLog: opts.onLog, runInWorker: true,
      functions: { [HOST_NAMESPACE]: hostFunctions({ llm, store, onHostCall: opts.onHostCall }) },
    });
    return host;
  };

  const enc = new TextEncoder();
  const dec = new TextDecoder();

  /**
   * Calls an export with exact bytes; returns exact bytes.
   * @param {string} name
   * @param {string | Uint8Array} input
   * @returns {Promise<Uint8Array>}
   */
  async function callRaw(name, input) {
    if (!exportNames.has(name)) {
      throw new ClipfoldError('internal', `this plug-in build has no export ${JSON.stringify(name)}`, { export: name });
    }
    const bytes = typeof input === 'string' ? enc.encode(input) : input;
    return (name === 'compress' ? hostInstance() : pure).call(name, bytes);
  }

  /**
   * Calls an export with a JSON value; returns the parsed output.
   * @param {string} name
   * @param {unknown} input
   */
  async function call(name, input) {
    const out = await callRaw(name, JSON.stringify(input));
    return JSON.parse(dec.decode(out));
  }

  /** @param {Record<string, unknown>} o */
  const compact = (o) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

  const pluginCaller = { has: (/** @type {string} */ n) => exportNames.has(n), callJSON: call };
  /** @type {any} */ (llm).bindPlugin?.(pluginCaller);
  // The store analyses search queries with this plug-in's searchQuery.
  /** @type {any} */ (store).bindPlugin?.(pluginCaller);

  /**
   * @param {string} conversationId
   * @param {Message[] | undefined} history
   * @returns {Promise<Message[]>}
   */
  async function historyOf(conversationId, history) {
    if (history !== undefined) return history;
    if (typeof store.history !== 'function') throw new TypeError('compress: no history given and the store has no history()');
    return store.history(conversationId);
  }

  /**
   * @param {string} conversationId
   * @param {Message[] | undefined} history
   * @param {CompressOptions} o
   * @returns {Promise<CompactionResult>}
   */
  async function compress(conversationId, history, o) {
    const h = await historyOf(conversationId, history);
    return call('compress', compact({
      conversation_id: conversationId, history: h, config: o.config, dry_run: o.dryRun, now: o.now, operation_id: o.operationId,
    }));
  }

  return {
    /** The llm and store the host functions use. */
    llm,
    store,
    /** Names of the plug-in's exported functions. @type {string[]} */
    exports: [...exportNames].filter((n) => !n.startsWith('_') && n !== 'memory').sort(),
    /** @param {string} name */
    has: (name) => exportNames.has(name),
    call,
    callRaw,
    /** How many pure-export calls were staged (diagnostics). */
    get stagedCalls() { return pure.stagedCalls; },

    /**
     * Compacts a conversation (SPEC §4). The history defaults to the
     * store's (`store.history(conversationId)`). A failed compaction is not
     * thrown: it is `failed: true` with the input history; only invalid
     * input (and a broken plug-in) throws a ClipfoldError.
     * @param {string} conversationId
     * @param {Message[] | undefined} [history]
     * @param {CompressOptions} [o]
     * @returns {Promise<CompactionResult>}
     */
    async compress(conversationId, history, o = {}) {
      return compress(conversationId, history, o);
    },

    /**
     * The agent loop's helper: compacts when shouldCompact says the
     * history is due, and then to a target, not to keep_recent — the
     * history ends near `targetShare` of the limit (default 0.8), with as
     * many of the newest messages as fit kept verbatim (contiguous, tool
     * calls with their results, pinned messages always) and only the
     * older rest summarized. Returns null when not due, else the
     * CompactionResult (a failed compaction is a result, not thrown).
     * @param {string} conversationId
     * @param {Message[] | undefined} [history] default: the store's
     * @param {CompactIfDueOptions} [o]
     * @returns {Promise<CompactionResult | null>}
     */
    async compactIfDue(conversationId, history, o = {}) {
      const share = o.targetShare ?? DEFAULT_TARGET_SHARE;
      if (typeof share !== 'number' || !(share >= 0 && share <= 1)) {
        throw new TypeError(`compactIfDue: targetShare must be a number in [0, 1], got ${String(share)}`);
      }
      const h = await historyOf(conversationId, history);
      const sc = await call('shouldCompact', compact({ messages: h, config: o.config }));
      if (!sc.due) return null;
      let cfg = o.config;
      const explicit = Object.hasOwn(cfg ?? {}, 'target_tokens') || Object.hasOwn(opts.config ?? {}, 'target_tokens');
      if (share > 0 && !explicit) cfg = { ...cfg, target_tokens: Math.max(1, Math.floor(share * sc.limit)) };
      return compress(conversationId, h, { ...o, config: cfg });
    },

    /** @param {Message[]} messages @param {Config} [cfg] @returns {Promise<{scores: number[]}>} */
    score: (messages, cfg) => call('score', compact({ messages, config: cfg })),
    /** @param {Message[]} messages @param {Config} [cfg] @returns {Promise<{to_compress: Message[], to_keep: Message[], prior_summary: Message | null}>} */
    split: (messages, cfg) => call('split', compact({ messages, config: cfg })),
    /** @param {Message[]} messages @param {Config} [cfg] @returns {Promise<{chunks: Message[][]}>} */
    chunk: (messages, cfg) => call('chunk', compact({ messages, config: cfg })),
    /** @param {string | Message[]} textOrMessages @returns {Promise<{tokens: number}>} */
    estimateTokens: (textOrMessages) => call('estimateTokens', typeof textOrMessages === 'string' ? { text: textOrMessages } : { messages: textOrMessages }),
    /** @param {Message[]} messages @param {Config} [cfg] @returns {Promise<{due: boolean, tokens: number, limit: number}>} */
    shouldCompact: (messages, cfg) => call('shouldCompact', compact({ messages, config: cfg })),
    /** @param {{system_prompt?: string|null, previous_summary?: string|null, messages: Message[], model?: string, max_tokens?: number}} input @returns {Promise<import('./types.js').ModelRequest>} */
    buildSummarizationRequest: (input) => call('buildSummarizationRequest', input),
    /** @param {{system_prompt?: string|null, batch_contents: string[], model?: string, max_tokens?: number}} input @returns {Promise<import('./types.js').ModelRequest>} */
    buildResummarizationRequest: (input) => call('buildResummarizationRequest', input),
    /** @param {{batches: import('./types.js').Batch[], config?: Config, total_messages_compressed?: number}} input @returns {Promise<{content: string}>} */
    buildClipArchive: (input) => call('buildClipArchive', input),
    /** @returns {Promise<{version: string, abi: number}>} */
    version: () => call('version', {}),
    /**
     * The plug-in's analysis of a natural-language search query (SPEC §3
     * searchQuery): the terms, the FTS5 expression and the tsquery.
     * @param {string} query
     * @param {{language?: string}} [o]
     * @returns {Promise<SearchQuery>}
     */
    searchQuery: (query, o = {}) => call('searchQuery', compact({ query: String(query), language: o.language })),

    /**
     * Searches what compaction archived (SPEC §5 memory_read): batch
     * summaries and recalled messages, one list, best first, ties to the
     * more recent. The question is analysed by the plug-in's searchQuery
     * export, then run by the store (`searchFts5` of SQLiteStore /
     * MemoryStore; a custom store needs `search(query, opts)`).
     * @param {string} query a question as a person asks it
     * @param {SearchOptions} [o]
     * @returns {Promise<SearchHit[]>}
     */
    async search(query, o = {}) {
      const s = /** @type {any} */ (store);
      if (typeof s.searchFts5 === 'function') {
        const q = await call('searchQuery', { query: String(query) });
        return s.searchFts5(q.fts5, o);
      }
      if (typeof s.search === 'function') return s.search(String(query), o);
      throw new TypeError('search: the store has neither searchFts5(match, opts) nor search(query, opts)');
    },

    /**
     * A recalled message or an archived batch by id (a search hit's id), in
     * full; null when the store holds no such id.
     * @param {string} id
     * @returns {Promise<ReadRecord | null>}
     */
    async read(id) {
      const s = /** @type {any} */ (store);
      if (typeof s.read !== 'function') throw new TypeError('read: the store has no read(id)');
      return (await s.read(id)) ?? null;
    },

    /** Releases both instances (and the worker thread). */
    async close() {
      await Promise.all([pure.close(), host?.close()]);
    },
  };
}
