/**
 * What the Mastra and OpenAI Agents adapters share about the model calls of
 * one run: the view a call was sent, continued by the next call with the
 * provider's count of it, and the user turn a compacted view starts with.
 * Framework-free.
 *
 * The rule every adapter keeps after a compaction: the first message after
 * the system messages is a user turn. The kept messages are the newest
 * ones that fit, and they may start with an assistant turn (a tool call,
 * an answer); Anthropic's Messages API and Gemini reject such a request,
 * and OpenAI's models read it as a conversation that starts mid-way. The
 * adapters then put one neutral user turn in front of it — the text the
 * plug-in's provider requests use for the same case (core
 * ContinuationPlaceholder) — in the framework's own message form.
 * @module
 */

/** The user turn put in front of kept messages that start with an assistant turn. */
export const CONTINUATION = '(conversation continues)';

/**
 * `messages` with `userTurn` inserted after its leading system messages
 * when what follows them is not a user turn; `messages` itself when it is
 * (or when there is nothing but system messages).
 * @template T
 * @param {T[]} messages
 * @param {(m: T) => 'system' | 'user' | 'other'} kind
 * @param {T} userTurn
 * @returns {T[]}
 */
export function userTurnFirst(messages, kind, userTurn) {
  const i = messages.findIndex((m) => kind(m) !== 'system');
  if (i < 0 || kind(messages[i]) === 'user') return messages;
  return [...messages.slice(0, i), userTurn, ...messages.slice(i)];
}

/**
 * The provider's input count of the model call a step follows, when it is
 * a count: a positive safe integer, else undefined.
 * @param {unknown} n
 * @returns {number | undefined}
 */
export function inputCount(n) {
  return typeof n === 'number' && Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/**
 * What a model call was sent: the view (the compacted list, clip-archive
 * first, or the list itself), how many messages of the framework's list it
 * stood for, and the last of them as JSON (to see that the next list
 * continues this one).
 * @template T
 * @typedef {{view: T[], length: number, last: string}} SentView
 */

/**
 * @template T
 * @param {T[]} view
 * @param {T[]} list
 * @returns {SentView<T>}
 */
export function sentView(view, list) {
  return { view, length: list.length, last: JSON.stringify(list.at(-1)) };
}

/**
 * The history to compact for a model call that follows the one `prev` was
 * sent: when `list` continues the list `prev` stood for (the framework
 * appended the answer and the tool results), that view followed by what was
 * appended, counted by the provider's input count `n` of that call for the
 * view's messages (docs/spec.md#counting-tokens-and-the-window: the provider's
 * usage is the truth for what it counted); else `list` itself, without a
 * count.
 * @template T
 * @param {SentView<T> | undefined} prev
 * @param {T[]} list
 * @param {unknown} n
 * @returns {{history: T[], usage: import('./types.js').ContextUsage | undefined}}
 */
export function continueView(prev, list, n) {
  if (!prev || prev.length === 0 || list.length < prev.length || JSON.stringify(list[prev.length - 1]) !== prev.last) {
    return { history: list, usage: undefined };
  }
  const count = inputCount(n);
  return {
    history: [...prev.view, ...list.slice(prev.length)],
    usage: count === undefined ? undefined : { input_tokens: count, messages: prev.view.length },
  };
}

/**
 * What the model is sent after compactIfDue: the history when nothing
 * changed, or when a compaction failed without a view of earlier ones
 * (docs/spec.md#who-owns-the-history: a failed caller-owned compaction archives
 * nothing new and returns the view earlier compactions made, which fits,
 * or the list itself); else the compacted history.
 * @template T
 * @param {import('./types.js').CompactionResult | null} r
 * @param {T[]} history
 * @returns {T[]}
 */
export function viewOf(r, history) {
  return r === null || (r.failed && r.history.length >= history.length) ? history : /** @type {T[]} */ (r.history);
}
