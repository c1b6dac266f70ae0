/**
 * clipfold for the OpenAI Agents SDK for JavaScript (`@openai/agents`):
 * `ClipfoldSession`, a `Session` (the SDK's memory interface, the Python
 * SDK's Session protocol) that compacts as items are added and keeps the
 * originals in recall storage; its `callModelInputFilter`, which keeps the
 * window in every model call of a run (the tool loop included); and the
 * `memory_read` tool, made with the SDK's `tool()`.
 *
 * ```js
 * import { Agent, run } from '@openai/agents';
 * import { createCompactor } from 'clipfold';
 * import { ClipfoldSession, memoryReadTool } from 'clipfold/openai-agents';
 * const compactor = await createCompactor({ config: { model_max_tokens: 128000 } });
 * const session = new ClipfoldSession({ compactor, sessionId: 'chat-1' });
 * const agent = new Agent({ name: 'ops', instructions, model, tools: [...tools, memoryReadTool({ compactor, session })] });
 * const result = await run(agent, 'Where were we?', { session, callModelInputFilter: session.callModelInputFilter });
 * ```
 *
 * The session keeps its items in another Session (`session`, default the
 * SDK's MemorySession). After the runner adds a turn's items, the stored
 * history is compacted when due (docs/spec.md#who-owns-the-history,
 * history_owner "caller": the caller keeps the items) and replaced by the
 * plug-in's view: the clip-archive (a system message, or a user message
 * when the kept items start with a function call), the newest items
 * verbatim with function calls and their results. What it removed is
 * summarized in the archive and kept in recall storage, searchable through
 * memory_read.
 *
 * A run does not read the session again between its model calls, so the
 * window is kept by the filter, which the runner calls before every model
 * call (docs/spec.md#counting-tokens-and-the-window: compaction is checked before
 * every model call): it compacts the call's input into the same view,
 * counting it as the model will — the provider's usage of the run's call
 * before (for the view that call was sent), the estimate of what came after
 * it, and without usage the instructions and tool schemas as
 * overhead_tokens. The clip-archive goes to the call's instructions (they
 * are not stored in the session); a user turn stands first.
 *
 * With `ahead: true` no model call waits for the summarizer before the
 * limit (docs/spec.md#compaction-ahead-of-time): the filter and addItems
 * check with compactor.compactAhead, which over `prepare_at` of the limit
 * starts a compaction in the background and lets the call go on with its
 * input as it is; a later call (of this run or a later one, or addItems)
 * applies it, the items that came meanwhile after the clip-archive, and
 * only a call that reaches the limit first waits, for the rest of the
 * work under way. The items are compacted caller-owned all the same: they
 * stay in the Session the adapter wraps.
 *
 * The SDK's items are the Responses API's in camelCase (`callId`,
 * `function_call_result`); the plug-in reads the Responses API's own
 * (docs/spec.md#message-shapes), so they are renamed for it
 * (toResponsesItem) and the items it keeps are given back as they were.
 *
 * This module imports `@openai/agents` and `zod` (peer dependencies);
 * `clipfold` itself never does.
 * @module
 */
import { MemorySession, tool } from '@openai/agents';
import { z } from 'zod';
import { optionalBool } from './args.js';
import { DEFAULT_TARGET_SHARE } from './compactor.js';
import { MEMORY_READ_DESCRIPTION, MEMORY_READ_NAME, joinText, memoryRead } from './memory.js';
import { CONTINUATION, aheadView, continueView, positionsByJSON, sentView, userTurnFirst, viewOf } from './stepview.js';

/**
 * @typedef {import('./compactor.js').Compactor<any>} Compactor
 * @typedef {import('./types.js').Config} Config
 * @typedef {import('./types.js').CompactionResult} CompactionResult
 * @typedef {import('@openai/agents').AgentInputItem} AgentInputItem
 * @typedef {import('@openai/agents').Session} Session
 */

/**
 * A tool call's output as the Responses API has it: text, or input parts.
 * @param {unknown} o
 * @returns {unknown}
 */
