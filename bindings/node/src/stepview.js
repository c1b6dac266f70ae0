/**
 * What the framework adapters share about the model calls of one run: the
 * view a call was sent, continued by the next call with the provider's
 * count of it, the user turn a compacted view starts with, and the view of
 * compaction ahead of time (the adapters' `ahead` option). Framework-free.
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

/**
 * Whether two lists hold the same messages: the same objects, or the same
 * JSON, in the same order.
 * @param {readonly unknown[]} a
 * @param {readonly unknown[]} b
 */
export function sameMessages(a, b) {
  return a === b || (a.length === b.length && a.every((m, i) => m === b[i] || JSON.stringify(m) === JSON.stringify(b[i])));
}

/**
 * The positions of each message of `list` by its JSON text, in order: where
 * a message of a view compactAhead prepared (the same JSON, an earlier
 * call's object) stands in the list of this call. Take a position with
 * shift(), so that messages of the same JSON map to one each.
 * @param {readonly unknown[]} list
 * @returns {Map<string, number[]>}
 */
export function positionsByJSON(list) {
  /** @type {Map<string, number[]>} */
  const at = new Map();
  list.forEach((m, i) => {
    const t = JSON.stringify(m);
    const q = at.get(t);
    if (q) q.push(i);
    else at.set(t, [i]);
  });
  return at;
}

/**
 * The check before a model call with compaction ahead of time
 * (docs/spec.md#compaction-ahead-of-time), for a caller-owned list:
 * compactAhead on `list` — the framework's whole list as it hands it over,
 * which compactAhead maps onto the view it returned last, with what
 * followed it. The view to send (`list` itself when it holds the same
 * messages) and the compaction applied at this call (prepared in the
 * background, or run at the limit; null when none was).
 * @template T
 * @param {import('./compactor.js').Compactor<any>} compactor
 * @param {string} conversationId
 * @param {T[]} list
 * @param {import('./compactor.js').AheadOptions} o
 * @returns {Promise<{view: T[], result: import('./types.js').CompactionResult | null}>}
 */
export async function aheadView(compactor, conversationId, list, o) {
  const r = await compactor.compactAhead(conversationId, /** @type {any[]} */ (list), { ...o, callerOwned: true });
  return { view: sameMessages(r.history, list) ? list : r.history, result: r.compaction };
}

/**
 * The check before a model call of a step of a tool loop (the AI SDK's
 * and Mastra's adapters): with `ahead` (an aheadChecker), compactAhead on
 * the framework's whole `list`; else compactIfDue on `history` (the view
 * the call before was sent and what followed it, or `list`). The view to
 * send (`history` itself when nothing changed, or when a compaction failed
 * without a view of earlier ones: viewOf) and the clip-archive it starts
 * with when it does (else `archive`, the one of the call before).
 * @template T
 * @param {{compactor: import('./compactor.js').Compactor<any>, ahead: AheadCheck | null,
 *   onCompact: ((result: import('./types.js').CompactionResult) => void) | undefined}} adapter
 * @param {string} conversationId
 * @param {{list: T[], history: T[], archive: string | null}} step
 * @param {import('./compactor.js').CompactIfDueOptions} o
 * @returns {Promise<{view: T[], archive: string | null}>}
 */
export async function checkStep(adapter, conversationId, step, o) {
  if (adapter.ahead) return adapter.ahead(conversationId, step.list, o);
  const r = await adapter.compactor.compactIfDue(conversationId, /** @type {any[]} */ (step.history), { ...o, callerOwned: true });
  if (r !== null) adapter.onCompact?.(r);
  // A failed caller-owned compaction archives nothing new and returns the
  // view earlier compactions made (docs/spec.md#who-owns-the-history;
  // RATIONALE "A caller-owned history"), which is what fits the model — or
  // the list itself.
  const view = viewOf(r, step.history);
  return { view, archive: r !== null && view === r.history ? r.clip_archive ?? null : step.archive };
}

/**
 * @typedef {<T>(conversationId: string, list: T[], o: import('./compactor.js').AheadOptions)
 *   => Promise<{view: T[], archive: string | null}>} AheadCheck
 */

/**
 * aheadView for an adapter that moves the clip-archive of the view (to the
 * system prompt, after the instructions): it also answers the
 * clip-archive of the last compaction applied to the conversation (null
 * when it knows none), which a view starts with until the next one.
 * @param {import('./compactor.js').Compactor<any>} compactor
 * @param {((result: import('./types.js').CompactionResult) => void) | undefined} onCompact sees the compactions
 * @returns {AheadCheck}
 */
export function aheadChecker(compactor, onCompact) {
  /** @type {Map<string, string>} */
  const archives = new Map();
  return async function check(conversationId, list, o) {
    const { view, result } = await aheadView(compactor, conversationId, list, o);
    if (result !== null) onCompact?.(result);
    if (result !== null && view === result.history && result.clip_archive) {
      if (archives.size >= 1024 && !archives.has(conversationId)) archives.clear();
      archives.set(conversationId, result.clip_archive);
    }
    return { view, archive: archives.get(conversationId) ?? null };
  };
}
