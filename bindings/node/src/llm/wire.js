/**
 * The OpenAI chat-completions wire format in JavaScript: a mirror of
 * core/provider.go (ProviderRequest/ProviderResponse, provider "openai"),
 * used when the plug-in build does not export providerRequest and
 * providerResponse. When it does, the adapters use the plug-in's exports
 * instead, so every host sends exactly the same bytes.
 * @module
 */

export const OPENAI_PATH = '/v1/chat/completions';
export const CONTINUATION_PLACEHOLDER = '(conversation continues)';

/**
 * @typedef {import('../types.js').ModelRequest} ModelRequest
 * @typedef {import('../types.js').ModelResponse} ModelResponse
 * @typedef {import('../types.js').HostErrorObject} HostErrorObject
 */

/** @param {unknown} c */
export function contentText(c) {
  if (typeof c === 'string') return c;
  if (Array.isArray(c)) {
    return c.filter((p) => typeof p === 'string' || p?.type === 'text')
      .map((p) => (typeof p === 'string' ? p : String(p.text ?? ''))).join('\n');
  }
  return '';
}

/**
 * @param {ModelRequest} req
 * @returns {{url_path: string, body: object}}
 */
export function openAIRequest(req) {
  if (!req || typeof req !== 'object') throw new TypeError('request: missing');
  const temperature = req.temperature ?? 0;
  if (!Number.isFinite(temperature)) throw new TypeError('request.temperature: must be a finite number');
  /** @type {{role: string, content: string}[]} */
  const messages = [];
  if (typeof req.system === 'string' && req.system.trim() !== '') messages.push({ role: 'system', content: req.system });
  (req.messages ?? []).forEach((m, i) => {
    if (!['user', 'assistant', 'system'].includes(m?.role)) {
      throw new TypeError(`request.messages[${i}].role: must be user, assistant or system, got ${m?.role}`);
    }
    const content = contentText(m.content);
    if (content.trim() !== '') messages.push({ role: m.role, content });
  });
  if (messages.length === 0) messages.push({ role: 'user', content: CONTINUATION_PLACEHOLDER });
  /** @type {Record<string, unknown>} */
  const body = { model: req.model ?? '', messages };
  if ((req.max_tokens ?? 0) > 0) body.max_tokens = req.max_tokens;
  body.temperature = temperature;
  return { url_path: OPENAI_PATH, body };
}

const FINISH = /** @type {Record<string, string>} */ ({
  stop: 'end_turn', length: 'max_tokens', tool_calls: 'tool_use', function_call: 'tool_use', content_filter: 'refusal',
});

const CONTEXT_PHRASES = ['prompt is too long', 'context_length_exceeded', 'maximum context length', 'context length',
  'context limit', 'context size', 'context window'];

/**
 * Maps a failed response onto SPEC's LLM error codes (as core.classify).
 * @param {number} status
 * @param {string} errType
 * @param {string} code
 * @param {string} msg
 * @returns {HostErrorObject}
 */
export function classify(status, errType, code, msg) {
  const e = (/** @type {string} */ c, /** @type {boolean} */ retryable) => ({ error: { code: c, message: msg, retryable } });
  for (const k of [code, errType]) {
    switch (k) {
      case 'rate_limit_error': case 'rate_limit_exceeded': return e('rate_limited', true);
      case 'insufficient_quota': return e('rate_limited', false);
      case 'overloaded_error': case 'api_error': case 'server_error': return e('unavailable', true);
      case 'timeout_error': return e('timeout', true);
      case 'authentication_error': case 'permission_error': case 'invalid_api_key': case 'billing_error': return e('auth', false);
      case 'context_length_exceeded': case 'exceed_context_size_error': case 'request_too_large': return e('context_overflow', false);
    }
  }
  if (status === 429) return e('rate_limited', true);
  if (status === 401 || status === 403) return e('auth', false);
  if (status === 408 || status === 504) return e('timeout', true);
  const lower = msg.toLowerCase();
  if (CONTEXT_PHRASES.some((p) => lower.includes(p))) return e('context_overflow', false);
  if (status === 413) return e('context_overflow', false);
  if (status >= 500) return e('unavailable', true);
  if (status >= 400) return e('invalid_request', false);
  return e('other', false);
}

/** @param {any} root */
function bodyError(root) {
  if (root && typeof root === 'object' && 'error' in root) return root.error;
  if (root?.object === 'error' || root?.type === 'error') return root;
  return undefined;
}

/**
 * @param {number} status
 * @param {any} root  parsed body, or undefined when it is not JSON
 * @param {string} text
 */
function providerError(status, root, text) {
  let errType = '', code = '', msg = '';
  const e = bodyError(root);
  if (typeof e === 'string') msg = e;
  else if (e && typeof e === 'object') {
    msg = typeof e.message === 'string' ? e.message : '';
    errType = typeof e.type === 'string' ? e.type : '';
    code = e.code === undefined || e.code === null ? '' : String(e.code);
  }
  if (msg === '' && root && typeof root === 'object') {
    for (const k of ['message', 'detail']) {
      if (typeof root[k] === 'string' && root[k] !== '') { msg = root[k]; break; }
    }
  }
  if (msg === '') {
    msg = `HTTP ${status}`;
    const snippet = text.trim();
    if (snippet) msg += `: ${[...snippet].length > 200 ? [...snippet].slice(0, 200).join('') + '…' : snippet}`;
  }
  return classify(status, errType, code, msg);
}

/**
 * Reads a chat-completions response. A 2xx that is not the success shape
 * is an `other` error (a misconfigured base URL or proxy).
 * @param {number} status
 * @param {string} text the response body
 * @returns {ModelResponse | HostErrorObject}
 */
export function openAIResponse(status, text) {
  let root;
  try { root = JSON.parse(text); } catch { root = undefined; }
  if (status < 200 || status > 299) return providerError(status, root, text);
  const bad = (/** @type {string} */ what) => ({ error: { code: 'other', message: `unexpected response: ${what}`, retryable: false } });
  if (root === undefined) return bad('body: not valid JSON');
  if (!root || typeof root !== 'object' || Array.isArray(root)) return bad('body: must be a JSON object');
  const e = bodyError(root);
  if (e !== undefined && e !== null) return providerError(status, root, text);
  const choice = Array.isArray(root.choices) ? root.choices[0] : undefined;
  if (!choice) return bad('body.choices: must be a non-empty array');
  const msg = choice.message;
  if (!msg || typeof msg !== 'object') return bad('body.choices[0].message: must be an object');
  const c = msg.content;
  if (c !== undefined && c !== null && typeof c !== 'string' && !Array.isArray(c)) {
    return bad('body.choices[0].message.content: must be a string, null or an array of content parts');
  }
  const reason = typeof choice.finish_reason === 'string' ? choice.finish_reason : '';
  return {
    content: [{ type: 'text', text: c === undefined || c === null ? '' : contentText(c) }],
    stop_reason: FINISH[reason] ?? reason,
    usage: { input_tokens: Math.trunc(Number(root.usage?.prompt_tokens ?? 0)) || 0, output_tokens: Math.trunc(Number(root.usage?.completion_tokens ?? 0)) || 0 },
  };
}
