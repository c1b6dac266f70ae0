/**
 * clipfold for Node.js: the clipfold Wasm plug-in through @extism/extism,
 * with the host functions (llm_complete, memory_list, compaction_commit)
 * in JavaScript.
 *
 * ```js
 * import { createCompactor, openaiCompatible, MemoryStore } from '@clipfold/node-host';
 * const c = await createCompactor({ llm: openaiCompatible({ baseUrl, apiKey, model }) });
 * const result = await c.compress('conv-1', history);
 * ```
 * @module
 */
export { createCompactor, findWasm, manifestConfig, DEFAULT_TARGET_SHARE } from './compactor.js';
export { ClipfoldError, HostError } from './errors.js';
export { MemoryStore } from './store.js';
export { openaiCompatible, endpoint, DEFAULT_OPENAI_BASE_URL } from './llm/openai.js';
export { offlineLLM, OFFLINE_LLM } from './llm/extractive.js';
export { hostFunctions, stubHostFunctions, HOST_NAMESPACE, HOST_FUNCTION_NAMES } from './hostfns.js';
export { compileWasm, PluginInstance, STAGE_MIN, DEFAULT_MAX_MEMORY } from './instance.js';
