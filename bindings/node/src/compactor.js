/**
 * createCompactor: clipfold's plug-in with the host functions a Node
 * program provides.
 * @module
 */
import { describe, invalidArgument, optionalBool as bool, optionalUsage, requireJSON, requireString, stringifyJSON } from './args.js';
import { ClipfoldError } from './errors.js';
import { COMMIT_PLANNED, HOST_NAMESPACE, hostFunctions, PLAN_INPUT, stubHostFunctions } from './hostfns.js';
import { compileWasm, PluginInstance } from './instance.js';
import { SyncPlugin } from './syncplugin.js';
import { Ahead, turnTaker } from './ahead.js';
import { OFFLINE_LLM, offlineLLM } from './llm/extractive.js';
import { MemoryStore } from './store.js';
import { findWasm } from './paths.js';
import { availableParallelism } from 'node:os';

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
 * @typedef {import('./types.js').MemoryReadResult} MemoryReadResult
 * @typedef {import('./types.js').ContextUsage} ContextUsage
 * @typedef {import('./types.js').ContextCount} ContextCount
 * @typedef {import('./types.js').AheadResult} AheadResult
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
 * @property {boolean} [callerOwned] the caller keeps the messages (docs/spec.md#who-owns-the-history, history_owner "caller"), as LangChain,
 *   LangGraph, the AI SDK and the provider SDKs do: the history is the caller's whole list, nothing of it is stored,
 *   the removed messages are written to recall storage once each (by id, given or derived), and the result's history
 *   is the compacted view to send to the model. Either pattern works: replace the list with the result's history and
 *   append to it, or send the whole list every turn (the same list gives the same view; nothing is summarized twice).
 * @property {boolean} [onlyIfDue]   compact only when the history (caller-owned: its compacted view) is over the
 *   budget, as shouldCompact says: for a call on every turn
 * @property {HistoryShape} [shape]  the message shape, when the messages alone cannot tell ("anthropic" for Anthropic
 *   text turns, whose clip-archive must be a user turn)
 * @property {ContextUsage} [usage]  the provider's count of the last model call (see shouldCompact), for the first
 *   `usage.messages` messages of the history compacted: the caller's list when it owns it; else the store's active
 *   history (the caller's list when it sends back the result's history with the new messages appended)
 */

/**
 * The message shapes of docs/spec.md#message-shapes ("auto": detect).
 * @typedef {'auto'|'chat'|'anthropic'|'responses'|'ai_sdk'|'langchain'} HistoryShape
 */

/**
 * A message in any shape of docs/spec.md#message-shapes: OpenAI Chat (Message), Anthropic,
 * OpenAI Responses items, AI SDK ModelMessage, LangChain message dicts.
 * @typedef {Message | Record<string, unknown>} AnyMessage
 */

/**
 * What the decodeHistory export reads of each message: the id (given, or
 * derived as compress derives it), clipfold's role, the text a store
 * keeps, the time (null when the message has none).
 * @typedef {object} DecodedMessage
 * @property {string} id
 * @property {'user'|'assistant'|'system'|'tool'} role
 * @property {string} content
 * @property {string | null} created_at
 */

/**
 * @typedef {CompressOptions & {targetShare?: number}} CompactIfDueOptions
 * `targetShare`: compact to this fraction of shouldCompact's limit (default
 * 0.8), keeping the newest messages that fit; 0 compacts to keep_recent. An
 * explicit `target_tokens` in the config wins.
 */

/**
 * compactAhead's options: compress's `callerOwned`, `shape`, `config`,
 * `usage` and `now`, and compactIfDue's `targetShare`.
 * @typedef {object} AheadOptions
 * @property {boolean} [callerOwned]
 * @property {HistoryShape} [shape]
 * @property {Config} [config]
 * @property {ContextUsage | null} [usage] the provider's count of the last model call, for the first `usage.messages`
 *   messages of what the model was sent (the history returned, then what followed it)
 * @property {number} [targetShare] compact to this share of the limit (default 0.8); 0 compacts to keep_recent.
 *   An explicit `target_tokens` in the config wins
 * @property {string | number} [now] the compactions' now
 */

/**
 * countContext's options.
 * @typedef {object} CountContextOptions
 * @property {ContextUsage | null} [usage] as for shouldCompact
 * @property {Config} [config]
 * @property {HistoryShape} [shape]
 */

/**
 * What createCompactor resolves to.
 * @template {Store} [S=MemoryStore]
 * @typedef {Awaited<ReturnType<typeof createCompactor<S>>>} Compactor
 */

/** The default target of compactIfDue, as a share of shouldCompact's limit. */
export const DEFAULT_TARGET_SHARE = 0.8;

/**
 * The most plug-in instances compactAhead's compactions under way run on
 * at once (workers, made as needed); more wait for one of them.
 */
export const AHEAD_INSTANCES = Math.max(2, Math.min(4, availableParallelism()));

/** memory_read's budget in tokens when none is given (the buildMemoryRead export's). */
export const DEFAULT_MEMORY_READ_TOKENS = 1000;

/**
 * How many messages before the appended ones the active history is
 * re-indexed over (SCHEMA.md, "messages"; core.ActiveIndexWindow): a
 * message's search text looks back 64 messages.
 */
export const ACTIVE_INDEX_WINDOW = 65;

/**
 * Loads the plug-in and binds the host functions.
 *
 * Three instances of the same compiled module are used: the pure exports
 * run on the calling thread (fast, no host calls), `compress` runs on a
 * worker thread (made on first use) so that llm_complete, memory_list and
 * compaction_commit may be asynchronous (fetch, a database), and the
 * store's exports (planCommit, planAppend, parseBlocks) run on a worker of
 * their own that the store calls synchronously (SyncPlugin, made on the
 * store's first use). Each instance
 * runs one call at a time; calls queue. The circuit breaker lives in the
 * compress instance, so it spans every compress call of this compactor.
 *
 * Concurrent compactions of one conversation take turns, from reading the
 * stored history to the commit: each reads what the one before committed,
 * so none conflicts with another (other conversations' go on beside
 * them). One that another process committed first is a result with
 * `failure_code: "commit_conflict"`, which does not count toward the
 * circuit breaker.
 *
 * @template {Store} [S=MemoryStore]
 * @param {CompactorOptions<S>} [opts]
 */
export async function createCompactor(opts = {}) {
  if (opts === null || typeof opts !== 'object') throw invalidArgument('opts', `must be an options object, got ${describe(opts)}`);
  if (opts.config !== undefined && (opts.config === null || typeof opts.config !== 'object' || Array.isArray(opts.config))) {
    throw invalidArgument('config', `must be an object of [summarization] keys, got ${describe(opts.config)}`);
  }
  if (opts.config !== undefined) requireJSON(opts.config, 'config');
  const module = await compileWasm(opts.wasm ?? opts.wasmPath ?? findWasm());
  const exportNames = new Set(WebAssembly.Module.exports(module).filter((e) => e.kind === 'function').map((e) => e.name));
  const llm = opts.llm ?? offlineLLM();
  // The offline mode summarizes inside the plug-in (the summarizer config
  // key), so batches are "extractive" and dated whichever host runs it.
  const offline = Boolean(llm && /** @type {any} */ (llm)[OFFLINE_LLM]);
  const baseConfig = offline && !Object.hasOwn(opts.config ?? {}, 'summarizer')
    ? { ...opts.config, summarizer: 'extractive' } : opts.config;
  const config = manifestConfig(baseConfig);
  // With a model summarizing, a compaction's chunks are what one request
  // holds (max_chunk_tokens "auto": few calls on the agent's critical
  // path), unless chunk_size or max_chunk_tokens is configured.
  /** @param {Config | undefined} c */
  const chunksSet = (c) => c != null && (Object.hasOwn(c, 'chunk_size') || Object.hasOwn(c, 'max_chunk_tokens'));
  /** @param {Config | undefined} c @returns {Config | undefined} */
  const compressConfig = (c) => (offline || chunksSet(opts.config) || chunksSet(c) ? c : { ...c, max_chunk_tokens: 'auto' });
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
    const text = stringifyJSON(input, '');
    if (text === undefined) throw invalidArgument('input', `must be a JSON value, got ${describe(input)}`);
    const out = await callRaw(name, text);
    return JSON.parse(dec.decode(out));
  }

  /** @param {Record<string, unknown>} o */
  const compact = (o) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

  // A third instance, on a worker of its own (started on first use), answers
  // the store exports synchronously: what the store writes and reads is
  // this plug-in's to say (SyncPlugin).
  const storePlugin = new SyncPlugin(module);
  const pluginCaller = { has: (/** @type {string} */ n) => exportNames.has(n), callJSON: call, sync: storePlugin };
  /** @type {any} */ (llm).bindPlugin?.(pluginCaller);
  // The store analyses search queries with this plug-in's searchQuery, and
  // plans its commits and appends and reads its blocks with its store exports.
  /** @type {any} */ (store).bindPlugin?.(pluginCaller);

  /**
   * Each message's JSON text.
   * @param {AnyMessage[]} history
   */
  function texts(history) {
    if (!Array.isArray(history)) throw invalidArgument('history', `must be an array of messages, got ${describe(history)}`);
    return history.map((m, i) => {
      const t = stringifyJSON(m, `history[${i}]`);
      if (typeof t !== 'string' || !m || typeof m !== 'object' || Array.isArray(m)) {
        throw new ClipfoldError('invalid_input', `history[${i}]: must be a message object`, { export: 'compress' });
      }
      return t;
    });
  }

  /**
   * decodeHistory on messages already turned into JSON text (with each
   * message's search text when searchText).
   * @param {string} conversationId
   * @param {string[]} raws
   * @param {HistoryShape | undefined} shape
   * @param {boolean} [searchText]
   * @returns {Promise<{shape: string, messages: DecodedMessage[]}>}
   */
  async function decodeRaw(conversationId, raws, shape, searchText = false) {
    const head = JSON.stringify(compact({ conversation_id: conversationId, shape, search_text: searchText || undefined }));
    return JSON.parse(dec.decode(await callRaw('decodeHistory', `{"history":[${raws.join(',')}],${head.slice(1)}`)));
  }

  /** @param {string} k */
  const has = (k) => typeof /** @type {any} */ (store)[k] === 'function';
  /** Whether the store can hold a list compress is given (SQLiteStore, MemoryStore, or a store with the same methods). */
  const syncs = () => has('activeMessages') && (has('appendNewRecords') || (has('appendRecords') && has('knownIds')));

  /**
   * Appends the messages of the list the conversation holds nowhere
   * (neither in its active history nor in its recall: ids are the
   * caller's, unique within a conversation only), under the ids the
   * decodeHistory export gives them: the Go host's sync. Through the
   * store's appendNewRecords, the check and the append are one
   * transaction: another process storing the same new messages at once
   * appends each once, and neither fails.
   * @param {string} conversationId
   * @param {string[]} raws
   * @param {HistoryShape | undefined} shape
   */
  async function sync(conversationId, raws, shape) {
    const { messages } = await decodeRaw(conversationId, raws, shape);
    const s = /** @type {any} */ (store);
    const records = messages.map((m, i) => ({ ...m, raw: raws[i] }));
    if (has('appendNewRecords')) {
      return (await s.appendNewRecords(conversationId, records)).length;
    }
    const known = await s.knownIds(conversationId, messages.map((m) => m.id));
    const fresh = records.filter((m) => !known.has(m.id));
    if (fresh.length > 0) await s.appendRecords(conversationId, fresh);
    return fresh.length;
  }

  /**
   * Gives the active messages what the search index holds for them after
   * `appended` of them were appended (SCHEMA.md, "messages"): the
   * decodeHistory export's search text over the stored active history's
   * last appended + ACTIVE_INDEX_WINDOW messages, for the appended ones
   * and the one before them, matched by position. A store without
   * indexActive, or a plug-in without search_text, leaves them indexed by
   * their text.
   * @param {string} conversationId
   * @param {{id: string, raw: string}[]} active
   * @param {number} appended
   * @param {HistoryShape | undefined} shape
   */
  async function indexActive(conversationId, active, appended, shape) {
    if (appended <= 0 || active.length === 0 || !has('indexActive')) return;
    const n = active.length;
    const first = Math.max(0, n - appended - ACTIVE_INDEX_WINDOW);
    const { messages } = await decodeRaw(conversationId, active.slice(first).map((m) => m.raw), shape, true);
    /** @type {Record<string, string>} */
    const texts = {};
    for (let k = Math.max(0, n - appended - 1); k < n; k++) {
      const t = /** @type {{search_text?: unknown}} */ (messages[k - first])?.search_text;
      if (typeof t === 'string') texts[active[k].id] = t;
    }
    await /** @type {any} */ (store).indexActive(conversationId, texts);
  }

  /**
   * Runs fn once the compactions of conversationId asked for before it have
   * finished (from reading the stored history to the commit); the next
   * waits for this one.
   */
  const inTurn = turnTaker();

  /**
   * compress's input, as JSON text, the JSON text of each message sent,
   * and the caller's messages with their JSON texts (when given).
   * @param {string} conversationId
   * @param {AnyMessage[] | undefined} history
   * @param {CompressOptions} o
   * @returns {Promise<{input: string, sent: string[], given: {objects: AnyMessage[], texts: string[]} | null}>}
   */
  async function compressInput(conversationId, history, o) {
    if (typeof conversationId !== 'string' || conversationId === '') {
      throw new ClipfoldError('invalid_input', 'conversation_id: must be a non-empty string', { export: 'compress' });
    }
    if (o === null || typeof o !== 'object') throw invalidArgument('options', `must be an options object, got ${describe(o)}`);
    const callerOwned = bool(o.callerOwned, 'callerOwned');
    if (o.config !== undefined) requireJSON(o.config, 'config');
    const usage = optionalUsage(o.usage); // refused before anything is stored
    const given = history === undefined || history === null ? null : { objects: history, texts: texts(history) };
    /** @type {string[]} */
    let sent;
    /** @type {string[] | undefined} */
    let ids;
    if (callerOwned) {
      if (given === null) {
        throw new ClipfoldError('invalid_input', 'history: a caller-owned compaction needs the caller\'s messages', { export: 'compress' });
      }
      sent = given.texts;
    } else if (syncs()) {
      // The store owns the history: what it holds nowhere joins its active
      // history, and its active history is compacted — the caller's list
      // less what earlier compactions moved to recall, behind their
      // clip-archive, under the ids the store keeps.
      const appended = given !== null ? await sync(conversationId, given.texts, o.shape) : 0;
      const active = await /** @type {any} */ (store).activeMessages(conversationId);
      await indexActive(conversationId, active, appended, o.shape);
      sent = active.map((/** @type {{raw: string}} */ m) => m.raw);
      ids = active.map((/** @type {{id: string}} */ m) => m.id);
    } else {
      // A store of your own without appendNewRecords/activeMessages:
      // the list as given (the store must hold it), or its history().
      if (history === undefined || history === null) {
        if (typeof store.history !== 'function') throw new TypeError('compress: no history given and the store has no history()');
        history = await store.history(conversationId);
      }
      sent = given?.texts ?? texts(/** @type {AnyMessage[]} */ (history));
    }
    const rest = JSON.stringify(compact({
      conversation_id: conversationId, history_ids: ids, history_owner: callerOwned ? 'caller' : undefined, shape: o.shape,
      only_if_due: bool(o.onlyIfDue, 'onlyIfDue') || undefined, config: compressConfig(o.config), dry_run: bool(o.dryRun, 'dryRun') || undefined,
      now: o.now, operation_id: o.operationId, usage,
    }));
    return { input: `{"history":[${sent.join(',')}],${rest.slice(1)}`, sent, given };
  }

  /**
   * @param {string} conversationId
   * @param {AnyMessage[] | undefined} history
   * @param {CompressOptions} o
   * @returns {Promise<{result: CompactionResult, sent: string[]}>}
   */
  async function compress(conversationId, history, o) {
    const { result, sent, given } = await inTurn(conversationId, async () => {
      const { input, sent, given } = await compressInput(conversationId, history, o);
      /** @type {CompactionResult} */
      const result = JSON.parse(dec.decode(await callRaw('compress', input)));
      return { result, sent, given };
    });
    restoreGiven(result, given);
    return { result, sent };
  }

  /**
   * A message that returns comes back byte for byte: the result's history
   * holds the very object the caller gave (class instances, binary data,
   * identity).
   * @param {CompactionResult} result
   * @param {{objects: AnyMessage[], texts: string[]} | null} given
   */
  function restoreGiven(result, given) {
    if (given === null) return;
    /** @type {Map<string, AnyMessage[]>} */
    const byText = new Map();
    given.texts.forEach((t, i) => {
      const q = byText.get(t);
      if (q) q.push(given.objects[i]);
      else byText.set(t, [given.objects[i]]);
    });
    result.history = result.history.map((m) => byText.get(JSON.stringify(m))?.shift() ?? m);
  }

  // compactAhead's compactions under way run on instances of their own
  // (workers, made on first use, up to AHEAD_INSTANCES), so that neither a
  // compaction at the limit nor the count before a model call waits
  // behind them.
  /** @type {{instance: PluginInstance, busy: number}[]} */
  const aheadPool = [];
  /**
   * compress on the least busy instance of the background work.
   * @param {string} input
   * @returns {Promise<string>}
   */
  function background(input) {
    return onAheadInstance('compress', input);
  }

  /**
   * The plan of a compaction prepared ahead (the planCommit export's
   * answer), made on an instance of the background work, so that the
   * turn applying it runs the store's SQL only; null when the store
   * cannot commit from a plan, or planning failed (the commit then plans
   * and reports it itself).
   * @param {string} commitText the commit's exact JSON text
   * @returns {Promise<object | null>}
   */
  async function planAhead(commitText) {
    const s = /** @type {any} */ (store);
    if (typeof s?.[PLAN_INPUT] !== 'function' || typeof s?.[COMMIT_PLANNED] !== 'function') return null;
    try {
      return JSON.parse(await onAheadInstance('planCommit', s[PLAN_INPUT](commitText)));
    } catch {
      return null;
    }
  }

  /**
   * Calls an export on the least busy instance of the background work.
   * @param {string} name
   * @param {string} input
   * @returns {Promise<string>}
   */
  async function onAheadInstance(name, input) {
    let slot = aheadPool.find((s) => s.busy === 0);
    if (slot === undefined && aheadPool.length < AHEAD_INSTANCES) {
      slot = {
        instance: new PluginInstance({
          module, config, onLog: opts.onLog, runInWorker: true,
          functions: { [HOST_NAMESPACE]: hostFunctions({ llm, store, onHostCall: opts.onHostCall }) },
        }),
        busy: 0,
      };
      aheadPool.push(slot);
    }
    slot ??= aheadPool.reduce((a, b) => (b.busy < a.busy ? b : a));
    slot.busy++;
    try {
      return dec.decode(await slot.instance.call(name, enc.encode(input)));
    } finally {
      slot.busy--;
    }
  }

  /**
   * A store-owned history for compactAhead: the messages of `history` the
   * store holds nowhere appended (as compress appends them), then the
   * store's active history, each message parsed from its stored JSON.
   * @param {string} conversationId
   * @param {AnyMessage[] | undefined} history
   * @param {HistoryShape | undefined} shape
   * @returns {Promise<AnyMessage[]>}
   */
  function stored(conversationId, history, shape) {
    if (!syncs()) {
      throw new TypeError('compactAhead: a store-owned history needs a store with activeMessages and appendNewRecords '
        + '(or appendRecords and knownIds), as SQLiteStore and MemoryStore have; else pass callerOwned: true');
    }
    const s = /** @type {any} */ (store);
    return inTurn(conversationId, async () => {
      if (history !== undefined && history !== null) {
        const appended = await sync(conversationId, texts(history), shape);
        await indexActive(conversationId, await s.activeMessages(conversationId), appended, shape);
      }
      return (await s.activeMessages(conversationId)).map((/** @type {{raw: string}} */ m) => JSON.parse(m.raw));
    });
  }

  /** @type {Ahead | null} */
  let ahead = null;
  const aheadState = () => {
    ahead ??= new Ahead({
      // Through api.callRaw: what the count hands the plug-in can be observed.
      pure: async (name, input) => dec.decode(await api.callRaw(name, input)),
      compress,
      dryRunInput: async (conversationId, history, o) => {
        const { input, given } = await inTurn(conversationId, () => compressInput(conversationId, history, o));
        return { input, restore: (/** @type {CompactionResult} */ r) => restoreGiven(r, given) };
      },
      background,
      planAhead,
      stored,
      inTurn,
      store,
      config: opts.config,
    });
    return ahead;
  };

  const api = {
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
     * Compacts a conversation (docs/spec.md#compress), as the Go host's Compress does.
     *
     * `history`: the messages, in any shape of docs/spec.md#message-shapes (OpenAI Chat,
     * Anthropic, OpenAI Responses items, AI SDK ModelMessages, LangChain
     * message dicts), sent as they are (JSON.stringify of each): a message
     * without an `id` gets the plug-in's derived id, one without
     * `created_at` is dated at the compaction's now; the result's history
     * holds the kept messages exactly as given and the clip-archive as a
     * message of the history's shape (its text also in `clip_archive`).
     *
     * By default the store owns the history (docs/spec.md#who-owns-the-history, history_owner
     * "store"): the messages the store holds nowhere yet (ids as the
     * decodeHistory export gives them) are appended to its active history,
     * and the store's active history is compacted and returned — what the
     * caller sent, less what earlier compactions moved to recall, behind
     * their clip-archive. No history: the store's active history.
     * `callerOwned: true`: see CompressOptions.
     *
     * A failed compaction is not thrown: it is `failed: true` with the
     * history unchanged; only invalid input (and a broken plug-in) throws
     * a ClipfoldError.
     * @param {string} conversationId
     * @param {AnyMessage[] | undefined} [history]
     * @param {CompressOptions} [o]
     * @returns {Promise<CompactionResult>}
     */
    async compress(conversationId, history, o = {}) {
      return (await compress(conversationId, history, o)).result;
    },

    /**
     * The agent loop's helper: compacts when the history is due (as
     * shouldCompact says; a caller-owned one: its compacted view), and
     * then to a target, not to keep_recent — the history ends near
     * `targetShare` of the limit (default 0.8), with as many of the newest
     * messages as fit kept verbatim (contiguous, tool calls with their
     * results, pinned messages always) and only the older rest summarized.
     * Returns null when nothing changed — not due, and the history to send
     * is the one given — else the CompactionResult (a failed compaction is
     * a result, not thrown; a caller-owned list sent whole gets its
     * compacted view back even when nothing new was due).
     * @param {string} conversationId
     * @param {AnyMessage[] | undefined} [history] default: the store's
     * @param {CompactIfDueOptions} [o]
     * @returns {Promise<CompactionResult | null>}
     */
    async compactIfDue(conversationId, history, o = {}) {
      const share = o.targetShare ?? DEFAULT_TARGET_SHARE;
      if (typeof share !== 'number' || !(share >= 0 && share <= 1)) {
        throw invalidArgument('targetShare', `must be a number in [0, 1], got ${describe(share)}`);
      }
      // A caller-owned list: countContext decides, paying for the messages
      // new since the conversation's last check only; compress, which reads
      // the whole list, runs when it is due. (A list under the limit never
      // had a compaction: there is no compacted view to give back.)
      if (o.callerOwned === true && Array.isArray(history)
        && !(await api.countContext(conversationId, history, { usage: o.usage, config: o.config, shape: o.shape })).due) {
        return null;
      }
      let cfg = o.config;
      const explicit = Object.hasOwn(cfg ?? {}, 'target_tokens') || Object.hasOwn(opts.config ?? {}, 'target_tokens');
      if (share > 0 && !explicit) {
        const { limit } = await call('shouldCompact', compact({ messages: [], config: o.config }));
        cfg = { ...cfg, target_tokens: Math.max(1, Math.floor(share * limit)) };
      }
      const { targetShare: _, ...rest } = o;
      const { result, sent } = await compress(conversationId, history, { ...rest, config: cfg, onlyIfDue: true });
      if (!result.failed && result.messages_compressed === 0 && result.history.length === sent.length
        && result.history.every((m, i) => JSON.stringify(m) === JSON.stringify(JSON.parse(sent[i])))) {
        return null;
      }
      return result;
    },

    /**
     * The agent loop's check before each model call, with compaction
     * ahead of time (docs/spec.md#compaction-ahead-of-time): the agent
     * never waits for a summarizer before the history reaches the limit.
     *
     * It counts the history as the model will see it, paying only for the
     * messages new since the last call (see countContext). Over
     * `prepare_at` of the limit (config, default 0.7), or sooner when the
     * history grows fast enough to reach the limit before a compaction would
     * be done, a compaction of the history as it is starts in the background — a dry run on a plug-in
     * instance of its own, a worker — and the call returns at once. A later
     * call that finds it done applies it in one store commit: the result's
     * `history` is then the new clip-archive, the kept messages, and every
     * message that came after the list it compacted, untouched. If the
     * history changed under it (a message it summarized edited or removed,
     * another compaction committed first) it is dropped (`discarded` says
     * why) and nothing is lost. Only when the history reaches the limit
     * first does the call wait — for the rest of the work under way, or,
     * with none, for a compaction run then (as compactIfDue).
     *
     * `history`: as for compress. A caller-owned list is what the last
     * call returned with what followed it appended, or the caller's whole
     * list resent every turn. `targetShare`: as for compactIfDue; a
     * compaction prepared ahead of time targets that share less the
     * distance between the thresholds, so it frees as much as the one at
     * the limit would: no more compactions, and no more summarizer calls,
     * than without it. `usage`: the provider's count of the last model
     * call, for the first `usage.messages` messages of what the model was
     * sent (the history returned, then what followed it).
     *
     * Calls for one conversation take turns; other conversations go on
     * beside them. close() waits for the compactions under way.
     * @param {string} conversationId
     * @param {AnyMessage[] | undefined} [history] default: the store's
     * @param {AheadOptions} [o]
     * @returns {Promise<AheadResult>}
     */
    async compactAhead(conversationId, history, o = {}) {
      if (typeof conversationId !== 'string' || conversationId === '') {
        throw invalidArgument('conversationId', `must be a non-empty string, got ${describe(conversationId)}`);
      }
      if (o === null || typeof o !== 'object') throw invalidArgument('options', `must be an options object, got ${describe(o)}`);
      if (history !== undefined && history !== null && !Array.isArray(history)) {
        throw invalidArgument('history', `must be an array of messages, got ${describe(history)}`);
      }
      const share = o.targetShare ?? DEFAULT_TARGET_SHARE;
      if (typeof share !== 'number' || !(share >= 0 && share <= 1)) {
        throw invalidArgument('targetShare', `must be a number in [0, 1], got ${describe(share)}`);
      }
      if (o.shape !== undefined) requireString(o.shape, 'shape');
      if (o.config !== undefined) requireJSON(o.config, 'config');
      if (o.now !== undefined && typeof o.now !== 'string' && typeof o.now !== 'number') {
        throw invalidArgument('now', `must be an RFC 3339 string or Unix seconds, got ${describe(o.now)}`);
      }
      return aheadState().turn(conversationId, history ?? undefined, {
        callerOwned: bool(o.callerOwned, 'callerOwned'), shape: o.shape, config: o.config, usage: optionalUsage(o.usage),
        targetShare: share, now: o.now,
      });
    },

    /**
     * shouldCompact's answer (with `prepare_limit`), paying only for the
     * messages new since the last call with the same `key`: a history's
     * count is the sum of its messages' counts, so a list that continues
     * the last one (the same first message, and the same message at the
     * last one's end) adds the plug-in's count of its new messages alone;
     * with `usage`, the provider's count plus that of the messages after
     * the ones it covered. Every count is the plug-in's (estimateTokens,
     * on the instance of the pure exports: a compaction under way never
     * delays it). Under `token_estimator: "chars4"` the whole list is
     * counted. Messages are taken as unchanged once counted, as agent
     * frameworks keep them.
     * @param {string} key
     * @param {AnyMessage[]} messages
     * @param {CountContextOptions} [o]
     * @returns {Promise<ContextCount>}
     */
    async countContext(key, messages, o = {}) {
      requireString(key, 'key');
      if (o === null || typeof o !== 'object') throw invalidArgument('options', `must be an options object, got ${describe(o)}`);
      if (o.shape !== undefined) requireString(o.shape, 'shape');
      if (o.config !== undefined) requireJSON(o.config, 'config');
      return aheadState().counter.count(key, messages, optionalUsage(o.usage), o.config, o.shape);
    },

    /**
     * Resolves when the compactions compactAhead started in the
     * background have finished (they are applied, or dropped, by the
     * conversation's next compactAhead).
     * @returns {Promise<void>}
     */
    async aheadSettled() {
      await ahead?.settled();
    },

    /**
     * The decodeHistory export: what compress reads of each message — its
     * id (given, or derived in conversationId as compress derives it), its
     * role as clipfold reads it, the text a store keeps, its time — and the
     * shape the list is read as.
     * @param {string} conversationId
     * @param {AnyMessage[]} history
     * @param {{shape?: HistoryShape}} [o]
     * @returns {Promise<{shape: string, messages: DecodedMessage[]}>}
     */
    decodeHistory: async (conversationId, history, o = {}) => decodeRaw(conversationId, texts(history), o.shape),

    /** @param {Message[]} messages @param {Config} [cfg] @returns {Promise<{scores: number[]}>} */
    score: (messages, cfg) => call('score', compact({ messages, config: cfg })),
    /** @param {Message[]} messages @param {Config} [cfg] @returns {Promise<{to_compress: Message[], to_keep: Message[], prior_summary: Message | null}>} */
    split: (messages, cfg) => call('split', compact({ messages, config: cfg })),
    /** @param {Message[]} messages @param {Config} [cfg] @returns {Promise<{chunks: Message[][]}>} */
    chunk: (messages, cfg) => call('chunk', compact({ messages, config: cfg })),
    /**
     * The plug-in's estimate of a text, or of messages (tool calls and
     * results, image_tokens per image, per-message framing), under the
     * config's token_estimator.
     * @param {string | AnyMessage[]} textOrMessages @param {Config} [cfg] @returns {Promise<{tokens: number}>}
     */
    estimateTokens: (textOrMessages, cfg) => call('estimateTokens', compact(typeof textOrMessages === 'string'
      ? { text: textOrMessages, config: cfg } : { messages: textOrMessages, config: cfg })),
    /**
     * Whether messages are over the budget (context_budget ×
     * model_max_tokens): the check before each model call. `usage`: the
     * provider's count of the last model call, `{input_tokens: N,
     * messages: K}` — the request held the first K messages (with the
     * system prompt and tools) and counted N; those count N, only the rest
     * is estimated, and overhead_tokens is not added. Without it every
     * message is estimated and overhead_tokens (see overheadTokens) added.
     * @param {AnyMessage[]} messages @param {Config} [cfg] @param {ContextUsage | null} [usage]
     * @returns {Promise<ContextCount>}
     */
    shouldCompact: async (messages, cfg, usage) => call('shouldCompact', compact({ messages, config: cfg, usage: optionalUsage(usage) })),
    /**
     * What a model request sends beside its messages — the system prompt
     * and the tool schemas (any JSON value, such as the provider's tools
     * array) — as the plug-in's estimateTokens export counts them under
     * `config` (its token_estimator). Pass it as the config key
     * overhead_tokens for counts made without the provider's usage
     * (before the first model call).
     * @param {{system?: string | null, tools?: unknown, config?: Config}} [o]
     * @returns {Promise<number>}
     */
    async overheadTokens(o = {}) {
      if (o === null || typeof o !== 'object') throw invalidArgument('options', `must be an options object, got ${describe(o)}`);
      if (o.system !== undefined && o.system !== null) requireString(o.system, 'system');
      /** @type {{role: 'system', content: string}[]} */
      const parts = [];
      if (o.system) parts.push({ role: 'system', content: o.system });
      if (o.tools !== undefined && o.tools !== null) {
        const text = stringifyJSON(o.tools, 'tools');
        if (text === undefined) throw invalidArgument('tools', `must be a JSON value, got ${describe(o.tools)}`);
        if (text !== '[]' && text !== '{}') parts.push({ role: 'system', content: text });
      }
      if (parts.length === 0) return 0;
      return (await call('estimateTokens', compact({ messages: parts, config: o.config }))).tokens;
    },
    /** @param {{system_prompt?: string|null, previous_summary?: string|null, messages: Message[], model?: string, max_tokens?: number}} input @returns {Promise<import('./types.js').ModelRequest>} */
    buildSummarizationRequest: (input) => call('buildSummarizationRequest', input),
    /** @param {{system_prompt?: string|null, batch_contents: string[], model?: string, max_tokens?: number}} input @returns {Promise<import('./types.js').ModelRequest>} */
    buildResummarizationRequest: (input) => call('buildResummarizationRequest', input),
    /** @param {{batches: import('./types.js').Batch[], config?: Config, total_messages_compressed?: number}} input @returns {Promise<{content: string}>} */
    buildClipArchive: (input) => call('buildClipArchive', input),
    /** @returns {Promise<{version: string, abi: number}>} */
    version: () => call('version', {}),
    /**
     * The plug-in's analysis of a natural-language search query (searchQuery,
     * docs/spec.md#searchquery): the terms, the FTS5 expression and the tsquery.
     * @param {string} query
     * @param {{language?: string}} [o]
     * @returns {Promise<SearchQuery>}
     */
    searchQuery: async (query, o = {}) => call('searchQuery', compact({ query: requireString(query, 'query'), language: o.language })),

    /**
     * Searches what compaction archived (memory_read, docs/spec.md#search) — batch
     * summaries and recalled messages — and what is still in the context
     * (hits with `in_context`: the store's active history, or
     * `o.inContext`), one list, best first, ties to the more recent. The
     * question is analysed by the plug-in's searchQuery export, then run by
     * the store (`searchFts5` of SQLiteStore / MemoryStore; a custom store
     * needs `search(query, opts)`). `o.inContext`: the messages in the
     * model's context when the caller keeps them (caller-owned; any shape,
     * as compress takes them; `conversationId` required), decoded by the
     * plug-in with what the index holds for each and ranked with the
     * store's documents for this search only.
     * @param {string} query a question as a person asks it
     * @param {Omit<SearchOptions, 'inContext'> & {inContext?: AnyMessage[] | null, shape?: HistoryShape}} [o]
     * @returns {Promise<SearchHit[]>}
     */
    async search(query, o = {}) {
      requireString(query, 'query');
      if (o === null || typeof o !== 'object') throw invalidArgument('options', `must be an options object, got ${describe(o)}`);
      if (o.conversationId !== undefined) requireString(o.conversationId, 'conversationId');
      if (o.limit !== undefined && !Number.isInteger(o.limit)) throw invalidArgument('limit', `must be a whole number, got ${describe(o.limit)}`);
      const s = /** @type {any} */ (store);
      /** @type {SearchOptions} */
      const so = { conversationId: o.conversationId, limit: o.limit };
      if (o.inContext !== undefined && o.inContext !== null) {
        if (!o.conversationId) throw invalidArgument('conversationId', 'a search with inContext messages needs the conversation they are the context of');
        if (!Array.isArray(o.inContext)) throw invalidArgument('inContext', `must be an array of messages, got ${describe(o.inContext)}`);
        so.inContext = (await decodeRaw(o.conversationId, texts(o.inContext), o.shape, true)).messages;
      }
      if (typeof s.searchFts5 === 'function') {
        const q = await call('searchQuery', { query });
        return s.searchFts5(q.fts5, so);
      }
      if (typeof s.search === 'function') return s.search(query, so);
      throw new TypeError('search: the store has neither searchFts5(match, opts) nor search(query, opts)');
    },

    /**
     * The buildMemoryRead export: `hits` (a search's, best first) as the
     * answer of a memory_read tool call, within `maxTokens` (default
     * 1,000; at least 150) counted as the window is: whole hits first, then
     * the best passage of the next, then what was left out and how to read
     * it. `byId`: records the agent asked for by id (one over the budget is
     * shown as its passage about `query`).
     * @param {string} query
     * @param {SearchHit[]} hits
     * @param {{maxTokens?: number, byId?: boolean}} [o]
     * @returns {Promise<MemoryReadResult>}
     */
    buildMemoryRead: async (query, hits, o = {}) => {
      requireString(query, 'query');
      if (!Array.isArray(hits)) throw invalidArgument('hits', `must be an array of search hits, got ${describe(hits)}`);
      if (o.maxTokens !== undefined && !Number.isInteger(o.maxTokens)) throw invalidArgument('maxTokens', `must be a whole number, got ${describe(o.maxTokens)}`);
      return call('buildMemoryRead', compact({ query, hits, max_tokens: o.maxTokens, by_id: bool(o.byId, 'byId') || undefined }));
    },

    /**
     * A recalled message or an archived batch by id (a search hit's id), in
     * full; null when the store holds no such id. `conversationId`: the
     * message's conversation (ids are unique within a conversation only;
     * a search hit has it); without it, the only conversation that holds
     * the id, an error naming them when several do.
     * @param {string} id
     * @param {{conversationId?: string}} [o]
     * @returns {Promise<ReadRecord | null>}
     */
    async read(id, o = {}) {
      const s = /** @type {any} */ (store);
      requireString(id, 'id');
      if (o === null || typeof o !== 'object') throw invalidArgument('options', `must be an options object, got ${describe(o)}`);
      if (o.conversationId !== undefined) requireString(o.conversationId, 'conversationId');
      if (typeof s.read !== 'function') throw new TypeError('read: the store has no read(id)');
      return (await s.read(id, o.conversationId ?? '')) ?? null;
    },

    /** Releases the instances (and the worker threads), once the compactions under way have finished. */
    async close() {
      await ahead?.settled();
      storePlugin.close();
      await Promise.all([pure.close(), host?.close(), ...aheadPool.map((s) => s.instance.close())]);
    },
  };
  return api;
}