function outputOf(o) {
  if (typeof o === 'string') return o;
  const part = (/** @type {any} */ p) => {
    if (p?.type === 'text' || p?.type === 'input_text') return { type: 'input_text', text: String(p.text ?? '') };
    if (p?.type === 'image' || p?.type === 'input_image') return { type: 'input_image' };
    return { type: 'input_text', text: JSON.stringify(p) };
  };
  if (Array.isArray(o)) return o.map(part);
  const a = /** @type {any} */ (o);
  if (a?.type === 'text') return String(a.text ?? '');
  return a === undefined || a === null ? '' : [part(a)];
}

/**
 * An item of the SDK as the plug-in reads Responses items: a
 * `function_call` with `call_id`, its `function_call_result` as a
 * `function_call_output`, other calls with a `callId` (computer, shell,
 * apply_patch) and their results as custom tool calls and outputs; every
 * other item (messages, reasoning, hosted tool calls) as it is.
 * @param {AgentInputItem} item
 * @returns {Record<string, unknown>}
 */
export function toResponsesItem(item) {
  const a = /** @type {any} */ (item);
  const id = typeof a?.id === 'string' ? { id: a.id } : {};
  if (a?.type === 'function_call') return { type: 'function_call', ...id, call_id: a.callId, name: a.name, arguments: a.arguments };
  if (a?.type === 'function_call_result') return { type: 'function_call_output', ...id, call_id: a.callId, output: outputOf(a.output) };
  if (typeof a?.callId === 'string' && typeof a.type === 'string') {
    if (/_(result|output)$/.test(a.type)) return { type: 'custom_tool_call_output', ...id, call_id: a.callId, output: outputOf(a.output) };
    return { type: 'custom_tool_call', ...id, call_id: a.callId, name: String(a.name ?? a.type), input: JSON.stringify(a.action ?? a.arguments ?? a.input ?? null) };
  }
  return a;
}

/**
 * The SDK item an item of the plug-in's result stands for: a kept item is
 * the caller's own; one compress changed to fit the window (a tool result
 * cleared, a message truncated) is the original with the new output or
 * content; the clip-archive is a system message item already.
 * @param {Record<string, any>} d
 * @param {AgentInputItem | undefined} original
 * @returns {AgentInputItem}
 */
function fromResponsesItem(d, original) {
  const o = /** @type {any} */ (original);
  if (o === undefined) return /** @type {AgentInputItem} */ (d);
  if (d.type === 'function_call_output' || d.type === 'custom_tool_call_output') {
    const text = typeof d.output === 'string' ? d.output : JSON.stringify(d.output);
    return { ...o, output: o.type === 'function_call_result' ? { type: 'text', text } : text };
  }
  if ('content' in d) return { ...o, content: d.content };
  return o;
}

/**
 * The SDK's items compacted when due: compactIfDue on their Responses
 * form (with `ahead`, compactAhead: a compaction prepared in the
 * background, applied when done), the result given back as SDK items (the
 * caller's own objects for the items kept), or `items` itself when nothing
 * changed.
 * @param {Compactor} compactor
 * @param {string} conversationId
 * @param {AgentInputItem[]} items
 * @param {import('./compactor.js').CompactIfDueOptions} o
 * @param {boolean} ahead
 * @returns {Promise<{view: AgentInputItem[], result: CompactionResult | null}>}
 */
