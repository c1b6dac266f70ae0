/**
 * The provider's usage of a model call made with clipfold's LLM clients.
 * @module
 */

/**
 * The provider's count of a model call, as shouldCompact and compress take
 * it: the input tokens of `response` for the messages `request` held. For
 * a host that runs its agent loop with these clients (openaiCompatible)
 * and keeps the request's messages as its history. null when the response
 * has no usage (an error, or a provider that reports none).
 * @param {{messages?: unknown[]}} request
 * @param {import('../types.js').ModelResponse | import('../types.js').HostErrorObject} response
 * @returns {import('../types.js').ContextUsage | null}
 */
export function usageOf(request, response) {
  if (!response || 'error' in response) return null;
  const n = response.usage?.input_tokens;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n <= 0) return null;
  return { input_tokens: n, messages: Array.isArray(request?.messages) ? request.messages.length : 0 };
}
