/**
 * clipfold for Node.js: the clipfold Wasm plug-in through @extism/extism,
 * with the host functions (llm_complete, memory_list, compaction_commit)
 * in JavaScript.
 *
 * ```js
 * import { createCompactor, SQLiteStore } from 'clipfold';
 * const store = new SQLiteStore('agent.db');
 * const c = await createCompactor({ store });   // offline; or llm: openaiCompatible({ baseUrl, apiKey, model })
 * store.append('conv-1', history);
 * const result = await c.compress('conv-1');
 * const hits = await c.search('when did we decide to upgrade Postgres?', { conversationId: 'conv-1' });
 * ```
 * @module
 */
export { createCompactor, findWasm, manifestConfig, DEFAULT_TARGET_SHARE, DEFAULT_MEMORY_READ_TOKENS, AHEAD_INSTANCES } from './compactor.js';
// The wire and API types (JSDoc typedefs: nothing at run time).
export * from './types.js';
/**
 * @template {import('./types.js').Store} [S=MemoryStore]
 * @typedef {import('./compactor.js').Compactor<S>} Compactor
 * @typedef {import('./compactor.js').CompactorOptions<S>} CompactorOptions
 */
/** @typedef {import('./sqlite.js').SQLiteStoreOptions} SQLiteStoreOptions */
/** @typedef {import('./compactor.js').CompressOptions} CompressOptions */
/** @typedef {import('./compactor.js').CompactIfDueOptions} CompactIfDueOptions */
/** @typedef {import('./compactor.js').AheadOptions} AheadOptions */
/** @typedef {import('./compactor.js').CountContextOptions} CountContextOptions */
/** @typedef {import('./compactor.js').AnyMessage} AnyMessage */
/** @typedef {import('./compactor.js').HistoryShape} HistoryShape */
/** @typedef {import('./compactor.js').DecodedMessage} DecodedMessage */
export { ClipfoldError, HostError } from './errors.js';
import { MemoryStore } from './store.js';

export {
  SQLiteStore, MemoryStore, MEMORY_PATH, BUSY_TIMEOUT_MS, DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT,
} from './store.js';
export { sqlDir, PACKAGE_DIR } from './paths.js';
export { openaiCompatible, endpoint, DEFAULT_OPENAI_BASE_URL } from './llm/openai.js';
export { usageOf } from './llm/usage.js';
export { offlineLLM, OFFLINE_LLM } from './llm/extractive.js';
export { hostFunctions, stubHostFunctions, HOST_NAMESPACE, HOST_FUNCTION_NAMES } from './hostfns.js';
export { compileWasm, PluginInstance, STAGE_MIN, DEFAULT_MAX_MEMORY } from './instance.js';
/** Helpers that put a compacted history back on a provider's wire (see wire.js). */
export * as wire from './wire.js';
