/**
 * The offline summarizer. clipfold's extractive summarizer lives in the
 * plug-in, once for every host: `createCompactor` without an `llm` (or with
 * `offlineLLM()`) sets the config key `summarizer: "extractive"`, so
 * `compress` summarizes inside the plug-in from the messages themselves
 * (dated lines, batches marked `method: "extractive"`) and never calls
 * llm_complete. `offlineLLM()` remains as an LLM-shaped adapter (for
 * `fallback`, or to use the summarizer as a stand-in LLM elsewhere): it
 * answers a ModelRequest with the plug-in's `extractiveSummary` export.
 * There is no JavaScript copy of the summarizer.
 * @module
 */

/**
 * @typedef {import('../types.js').ModelRequest} ModelRequest
 * @typedef {import('../types.js').ModelResponse} ModelResponse
 * @typedef {{has(name: string): boolean, callJSON(name: string, input: unknown): Promise<any>}} PluginCaller
 */

/** Marks the adapters offlineLLM() makes, so createCompactor can tell them apart. */
export const OFFLINE_LLM = Symbol.for('clipfold.offlineLLM');

/**
 * Reads what the plug-in's extractive export returned.
 * @param {any} out
 * @returns {ModelResponse}
 */
function asResponse(out) {
  if (out && Array.isArray(out.content)) return out;
  const text = typeof out === 'string' ? out : typeof out?.content === 'string' ? out.content : '';
  return { content: [{ type: 'text', text }], stop_reason: 'end_turn', usage: { input_tokens: 0, output_tokens: 0 } };
}

/**
 * The offline LLM: the plug-in's `extractiveSummary` export, bound by
 * `createCompactor`. Before it is bound (or with a build that lacks the
 * export) it answers with a non-retryable `unavailable` error, so a
 * compaction fails safely instead of summarizing some other way.
 * @returns {{name: string, [OFFLINE_LLM]: true, bindPlugin(p: PluginCaller): void, complete(req: ModelRequest): Promise<ModelResponse | {error: {code: string, message: string, retryable: boolean}}>}}
 */
export function offlineLLM() {
  /** @type {PluginCaller | null} */
  let plugin = null;
  return {
    name: 'extractive',
    [OFFLINE_LLM]: true,
    bindPlugin(p) { plugin = p; },
    async complete(req) {
      if (!plugin?.has('extractiveSummary')) {
        return { error: { code: 'unavailable', message: 'offlineLLM: no plug-in with the extractiveSummary export is bound (createCompactor binds it)', retryable: false } };
      }
      return asResponse(await plugin.callJSON('extractiveSummary', req));
    },
  };
}