async function compactItems(compactor, conversationId, items, o, ahead) {
  const wire = items.map(toResponsesItem);
  /** @type {Record<string, unknown>[]} */
  let back;
  /** @type {CompactionResult | null} */
  let result;
  if (ahead) {
    ({ view: back, result } = await aheadView(compactor, conversationId, wire, { ...o, shape: 'responses' }));
  } else {
    result = await compactor.compactIfDue(conversationId, wire, { ...o, callerOwned: true, shape: 'responses' });
    back = viewOf(result, wire);
  }
  if (back === wire) return { view: items, result };
  // The kept items come back as the very objects sent (compress returns
  // them byte for byte; a view compactAhead prepared, as items of the same
  // JSON); a changed one stands where its original stood.
  const index = new Map(wire.map((w, i) => [w, i]));
  const byJSON = ahead ? positionsByJSON(wire) : null;
  let next = 0;
  const view = back.map((d) => {
    const i = byJSON ? byJSON.get(JSON.stringify(d))?.shift() : index.get(d);
    if (i !== undefined) { next = i + 1; return items[i]; }
    const a = /** @type {any} */ (d);
    const j = wire.findIndex((w, k) => k >= next && /** @type {any} */ (w).type === a.type && /** @type {any} */ (w).role === a.role
      && /** @type {any} */ (w).call_id === a.call_id && !back.includes(w));
    if (j >= 0) next = j + 1;
    return fromResponsesItem(a, j >= 0 ? items[j] : undefined);
  });
  return { view, result };
}

/** @param {AgentInputItem} m @returns {'system' | 'user' | 'other'} */
function kind(m) {
  const a = /** @type {any} */ (m);
  if (a.type !== undefined && a.type !== 'message') return 'other';
  return a.role === 'system' || a.role === 'developer' ? 'system' : a.role === 'user' ? 'user' : 'other';
}

/** @returns {AgentInputItem} the user turn put first when the kept items start with another */
const continuation = () => ({ type: 'message', role: 'user', content: CONTINUATION });
const CONTINUATION_JSON = JSON.stringify(continuation());

/**
 * The tools of an agent as the JSON schemas a provider is sent (name,
 * description, parameters), for the compactor's overheadTokens.
 * @param {unknown[] | undefined} tools
 * @returns {unknown[]}
 */
export function toolSchemas(tools) {
  return (tools ?? []).map((t) => {
    const a = /** @type {any} */ (t);
    return { type: a?.type ?? 'function', name: String(a?.name ?? ''), description: String(a?.description ?? ''), parameters: a?.parameters ?? {} };
  });
}

/**
 * @typedef {object} ClipfoldSessionOptions
 * @property {Compactor} compactor
 * @property {string} [sessionId]      the session's id, also the archive's conversation (default the stored session's)
 * @property {Session} [session]       where the items are kept (default a new MemorySession)
 * @property {number} [targetShare]    compact to this share of the limit (default 0.8; compactIfDue's)
 * @property {Config} [config]         config for these compactions (model_max_tokens: your model's context window)
 * @property {(result: CompactionResult) => void} [onCompact] sees every compaction that changed the items
 *   (including a failed one: the items then stay as earlier compactions left them)
 * @property {boolean} [ahead]         compact ahead of time (default false): over `prepare_at` of the limit a compaction
 *   starts in the background and the model call goes on; a later call (or addItems) applies it; a call waits only at
 *   the limit, for the rest of the work under way (compactor.compactAhead)
 */

/**
 * A Session of the OpenAI Agents SDK that compacts its history as items
 * are added (see the module comment). Pass it to `run()` as `session`, and
 * its `callModelInputFilter` as the run's `callModelInputFilter`.
 * @implements {Session}
 */
export class ClipfoldSession {
  /** The runner hands the adapter its RunContext: the usage of the run's model calls. */
  acceptsRunContext = /** @type {const} */ (true);

  /** @type {Compactor} */
  #compactor;
  /** @type {Session} */
  #session;
  /** @type {string | undefined} */
  #id;
  #targetShare;
  /** @type {Config | undefined} */
  #config;
  /** @type {((result: CompactionResult) => void) | undefined} */
  #onCompact;
  /** compaction ahead of time (compactAhead) */
  #ahead;
  /** @type {any} the RunContext of the run in progress */
  #run;
  /** @type {{sent: import('./stepview.js').SentView<AgentInputItem>, run: any, requests: number} | undefined} the last model call's view */
  #last;
  /** the overhead of the last call's instructions and tools, for the compactions of stored items */
  #overhead = 0;
  /** whether the filter put a user turn in front of a view in this run (the runner stores it with the turn) */
  #continued = false;
  /** @type {Map<string, number>} */
  #overheads = new Map();

