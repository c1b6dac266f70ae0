/**
 * llm_complete over HTTP for OpenAI-compatible servers (OpenAI,
 * OpenRouter, vLLM, llama.cpp server, LM Studio, Ollama's /v1, …).
 * @module
 */
import { ClipfoldError } from '../errors.js';
import { redact } from '../redact.js';
import { sharedPlugin } from '../shared.js';

/**
 * @typedef {import('../types.js').ModelRequest} ModelRequest
 * @typedef {import('../types.js').ModelResponse} ModelResponse
 * @typedef {import('../types.js').HostErrorObject} HostErrorObject
 * @typedef {{has(name: string): boolean, callJSON(name: string, input: unknown): Promise<any>}} PluginCaller
 */

export const DEFAULT_OPENAI_BASE_URL = 'https://api.openai.com/v1';
export const DEFAULT_TIMEOUT_MS = 120_000;
const MAX_RESPONSE_BYTES = 16 << 20;
/** The redirects followed at most (fetch's own limit). */
const MAX_REDIRECTS = 20;

/**
 * Joins a base URL and an endpoint path without doubling the version
 * segment: ".../api/v1" + "/v1/chat/completions" is
 * ".../api/v1/chat/completions"; "http://localhost:8080" keeps "/v1".
 * @param {string} base
 * @param {string} path
 */
export function endpoint(base, path) {
  const b = base.replace(/\/+$/, '');
  const i = path.indexOf('/', 1);
  if (i > 0) {
    const seg = path.slice(0, i);
    if (b.endsWith(seg)) return b + path.slice(seg.length);
  }
  return b + path;
}

/**
 * @param {string} code
 * @param {string} message
 * @param {boolean} retryable
 * @returns {HostErrorObject}
 */
const fail = (code, message, retryable) => ({ error: { code, message: redact(message), retryable } });

/**
 * What to do with an answer that may be a redirect: null when it is not
 * one, the URL to send the same request to (a 307 or 308 on the same
 * origin: method and body kept), or why it is refused — another origin
 * (scheme, host or port) would get the key and the conversation; a 301,
 * 302 or 303 would turn the POST into a bodiless GET.
 * @param {string} from the URL the answer came from
 * @param {Response} res
 * @returns {null | {follow: string} | {refuse: string}}
 */
function redirectOf(from, res) {
  if (res.type === 'opaqueredirect') {
    return { refuse: `${from} answered with a redirect this fetch does not show: refused; set baseUrl to the address that answers` };
  }
  const location = res.headers.get('location');
  if (![301, 302, 303, 307, 308].includes(res.status) || location === null) return null;
  let to;
  try { to = new URL(location, from); } catch {
    return { refuse: `${from} redirected (HTTP ${res.status}) to an invalid URL: refused` };
  }
  const origin = new URL(from).origin;
  if (to.origin !== origin) {
    return { refuse: `the server at ${origin} redirected (HTTP ${res.status}) to another host, ${to.origin}: refused, `
      + `so that neither the API key nor the request leaves ${origin}; set baseUrl to the server that answers` };
  }
  if (res.status !== 307 && res.status !== 308) {
    return { refuse: `${from} redirected (HTTP ${res.status}) to ${to.href}: refused, because following it would resend `
      + 'the POST as a GET without its body; set baseUrl to the address that answers' };
  }
  return { follow: to.href };
}

/**
 * An llm_complete implementation for an OpenAI-compatible endpoint: POST
 * {baseUrl}/v1/chat/completions (never /v1/v1), a Bearer key when there is
 * one, each call bounded by the request's timeout_ms (the compaction's time
 * left) and by `timeoutMs`.
 *
 * Errors: 429 rate_limited (retryable), 5xx unavailable (retryable),
 * 401/403 auth, a context-length 400 context_overflow, other 4xx
 * invalid_request, an abort or timeout `timeout` (retryable), an
 * unreachable server unavailable (retryable).
 *
 * The key and the conversation never leave the base URL's host: a redirect
 * to another origin (scheme, host or port) is a non-retryable `other`
 * error naming both, and the other host is never contacted; on the same
 * origin a 307 or 308 is followed, a 301, 302 or 303 (which would resend
 * the POST as a GET without its body) is an error too. The adapter asks
 * `fetch` (its own, or `opts.fetch`) for `redirect: 'manual'`. URLs in
 * error messages keep no password and no key-like query parameter.
 *
 * @param {object} [opts]
 * @param {string} [opts.baseUrl]  default https://api.openai.com/v1
 * @param {string} [opts.apiKey]   default $OPENAI_API_KEY; none sends no Authorization header
 * @param {string} [opts.model]    used when the request names no model
 * @param {number} [opts.timeoutMs] cap on each call, default 120000
 * @param {Record<string, string>} [opts.headers] extra headers
 * @param {typeof fetch} [opts.fetch]
 */
