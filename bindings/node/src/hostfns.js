/**
 * The extism:host/user functions of docs/spec.md#host-functions, bound to JavaScript
 * implementations. Every failure — a thrown exception, a rejected promise,
 * unreadable input — is answered with an error object; nothing is ever
 * thrown into the plug-in (with runInWorker a thrown host function would
 * also kill the worker).
 * @module
 */
import { HostError } from './errors.js';

export const HOST_NAMESPACE = 'extism:host/user';
export const HOST_FUNCTION_NAMES = Object.freeze(['llm_complete', 'memory_list', 'compaction_commit']);

/**
 * A store's method that takes compaction_commit's input as the exact JSON
 * text the plug-in sent (SQLiteStore has it): compaction_commit calls it
 * instead of `commit` with the parsed object, so every message's JSON
 * reaches the store as it was.
 */
export const COMMIT_JSON = Symbol.for('clipfold.commitJSON');

/**
 * A compaction prepared ahead is planned in the background and committed
 * from its plan, so the turn that applies it runs the SQL only. A store
 * that can (SQLiteStore) has the three:
 * - `[PLAN_INPUT](commitText)`: the planCommit export's input for the
 *   commit's exact JSON text, at the store's clock;
 * - `[COMMIT_PLANNED](plan)`: compaction_commit from planCommit's answer
 *   for that input, all or nothing, as `commit` writes it;
 * - `[ARCHIVE_IDS](tier, labelPrefix)`: the ids of memory_list's blocks,
 *   without their content.
 */
export const PLAN_INPUT = Symbol.for('clipfold.planInput');
export const COMMIT_PLANNED = Symbol.for('clipfold.commitPlanned');
export const ARCHIVE_IDS = Symbol.for('clipfold.archiveIds');

/**
 * A store's method that runs, once per process, the code a commit runs,
 * on a database of its own (SQLiteStore: a commit on `:memory:`), so the
 * first commit of a compaction prepared ahead does not pay for compiling
 * it inside an agent's turn. compactAhead calls it when it starts one.
 */
export const WARM_WRITES = Symbol.for('clipfold.warmWrites');

/**
 * @typedef {import('./types.js').LLM} LLM
 * @typedef {import('./types.js').Store} Store
 * @typedef {import('./types.js').HostCallEvent} HostCallEvent
 */

/**
 * What a host function uses of @extism/extism's CallContext (declared
 * here so the package's types do not depend on the SDK's).
 * @typedef {object} HostCallContext
 * @property {(offset: bigint) => ({text(): string} | null)} read
 * @property {(text: string) => bigint} store
 */

/**
 * @param {string} code
 * @param {string} message
 * @param {boolean} retryable
 */
export function errorObject(code, message, retryable = false) {
  return { error: { code, message, retryable } };
}

/**
 * Turns whatever an implementation threw into an error object.
 * @param {unknown} err
 * @param {string} fallbackCode
 */
function thrownToError(err, fallbackCode) {
  if (err instanceof HostError) return err.toJSON();
  if (err && typeof err === 'object') {
    const e = /** @type {{code?: unknown, message?: unknown, retryable?: unknown}} */ (err);
    const known = ['timeout', 'rate_limited', 'unavailable', 'context_overflow', 'invalid_request', 'auth', 'other', 'conflict'];
    const code = typeof e.code === 'string' && known.includes(e.code) ? e.code : fallbackCode;
    return errorObject(code, String(e.message ?? err), e.retryable === true);
  }
  return errorObject(fallbackCode, String(err), false);
}

/**
 * Calls an implementation: a function, or an object with the named method.
 * @param {unknown} impl
 * @param {string} method
 * @param {unknown} input
 */
function invoke(impl, method, input) {
  if (typeof impl === 'function') return impl(input);
  const o = /** @type {Record<string, unknown>} */ (impl);
  const f = o?.[method];
  if (typeof f !== 'function') throw new HostError('unavailable', `this host provides no ${method}`);
  return f.call(o, input);
}

/**
 * Builds the host functions. With `async: false` every implementation must
 * answer synchronously (a plug-in on the main thread cannot wait); with
 * `async: true` (the plug-in on a worker thread) they may return promises.
 *
 * @param {object} impls
 * @param {LLM | null} [impls.llm] answers llm_complete
 * @param {Store | null} [impls.store] answers memory_list and compaction_commit
 * @param {(e: HostCallEvent) => void} [impls.onHostCall] observes every call (tests, tracing)
 * @returns {Record<string, (cc: HostCallContext, off: bigint) => bigint | Promise<bigint>>}
 */
export function hostFunctions({ llm = null, store = null, onHostCall } = {}) {
  /**
   * @param {string} name
   * @param {(input: any, text: string) => unknown} handle
   * @param {string} failCode
   */
  const make = (name, handle, failCode) => async (/** @type {any} */ cc, /** @type {bigint} */ off) => {
    let input;
    let output;
    const started = performance.now();
    try {
      const view = cc.read(off);
      if (view === null) throw new HostError('invalid_request', `${name}: no input`);
      const inputText = view.text();
      input = JSON.parse(inputText);
      output = await handle(input, inputText);
      if (output === undefined || output === null || typeof output !== 'object') {
        throw new HostError(failCode, `${name}: the host answered ${output === undefined ? 'nothing' : JSON.stringify(output)}`);
      }
    } catch (err) {
      output = thrownToError(err, failCode);
    }
    let text;
    try {
      text = JSON.stringify(output);
    } catch (err) {
      text = JSON.stringify(thrownToError(err, failCode));
    }
    try {
      onHostCall?.({ name, input, output: JSON.parse(text), ms: performance.now() - started });
    } catch {
      // an observer must not change the outcome
    }
    return cc.store(text);
  };
  return {
    llm_complete: make('llm_complete', (req) => {
      if (!llm) throw new HostError('unavailable', 'this host provides no llm_complete');
      return invoke(llm, 'complete', req);
    }, 'other'),
    memory_list: make('memory_list', (req) => {
      if (!store) throw new HostError('unavailable', 'this host provides no memory_list');
      return invoke(store, 'list', req);
    }, 'unavailable'),
    compaction_commit: make('compaction_commit', (req, text) => {
      if (!store) throw new HostError('unavailable', 'this host provides no compaction_commit');
      const exact = /** @type {any} */ (store)[COMMIT_JSON];
      if (typeof exact === 'function') return exact.call(store, text);
      return invoke(store, 'commit', req);
    }, 'unavailable'),
  };
}

/**
 * Synchronous stubs for a main-thread instance that only runs the pure
 * exports: each answers "unavailable" (the imports must exist to
 * instantiate the plug-in).
 */
export function stubHostFunctions() {
  /** @type {Record<string, (cc: any, off: bigint) => bigint>} */
  const out = {};
  for (const name of HOST_FUNCTION_NAMES) {
    const text = JSON.stringify(errorObject('unavailable', `this instance provides no ${name} (only compress calls the host)`, false));
    out[name] = (cc) => cc.store(text);
  }
  return out;
}