  /** @param {ClipfoldSessionOptions} o */
  constructor(o) {
    const { compactor, sessionId, session, targetShare = DEFAULT_TARGET_SHARE, config, onCompact, ahead } = o ?? /** @type {any} */ ({});
    if (!compactor || typeof compactor.compactIfDue !== 'function') throw new TypeError('ClipfoldSession: compactor must be a clipfold compactor (createCompactor)');
    if (sessionId !== undefined && (typeof sessionId !== 'string' || sessionId === '')) throw new TypeError('ClipfoldSession: sessionId must be a non-empty string');
    if (session !== undefined && (typeof session?.getItems !== 'function' || typeof session?.addItems !== 'function')) {
      throw new TypeError('ClipfoldSession: session must be a Session of the Agents SDK (getItems, addItems, popItem, clearSession)');
    }
    this.#compactor = compactor;
    this.#session = session ?? new MemorySession(sessionId ? { sessionId } : {});
    this.#id = sessionId;
    this.#targetShare = targetShare;
    this.#config = config;
    this.#onCompact = onCompact;
    this.#ahead = optionalBool(ahead, 'ahead');
    this.callModelInputFilter = this.callModelInputFilter.bind(this);
  }

  /** @returns {Promise<string>} */
  async getSessionId() {
    this.#id ??= await this.#session.getSessionId();
    return this.#id;
  }

  /**
   * The stored history (compacted: the clip-archive first), the newest
   * `limit` items when given.
   * @param {number} [limit]
   * @param {any} [runContext]
   * @returns {Promise<AgentInputItem[]>}
   */
  async getItems(limit, runContext) {
    if (runContext !== undefined && runContext !== this.#run) {
      this.#run = runContext;
      this.#continued = false;
    }
    return this.#session.getItems(limit);
  }

