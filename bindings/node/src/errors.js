/**
 * Errors of the clipfold Node host.
 * @module
 */

/** The error codes an export may fail with (docs/spec.md#errors-and-limits). */
export const EXPORT_ERROR_CODES = Object.freeze(['invalid_json', 'invalid_input', 'too_large', 'host_error', 'internal']);

/**
 * A clipfold export failed, or the plug-in could not be run.
 *
 * - `code`: the error code of docs/spec.md#errors-and-limits (`invalid_json`, `invalid_input`, `too_large`,
 *   `host_error`, `internal`). A trap or a dead worker is `internal`.
 * - `field`: the offending field the plug-in named first
 *   (`messages[3].role`), or `null` when the message names none.
 * - `detail`: the plug-in's message after the code (`"<field>: <what>"`).
 * - `message`: the whole error string, `"<code>: <field>: <what>"`.
 * - `export`: the export that failed.
 */
export class ClipfoldError extends Error {
  /**
   * @param {string} code
   * @param {string} detail
   * @param {{export?: string, cause?: unknown, pluginOriginated?: boolean}} [opts]
   */
  constructor(code, detail, opts = {}) {
    super(`${code}: ${detail}`, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'ClipfoldError';
    /** @type {string} */
    this.code = code;
    /** @type {string} */
    this.detail = detail;
    /** @type {string|null} */
    this.field = fieldOf(detail);
    /** @type {string|undefined} */
    this.export = opts.export;
    /** true when the plug-in itself reported the failure (not a trap, a dead worker or the host) */
    this.pluginOriginated = opts.pluginOriginated === true;
  }
}

/**
 * The field a plug-in message names first: the text before the first ": "
 * when it looks like a field path (`messages[3].role`, `config.chunk_size`,
 * `manifest config.keep_recent`), else null.
 * @param {string} detail
 * @returns {string|null}
 */
export function fieldOf(detail) {
  const i = detail.indexOf(': ');
  if (i <= 0) return null;
  const head = detail.slice(0, i);
  if (/^[A-Za-z_$][\w$]*(?:\[\d+\]|\.[\w$]+|\[\S*?\])*$/.test(head)) return head;
  if (/^manifest config\.[\w$]+$/.test(head)) return head;
  return null;
}

/**
 * Turns the text of an Extism plug-in error into a ClipfoldError.
 * "Plugin-originated error: invalid_input: messages[0].role: …" and
 * "invalid_input: messages[0].role: …" both parse; anything that does not
 * start with such a code becomes `internal`.
 * @param {string} exportName
 * @param {unknown} err
 * @returns {ClipfoldError}
 */
export function toClipfoldError(exportName, err) {
  if (err instanceof ClipfoldError) return err;
  let text = err instanceof Error ? err.message : String(err);
  const plugin = text.startsWith('Plugin-originated error: ');
  if (plugin) text = text.slice('Plugin-originated error: '.length);
  const i = text.indexOf(': ');
  if (i > 0 && EXPORT_ERROR_CODES.includes(text.slice(0, i))) {
    return new ClipfoldError(text.slice(0, i), text.slice(i + 2), { export: exportName, cause: plugin ? undefined : err, pluginOriginated: plugin });
  }
  return new ClipfoldError('internal', `the plug-in failed (${exportName}) - ${text}`, { export: exportName, cause: err });
}

/**
 * What a host function implementation may throw to report a failure with
 * an LLM error code (`timeout`, `rate_limited`, `unavailable`, `context_overflow`,
 * `invalid_request`, `auth`, `other`, or `conflict` for a commit). Any other
 * thrown value is reported to the plug-in as a non-retryable `other`.
 */
export class HostError extends Error {
  /**
   * @param {string} code
   * @param {string} message
   * @param {boolean} [retryable]
   */
  constructor(code, message, retryable = false) {
    super(message);
    this.name = 'HostError';
    this.code = code;
    this.retryable = retryable;
  }

  /** @returns {{error: {code: string, message: string, retryable: boolean}}} */
  toJSON() {
    return { error: { code: this.code, message: this.message, retryable: this.retryable } };
  }
}

/**
 * Message ids a store was asked to add that the conversation holds
 * already (active or in recall): a HostError `invalid_request` whose
 * `ids` lists them. Ids are unique within a conversation only.
 */
export class DuplicateIDError extends HostError {
  /**
   * @param {string[]} ids
   * @param {string} [where] what was refused, as the message's start ("append to \"c\": ")
   */
  constructor(ids, where = '') {
    super('invalid_request', `${where}message id(s) already stored in this conversation: ${JSON.stringify(ids)}`);
    this.name = 'DuplicateIDError';
    /** @type {string[]} */
    this.ids = ids;
  }
}