export function openaiCompatible(opts = {}) {
  /** @param {string} field @param {string} what */
  const bad = (field, what) => new ClipfoldError('invalid_input', `${field}: ${what}`);
  if (opts === null || typeof opts !== 'object') throw bad('opts', 'must be an options object');
  const given = opts.baseUrl ?? DEFAULT_OPENAI_BASE_URL;
  if (typeof given !== 'string') throw bad('baseUrl', `must be an http:// or https:// URL, got ${typeof given}`);
  const base = given.replace(/\/+$/, '');
  let u;
  try { u = new URL(base); } catch { u = null; }
  if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:')) {
    throw bad('baseUrl', `${JSON.stringify(redact(given))} must be an http:// or https:// URL`);
  }
  const apiKey = opts.apiKey ?? process.env.OPENAI_API_KEY ?? '';
  if (typeof apiKey !== 'string') throw bad('apiKey', `must be a string, got ${typeof apiKey}`);
  if (opts.model !== undefined && typeof opts.model !== 'string') throw bad('model', `must be a string, got ${typeof opts.model}`);
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (typeof timeoutMs !== 'number' || !(timeoutMs > 0) || timeoutMs === Infinity) {
    throw bad('timeoutMs', `must be a number of milliseconds > 0, got ${String(timeoutMs)}`);
  }
  if (opts.headers !== undefined && (opts.headers === null || typeof opts.headers !== 'object'
    || !Object.values(opts.headers).every((v) => typeof v === 'string'))) {
    throw bad('headers', 'must map header names to string values');
  }
  if (opts.fetch !== undefined && typeof opts.fetch !== 'function') throw bad('fetch', 'must be a function');
  const doFetch = opts.fetch ?? globalThis.fetch;
  /** @type {PluginCaller | null} */
  let plugin = null;

  /** The plug-in's exports: the compactor's (bindPlugin), else the shared instance. */
  const exportsOf = async () => plugin ?? (plugin = await sharedPlugin());

  /**
   * The wire request: the plug-in's providerRequest export, so every host
   * sends exactly the same bytes.
   * @param {ModelRequest} req
   * @returns {Promise<{url_path: string, body: object}>}
   */
  async function build(req) {
    return (await exportsOf()).callJSON('providerRequest', { provider: 'openai', request: req });
  }

  /**
   * The answer read by the plug-in's providerResponse export.
   * @param {number} status
   * @param {string} text
   * @returns {Promise<ModelResponse | HostErrorObject>}
   */
  async function read(status, text) {
    try {
      return await (await exportsOf()).callJSON('providerResponse', { provider: 'openai', status, body: text });
    } catch (err) {
      // A 2xx that is not a chat-completions body.
      return fail('other', `unexpected response: ${/** @type {Error} */ (err).message}`, false);
    }
  }

  return {
    name: 'openai-compatible',
    baseUrl: base,

    /**
     * Lets the adapter use the plug-in's providerRequest/providerResponse
     * exports (createCompactor calls it).
     * @param {PluginCaller} p
     */
    bindPlugin(p) { plugin = p; },

    /**
     * @param {ModelRequest} req
     * @returns {Promise<ModelResponse | HostErrorObject>}
     */
    async complete(req) {
      const r = { ...req };
      if (!r.model && opts.model) r.model = opts.model;
      let wire;
      try {
        wire = await build(r);
      } catch (err) {
        return fail('invalid_request', `openai: ${/** @type {Error} */ (err).message}`, false);
      }
      const url = endpoint(base, wire.url_path);
      let limit = timeoutMs;
      if (typeof req.timeout_ms === 'number' && req.timeout_ms > 0 && req.timeout_ms < limit) limit = req.timeout_ms;
      /** @type {Record<string, string>} */
      const headers = {
        'content-type': 'application/json', accept: 'application/json', 'user-agent': 'clipfold', ...opts.headers,
      };
      if (apiKey) headers.authorization = `Bearer ${apiKey}`;
      const signal = AbortSignal.timeout(Math.max(1, Math.floor(limit)));
      const body = JSON.stringify(wire.body);
      let res, text;
      try {
        let target = url;
        for (let hops = 0; ; hops++) {
          res = await doFetch(target, { method: 'POST', headers, body, signal, redirect: 'manual' });
          const next = redirectOf(target, res);
          if (next === null) break;
          await res.body?.cancel();
          if ('refuse' in next) return fail('other', `openai: ${next.refuse}`, false);
          if (hops >= MAX_REDIRECTS) return fail('other', `openai: ${url}: stopped after ${MAX_REDIRECTS} redirects`, false);
          target = next.follow;
        }
        const buf = await res.arrayBuffer();
        if (buf.byteLength > MAX_RESPONSE_BYTES) return fail('other', `openai: response from ${url} is larger than ${MAX_RESPONSE_BYTES} bytes`, false);
        text = new TextDecoder().decode(buf);
      } catch (err) {
        const e = /** @type {Error & {cause?: any}} */ (err);
        if (signal.aborted || e?.name === 'TimeoutError' || e?.name === 'AbortError') {
          return fail('timeout', `openai: no response from ${url} within ${limit} ms`, true);
        }
        const why = e?.cause?.code ?? e?.cause?.message ?? e?.message ?? String(err);
        return fail('unavailable', `openai: cannot reach ${url}: ${why}`, true);
      }
      const out = await read(res.status, text);
      if ('error' in out && typeof out.error?.message === 'string') out.error.message = redact(out.error.message);
      return out;
    },
  };
}
