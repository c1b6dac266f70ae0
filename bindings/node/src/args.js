/**
 * Checks of the public API's arguments: a wrong type is a ClipfoldError
 * naming the argument, never a value silently coerced (String(null) is
 * "null"; JSON.stringify writes NaN and ±Infinity as null).
 * @module
 */
import { ClipfoldError } from './errors.js';

/**
 * An `invalid_input` error naming `field`.
 * @param {string} field
 * @param {string} what
 */
export function invalidArgument(field, what) {
  return new ClipfoldError('invalid_input', `${field}: ${what}`);
}

/**
 * How a value reads in an error message.
 * @param {unknown} v
 */
export function describe(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return `a ${typeof v}`;
}

/**
 * `v`, a string; else a ClipfoldError naming `field`.
 * @param {unknown} v
 * @param {string} field
 * @returns {string}
 */
export function requireString(v, field) {
  if (typeof v !== 'string') throw invalidArgument(field, `must be a string, got ${describe(v)}`);
  return v;
}

/**
 * `v` as a flag: undefined is false, true and false are themselves; else a
 * ClipfoldError naming `field`.
 * @param {unknown} v
 * @param {string} field
 * @returns {boolean}
 */
export function optionalBool(v, field) {
  if (v !== undefined && typeof v !== 'boolean') throw invalidArgument(field, `must be true or false, got ${describe(v)}`);
  return v === true;
}

/**
 * Throws a ClipfoldError naming the first place in `value` whose number
 * JSON cannot hold (NaN, ±Infinity, a BigInt), which JSON.stringify
 * would write as null or refuse without saying where. `root` names
 * `value` ("history[3]"; "" for an export's input object). Follows toJSON
 * as JSON.stringify does; a cycle is left to JSON.stringify to report.
 * @param {unknown} value
 * @param {string} root
 */
export function requireJSON(value, root) {
  /** @type {Set<object>} */
  const open = new Set();
  /** @param {unknown} v @param {string} path */
  const walk = (v, path) => {
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) throw invalidArgument(path || 'input', `${v} is not a JSON number`);
      return;
    }
    if (typeof v === 'bigint') throw invalidArgument(path || 'input', `a BigInt (${v}n) is not a JSON number`);
    if (v === null || typeof v !== 'object' || open.has(v)) return;
    const j = /** @type {any} */ (v).toJSON;
    if (typeof j === 'function') {
      walk(j.call(v, ''), path);
      return;
    }
    open.add(v);
    if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${path}[${i}]`));
    else for (const k of Object.keys(v)) walk(/** @type {any} */ (v)[k], path ? `${path}.${k}` : k);
    open.delete(v);
  };
  walk(value, root);
}

/**
 * JSON.stringify(value), refusing what it would coerce (see requireJSON).
 * The walk runs only when the text holds a null (NaN and ±Infinity become
 * one) or stringify threw (a BigInt), so the common case costs one scan.
 * @param {unknown} value
 * @param {string} root
 * @returns {string | undefined}
 */
export function stringifyJSON(value, root) {
  let text;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    requireJSON(value, root);
    throw err;
  }
  if (text !== undefined && text.includes('null')) requireJSON(value, root);
  return text;
}

/**
 * `usage` (the provider's count of the last model call): undefined or
 * null, or `{input_tokens, messages}` of whole numbers ≥ 0 (other keys are
 * left out); else a ClipfoldError naming `usage` or its key. Whether
 * `messages` is within the history is the plug-in's to say
 * (`usage.messages`).
 * @param {unknown} v
 * @returns {import('./types.js').ContextUsage | undefined}
 */
export function optionalUsage(v) {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) {
    throw invalidArgument('usage', `must be an object {input_tokens: N, messages: K}, got ${describe(v)}`);
  }
  const u = /** @type {Record<string, unknown>} */ (v);
  /** @type {Record<string, number>} */
  const out = {};
  for (const key of ['input_tokens', 'messages']) {
    const n = u[key];
    if (n === undefined) throw invalidArgument(`usage.${key}`, 'is required');
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) {
      throw invalidArgument(`usage.${key}`, `must be a whole number ≥ 0, got ${describe(n)}`);
    }
    out[key] = n;
  }
  return { input_tokens: out.input_tokens, messages: out.messages };
}