  /**
   * Stores a turn's items, then compacts the stored history when due.
   * @param {AgentInputItem[]} items
   * @param {any} [runContext]
   * @returns {Promise<void>}
   */
  async addItems(items, runContext) {
    if (runContext !== undefined) this.#run = runContext;
    // The user turn the filter put in front of a model call's view belongs to that call, not to the history.
    const own = this.#continued ? items.filter((i) => JSON.stringify(i) !== CONTINUATION_JSON) : items;
    await this.#session.addItems(own);
    const stored = await this.#session.getItems();
    const config = Object.hasOwn(this.#config ?? {}, 'overhead_tokens') ? this.#config : { ...this.#config, overhead_tokens: this.#overhead };
    const { view, result } = await compactItems(this.#compactor, await this.getSessionId(), stored,
      { targetShare: this.#targetShare, config }, this.#ahead);
    if (result !== null) this.#onCompact?.(result);
    if (view === stored) return;
    await this.#session.clearSession();
    await this.#session.addItems(userTurnFirst(view, kind, continuation()));
  }

  /** @returns {Promise<AgentInputItem | undefined>} */
  async popItem() {
    return this.#session.popItem();
  }

  /** @returns {Promise<void>} */
  async clearSession() {
    this.#last = undefined;
    return this.#session.clearSession();
  }

  /**
   * The items the model was last sent (Responses items), for memory_read.
   * @returns {Record<string, unknown>[]}
   */
  get context() {
    return (this.#last?.sent.view ?? []).map(toResponsesItem);
  }

  /**
   * The run's `callModelInputFilter`: each model call's input compacted
   * when due, the clip-archive added to its instructions.
   * @param {{modelData: {input: AgentInputItem[], instructions?: string}, agent?: any}} args
   * @returns {Promise<{input: AgentInputItem[], instructions?: string}>}
   */
  async callModelInputFilter({ modelData, agent }) {
    const input = modelData.input;
    const run = this.#run;
    const requests = run?.usage?.requests ?? 0;
    // The run's call before was sent #last's view, and the provider counted it.
    const prev = this.#last && this.#last.run === run && this.#last.requests === requests - 1 ? this.#last.sent : undefined;
    const { history, usage } = continueView(prev, input, prev ? run?.usage?.requestUsageEntries?.at(-1)?.inputTokens : undefined);
    const config = Object.hasOwn(this.#config ?? {}, 'overhead_tokens') ? this.#config
      : { ...this.#config, overhead_tokens: await this.#overheadOf(modelData.instructions, agent?.tools) };
    // compactAhead maps the run's whole input onto the view it returned last.
    const { view, result } = await compactItems(this.#compactor, await this.getSessionId(), this.#ahead ? input : history,
      { targetShare: this.#targetShare, config, usage }, this.#ahead);
    if (result !== null) this.#onCompact?.(result);
    this.#last = { sent: sentView(view, input), run, requests };
    // The clip-archive (this call's, or the one the session stored first)
    // joins the instructions.
    const first = /** @type {any} */ (view[0]);
    // (a system item, or a user turn when the kept items start with another)
    const archived = first !== undefined && kind(first) !== 'other' && typeof first.content === 'string' && first.content.startsWith('[Context Summary');
    if (view === input && !archived) return modelData;
    const items = archived ? view.slice(1) : view;
    const instructions = archived ? joinText(modelData.instructions, first.content) ?? undefined : modelData.instructions;
    const out = userTurnFirst(items, kind, continuation());
    if (out !== items) this.#continued = true;
    return { ...modelData, input: out, instructions };
  }

  /**
   * @param {string | undefined} instructions
   * @param {unknown[] | undefined} tools
   */
  async #overheadOf(instructions, tools) {
    const schemas = toolSchemas(tools);
    const key = JSON.stringify([instructions ?? '', schemas, this.#config?.token_estimator ?? null]);
    let n = this.#overheads.get(key);
    if (n === undefined) {
      if (this.#overheads.size >= 64) this.#overheads.clear();
      n = await this.#compactor.overheadTokens({ system: instructions ?? null, tools: schemas, config: this.#config });
      this.#overheads.set(key, n);
    }
    this.#overhead = n;
    return n;
  }
}

/**
 * @typedef {object} MemoryReadToolOptions
 * @property {Compactor} compactor
 * @property {ClipfoldSession} [session] the session of the agent's runs: its conversation is searched, with the items
 *   the model was last sent (hits "in your context")
 * @property {string} [conversationId] search only this conversation's archive (default: the session's, else every
 *   conversation)
 * @property {number} [maxTokens]      the most tokens an answer takes, counted as the window is (default 1,000; at least 150)
 * @property {string} [description]    what the model is told (default MEMORY_READ_DESCRIPTION)
 */

/**
 * The memory_read tool (docs/spec.md#search)
 * made with the SDK's `tool()`: the model asks a question in plain words
 * and gets the best archived summaries and compacted items, or reads one
 * by id — within `maxTokens`, by the plug-in's buildMemoryRead. Its
 * parameters are all required and nullable, as the SDK's strict schemas
 * want them.
 * @param {MemoryReadToolOptions} o
 */
export function memoryReadTool(o) {
  const { compactor, session, conversationId, maxTokens, description = MEMORY_READ_DESCRIPTION } = o ?? /** @type {any} */ ({});
  if (!compactor || typeof compactor.search !== 'function') throw new TypeError('memoryReadTool: compactor must be a clipfold compactor (createCompactor)');
  if (session !== undefined && !(session instanceof ClipfoldSession)) throw new TypeError('memoryReadTool: session must be a ClipfoldSession');
  return tool({
    name: MEMORY_READ_NAME,
    description,
    parameters: z.object({
      query: z.string().nullable().describe('a question in plain words'),
      id: z.string().nullable().describe('the id of a hit to read (with a query: the part about it)'),
      limit: z.number().int().positive().max(50).nullable().describe('at most this many hits (default 10)'),
    }),
    execute: async (input) => memoryRead(compactor, {
      ...input, maxTokens,
      conversationId: conversationId ?? (session ? await session.getSessionId() : undefined),
      inContext: session?.context,
    }),
  });
}
