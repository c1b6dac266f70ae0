/**
 * A compacted history back on the wire, per provider.
 *
 * `compress` returns the kept messages byte for byte as they were given
 * and the clip-archive rendered in the history's shape (docs/spec.md#message-shapes), so these
 * helpers are thin: they take off the fields only clipfold reads (a native
 * history's `id`, `conversation_id`, `created_at`, `pinned`: the OpenAI
 * API answers "Additional properties are not allowed ('id' was
 * unexpected)") and put the clip-archive where the provider wants it:
 *
 * ```js
 * import { wire } from 'clipfold';
 * const r = await compactor.compress('conv-1', history, { callerOwned: true });
 * await openai.chat.completions.create({ model, messages: wire.openaiChat(r, { system: 'You are …' }) });
 * await anthropic.messages.create({ model, max_tokens: 1024, ...wire.anthropic(r, { system: 'You are …' }) });
 * await openai.responses.create({ model, ...wire.responses(r, { instructions: 'You are …' }) });
 * ```
 *
 * Each takes a CompactionResult (or a bare history array) and returns new
 * objects; the result is not changed. The same helpers as the Python
 * package's `clipfold.wire`. The AI SDK and LangChain need none of this:
 * their adapters (clipfold/ai-sdk, clipfold/langchain) hand the messages
 * compress returns to the framework, which writes its own wire format.
 * @module
 */

/** Fields of clipfold's native Message that no provider's message takes. */
export const BOOKKEEPING = Object.freeze(['id', 'conversation_id', 'created_at', 'pinned']);

/**
 * @typedef {Record<string, any>} WireMessage
 * @typedef {WireMessage[] | {history: WireMessage[], clip_archive?: string | null}} HistoryOrResult
 */

/**
 * @param {HistoryOrResult} h
 * @returns {[WireMessage[], string | null]}
 */
function split(h) {
  if (Array.isArray(h)) return [[...h], null];
  if (!h || typeof h !== 'object' || !Array.isArray(h.history)) {
    throw new TypeError('expected a CompactionResult (with a history array) or an array of messages');
  }
  return [[...h.history], typeof h.clip_archive === 'string' ? h.clip_archive : null];
}

/**
 * A copy of message without clipfold's bookkeeping fields.
 * @param {WireMessage} message
 * @param {readonly string[]} [fields]
 * @returns {WireMessage}
 */
export function strip(message, fields = BOOKKEEPING) {
  return Object.fromEntries(Object.entries(message).filter(([k]) => !fields.includes(k)));
}

/** @param {(string | null | undefined)[]} parts */
function join(...parts) {
  const text = parts.filter((p) => typeof p === 'string' && p.trim() !== '').join('\n\n');
  return text || null;
}

/**
 * `messages` for OpenAI Chat Completions (and compatible servers):
 * `system` first (when given), the clip-archive where compress put it (a
 * system message first), every message without clipfold's fields.
 * @param {HistoryOrResult} history
 * @param {{system?: string}} [o]
 * @returns {WireMessage[]}
 */
export function openaiChat(history, o = {}) {
  const [msgs] = split(history);
  return [...(o.system ? [{ role: 'system', content: o.system }] : []), ...msgs.map((m) => strip(m))];
}

/**
 * `system` and `messages` for the Anthropic Messages API.
 *
 * The clip-archive goes into `system` (after the caller's `system`), taken
 * out of `messages` — the leading user turn the plug-in renders for an
 * Anthropic history, or a system message of another shape — unless taking
 * it out would leave `messages` starting with an assistant turn; then the
 * leading user turn stays (the API wants a user turn first). Other
 * system-role messages are lifted into `system` as providerRequest does
 * (the Messages API has no system role).
 * @param {HistoryOrResult} history
 * @param {{system?: string}} [o]
 * @returns {{system?: string, messages: WireMessage[]}}
 */
export function anthropic(history, o = {}) {
  let [msgs, archive] = split(history);
  if (msgs.length > 0 && archive !== null && msgs[0].content === archive) {
    const rest = msgs.slice(1);
    const first = rest.find((m) => m.role !== 'system');
    if (first === undefined || first.role === 'user') {
      msgs = rest;
    } else {
      archive = null;
      msgs = [{ role: 'user', content: msgs[0].content }, ...rest];
    }
  } else {
    archive = null;
  }
  const lifted = new Set(msgs.filter((m) => m.role === 'system' && typeof m.content === 'string'));
  /** @type {{system?: string, messages: WireMessage[]}} */
  const out = { messages: [] };
  const s = join(o.system, archive, ...[...lifted].map((m) => m.content));
  if (s !== null) out.system = s;
  out.messages = msgs.filter((m) => !lifted.has(m)).map((m) => strip(m));
  return out;
}

/**
 * `input` (and `instructions`) for the OpenAI Responses API: the items
 * without clipfold's fields (an item's own `id` — `fc_…`, `rs_…` — is the
 * API's and stays), the clip-archive the system message item compress put
 * first, or, with `archiveInInstructions`, appended to `instructions`.
 * @param {HistoryOrResult} history
 * @param {{instructions?: string, archiveInInstructions?: boolean}} [o]
 * @returns {{instructions?: string, input: WireMessage[]}}
 */
export function responses(history, o = {}) {
  let [msgs, archive] = split(history);
  if (o.archiveInInstructions && archive !== null && msgs.length > 0 && msgs[0].content === archive) msgs = msgs.slice(1);
  else archive = null;
  /** @type {{instructions?: string, input: WireMessage[]}} */
  const out = { input: [] };
  const text = join(o.instructions, archive);
  if (text !== null) out.instructions = text;
  out.input = msgs.map((m) => strip(m, ['conversation_id', 'created_at', 'pinned']));
  return out;
}
