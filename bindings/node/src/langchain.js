/**
 * clipfold for LangChain.js v1 (`langchain` ≥ 1, `@langchain/core` ≥ 1):
 * `clipfoldMiddleware`, an agent middleware for
 * `createAgent({ middleware: [...] })` and a drop-in for
 * `summarizationMiddleware` (same `trigger` / `keep` vocabulary), the
 * `memory_read` tool the clip-archive points to, and `chatModelLLM`, which
 * lets a LangChain chat model write clipfold's summaries.
 *
 * ```js
 * import { createAgent } from 'langchain';
 * import { createCompactor } from 'clipfold';
 * import { clipfoldMiddleware, memoryReadTool, chatModelLLM } from 'clipfold/langchain';
 * const compactor = await createCompactor({ llm: chatModelLLM(model) });   // or offline: createCompactor()
 * const agent = createAgent({
 *   model, tools: [...tools, memoryReadTool({ compactor })],
 *   middleware: [clipfoldMiddleware({ compactor, trigger: { tokens: 4000 }, keep: { messages: 20 } })],
 * });
 * ```
 *
 * Like summarizationMiddleware it runs before each model call (the
 * agent's tool loops included) and, when the trigger is met, replaces the
 * agent's messages (RemoveMessage with REMOVE_ALL_MESSAGES, then the new
 * list): the clip-archive (a SystemMessage, read by the next compaction as
 * the prior summary; a HumanMessage when the kept messages start with a
 * tool call, so that the model's request starts with a user turn), then
 * the kept messages — the very message objects of the state, tool calls
 * with their results. What it removes is summarized by importance in
 * chunks, archived and kept in recall storage (searchable through
 * memory_read), not discarded. For the model call a SystemMessage
 * clip-archive is appended to the agent's system message. The agent's
 * state owns the messages: the compactor's store keeps only the archive
 * and recall storage (docs/spec.md#who-owns-the-history, history_owner "caller").
 *
 * The window is kept whatever the trigger: it works in wrapModelCall,
 * where the model request is, and counts it as the model will — the
 * provider's usage of the last call (the last AIMessage's
 * usage_metadata.input_tokens, for the messages before it), the estimate
 * of the messages after it, and without usage the request's system prompt
 * and tool schemas (overhead_tokens) — compacting when that is over
 * context_budget × model_max_tokens too.
 *
 * With `ahead: true` the agent does not wait for the summarizer before
 * clipfold's budget (docs/spec.md#compaction-ahead-of-time): the check is
 * compactor.compactAhead, which over `prepare_at` of the budget starts a
 * compaction in the background and lets the model call go on with the
 * messages as they are; a later model call applies it (the same
 * replacement of the agent's messages, the messages added meanwhile kept
 * after the clip-archive), and only a request that reaches the budget
 * first waits, for the rest of the work under way. A `trigger` met still
 * compacts at once: it says when to compact, and compaction ahead of time
 * prepares for the budget alone.
 *
 * This module imports `langchain`, `@langchain/core`, `@langchain/langgraph`
 * and `zod` (peer dependencies); `clipfold` itself never does.
 * @module
 */
import { countTokensApproximately, createMiddleware, tool } from 'langchain';
import { AIMessage, HumanMessage, RemoveMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';
import { convertToOpenAITool } from '@langchain/core/utils/function_calling';
import { Command, REMOVE_ALL_MESSAGES } from '@langchain/langgraph';
import { z } from 'zod';
import { optionalBool } from './args.js';
import { MEMORY_READ_DESCRIPTION, MEMORY_READ_NAME, joinText, memoryRead } from './memory.js';
import { aheadView, positionsByJSON } from './stepview.js';

/**
 * @typedef {import('./compactor.js').Compactor<any>} Compactor
 * @typedef {import('./types.js').Config} Config
 * @typedef {import('./types.js').CompactionResult} CompactionResult
 * @typedef {import('./types.js').LLM} LLM
 * @typedef {import('./types.js').ModelRequest} ModelRequest
 * @typedef {import('./types.js').ContextUsage} ContextUsage
 * @typedef {import('@langchain/core/messages').BaseMessage} BaseMessage
 */

/**
 * summarizationMiddleware's trigger condition: every property given must
 * hold (tokens ≥, messages ≥, tokens ≥ fraction × the model's
 * maxInputTokens).
 * @typedef {{fraction?: number, tokens?: number, messages?: number}} ContextSize
 */

/**
 * summarizationMiddleware's keep: exactly one of them.
 * @typedef {{fraction: number} | {tokens: number} | {messages: number}} Keep
 */

/**
 * @typedef {object} ClipfoldMiddlewareOptions
 * @property {Compactor} compactor     clipfold's compactor (its llm writes the summaries, its store keeps the archive)
 * @property {ContextSize | ContextSize[]} [trigger] when to compact, as summarizationMiddleware's (one condition: all
 *   its properties must hold; a list: any of them). Not given: when clipfold's budget says so (config
 *   context_budget × model_max_tokens)
 * @property {Keep} [keep]             what to keep, as summarizationMiddleware's: the newest `messages` (clipfold's
 *   keep_recent), or the newest messages that fit `tokens` / `fraction` of the model's maxInputTokens (clipfold's
 *   target_tokens: the compacted history, clip-archive included, ends under it). Default `{messages: 20}`
 * @property {{profile?: {maxInputTokens?: number | null}}} [model] the agent's chat model, for `fraction` (its profile)
 * @property {(messages: BaseMessage[]) => number | Promise<number>} [tokenCounter] for `trigger` (default LangChain's
 *   countTokensApproximately)
 * @property {string | ((state: any, runtime: any) => string)} [conversationId] the archive's conversation: default the
 *   run's thread_id (configurable.thread_id), else "default"
 * @property {Config} [config]         clipfold config for these compactions
 * @property {boolean} [archiveInSystemMessage] append the clip-archive to the system message for the model call
 *   (default true; false: it stays the first message). A clip-archive written as a user turn stays first either way
 * @property {(result: CompactionResult) => void} [onCompact] sees every compaction attempted (a failed one changes
 *   nothing)
 * @property {boolean} [ahead]         compact ahead of time (default false): over `prepare_at` of clipfold's budget a
 *   compaction starts in the background and the model call goes on; a later call applies it; a call waits only at the
 *   budget, for the rest of the work under way (compactor.compactAhead). A `trigger` met still compacts at once
 */

/** The additional_kwargs mark of the clip-archive message. */
export const CLIP_ARCHIVE_SOURCE = 'clipfold';

/**
 * A LangChain message as the plug-in reads LangChain messages (docs/spec.md#message-shapes,
 * "LangChain message dicts"): type, content, id, name, tool_calls,
 * tool_call_id.
 * @param {BaseMessage} m
 * @param {number} i
 * @returns {Record<string, unknown>}
 */
export function messageDict(m, i = 0) {
  const type = typeof (/** @type {any} */ (m)?.type) === 'string' ? /** @type {any} */ (m).type : /** @type {any} */ (m)?._getType?.();
  if (typeof type !== 'string') throw new TypeError(`messages[${i}]: not a LangChain message`);
  /** @type {Record<string, unknown>} */
  const d = { type, content: m.content };
  if (m.id) d.id = m.id;
  if (m.name) d.name = m.name;
  const a = /** @type {any} */ (m);
  if (Array.isArray(a.tool_calls) && a.tool_calls.length > 0) {
    d.tool_calls = a.tool_calls.map((/** @type {any} */ c) => ({ name: c.name, args: c.args, id: c.id }));
  }
  if (typeof a.tool_call_id === 'string') d.tool_call_id = a.tool_call_id;
  return d;
}

/**
 * A LangChain message made from the plug-in's dict of one (messageDict's
 * fields): a message compress changed to fit the window (a tool result
 * cleared, a message truncated) comes back as a new message of its type,
 * under its own id.
 * @param {Record<string, any>} d
 * @returns {BaseMessage}
 */
export function messageFromDict(d) {
  const fields = { content: d.content, id: d.id, name: d.name };
  switch (d.type) {
    case 'human': return new HumanMessage(fields);
    case 'ai': return new AIMessage({ ...fields, tool_calls: (d.tool_calls ?? []).map((/** @type {any} */ c) => ({ ...c, type: 'tool_call' })) });
    case 'tool': return new ToolMessage({ ...fields, tool_call_id: d.tool_call_id });
    default: return new SystemMessage(fields);
  }
}

/** @param {BaseMessage} m */
const isClipArchive = (m) => SystemMessage.isInstance(m) && m.additional_kwargs?.lc_source === CLIP_ARCHIVE_SOURCE;

/**
 * messageDict for compactAhead: a clip-archive (a SystemMessage or a
 * HumanMessage the middleware made) without the id the state gave it, as
 * the plug-in wrote it, so that the agent's list is seen to continue the
 * view compactAhead returned.
 * @param {BaseMessage} m
 * @param {number} i
 */
function aheadDict(m, i) {
  const d = messageDict(m, i);
  if (m.additional_kwargs?.lc_source === CLIP_ARCHIVE_SOURCE) delete d.id;
  return d;
}

/**
 * @param {{profile?: {maxInputTokens?: number | null}} | undefined} model
 * @returns {number | undefined}
 */
function maxInputTokens(model) {
  const n = model?.profile?.maxInputTokens;
  return typeof n === 'number' && n > 0 ? n : undefined;
}

/**
 * The trigger, as summarizationMiddleware reads it.
 * @param {ContextSize[]} conditions
 * @param {number} count
 * @param {number} tokens
 * @param {number | undefined} max
 */
function triggered(conditions, count, tokens, max) {
  return conditions.some((c) => {
    let any = false;
    let met = true;
    if (c.messages !== undefined) { any = true; if (count < c.messages) met = false; }
    if (c.tokens !== undefined) { any = true; if (tokens < c.tokens) met = false; }
    if (c.fraction !== undefined) { any = true; if (max === undefined || tokens < Math.floor(max * c.fraction)) met = false; }
    return any && met;
  });
}

/**
 * The provider's count of the last model call, read from the messages:
 * the last AIMessage (the answer to that call) and its
 * usage_metadata.input_tokens, for the messages before it (what that call
 * was sent: the agent appends the answer to the list it sent). null when
 * the last answer carries no usage; an earlier answer's usage is not used
 * (a compaction since may have changed what came before it).
 * @param {BaseMessage[]} messages
 * @returns {ContextUsage | null}
 */
export function usageFromMessages(messages) {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (!AIMessage.isInstance(m)) continue;
    const n = m.usage_metadata?.input_tokens;
    return typeof n === 'number' && Number.isSafeInteger(n) && n > 0 ? { input_tokens: n, messages: i } : null;
  }
  return null;
}

/**
 * The tools of a model request as the JSON schemas a provider is sent
 * (LangChain's convertToOpenAITool; a plain object as it is), for
 * the compactor's overheadTokens.
 * @param {unknown[] | undefined} tools
 * @returns {unknown[]}
 */
export function toolSchemas(tools) {
  return (tools ?? []).map((t) => {
    try {
      return convertToOpenAITool(/** @type {any} */ (t));
    } catch {
      // A tool LangChain cannot describe still costs its name.
      const a = /** @type {any} */ (t);
      return { name: String(a?.name ?? ''), description: String(a?.description ?? '') };
    }
  });
}

/**
 * The messages of a compacted view (the plug-in's dicts): the kept
 * messages are the state's very objects (found by their dict's JSON: a
 * view compactAhead prepared holds the dicts of an earlier call);
 * the clip-archive of `r` a SystemMessage, or a HumanMessage when the
 * plug-in wrote it as a user turn (the kept messages start with a tool
 * call: the model's request must start with a user turn); a message
 * compress changed to fit (a tool result cleared) a new message of its
 * type under its id.
 * @param {unknown[]} view
 * @param {CompactionResult | null} r the compaction that made the view, if one did at this call
 * @param {Record<string, unknown>[]} dicts the dicts sent
 * @param {BaseMessage[]} messages the state's messages, one for each dict
 * @returns {BaseMessage[]}
 */
function stateMessages(view, r, dicts, messages) {
  const byJSON = positionsByJSON(dicts);
  return view.map((d, i) => {
    const a = /** @type {any} */ (d);
    const at = byJSON.get(JSON.stringify(a))?.shift();
    if (at !== undefined) return messages[at];
    const archive = r?.clip_archive ?? null;
    if (i !== 0 || r === null || archive === null || a.content !== archive) return messageFromDict(a);
    const fields = { content: archive, id: `clipfold-${r.operation_id}`, additional_kwargs: { lc_source: CLIP_ARCHIVE_SOURCE } };
    return a.type === 'human' ? new HumanMessage(fields) : new SystemMessage(fields);
  });
}

/**
 * An agent middleware that compacts the agent's messages with clipfold:
 * a drop-in for summarizationMiddleware (see the module comment).
 * @param {ClipfoldMiddlewareOptions} o
 */
export function clipfoldMiddleware(o) {
  const { compactor, trigger, keep = { messages: 20 }, model, tokenCounter = countTokensApproximately, conversationId,
    config, archiveInSystemMessage = true, onCompact, ahead: aheadOption } = o ?? /** @type {any} */ ({});
  if (!compactor || typeof compactor.compress !== 'function') throw new TypeError('clipfoldMiddleware: compactor must be a clipfold compactor (createCompactor)');
  const ahead = optionalBool(aheadOption, 'ahead');
  const conditions = trigger === undefined ? [] : Array.isArray(trigger) ? trigger : [trigger];
  const keys = Object.keys(keep ?? {}).filter((k) => /** @type {any} */ (keep)[k] !== undefined);
  if (keys.length !== 1 || !['messages', 'tokens', 'fraction'].includes(keys[0])) {
    throw new TypeError('clipfoldMiddleware: keep must give exactly one of fraction, tokens or messages');
  }
  const needsProfile = conditions.some((c) => c.fraction !== undefined) || 'fraction' in keep;
  if (needsProfile && maxInputTokens(model) === undefined) {
    throw new TypeError('clipfoldMiddleware: a fraction needs `model` with profile.maxInputTokens; use absolute token counts instead');
  }

  /**
   * The config of a request that sends `overhead` tokens beside its
   * messages (system prompt, tool schemas): overhead_tokens, unless the
   * config sets it, and a keep in tokens that many more (it counts the
   * messages, as summarizationMiddleware's does).
   * @param {number} overhead
   * @returns {Config}
   */
  const requestConfig = (overhead) => {
    const own = config !== undefined && Object.hasOwn(config, 'overhead_tokens');
    const extra = own ? 0 : overhead;
    const base = own ? { ...config } : { ...config, overhead_tokens: overhead };
    if ('messages' in keep) return { ...base, keep_recent: keep.messages };
    if (config !== undefined && Object.hasOwn(config, 'target_tokens')) return base;
    const t = 'tokens' in keep ? keep.tokens : Math.floor(/** @type {number} */ (maxInputTokens(model)) * keep.fraction);
    return { ...base, target_tokens: Math.max(1, Math.floor(t)) + extra };
  };

  /** @type {Map<string, number>} the overhead of each system prompt and tool set seen */
  const overheads = new Map();
  /**
   * @param {string} system
   * @param {unknown[]} tools
   */
  const overheadOf = async (system, tools) => {
    const schemas = toolSchemas(tools);
    const key = JSON.stringify([system, schemas, config?.token_estimator ?? null]);
    let n = overheads.get(key);
    if (n === undefined) {
      if (overheads.size >= 64) overheads.clear();
      n = await compactor.overheadTokens({ system, tools: schemas, config });
      overheads.set(key, n);
    }
    return n;
  };

  /**
   * The compacted messages of a model request, or undefined when nothing
   * changes (not due, nothing to compress, a compaction that failed safely).
   * @param {any} request
   * @returns {Promise<BaseMessage[] | undefined>}
   */
  const compactRequest = async (request) => {
    /** @type {BaseMessage[]} */
    const messages = request.messages;
    if (messages.length === 0) return undefined;
    const sys = request.systemMessage;
    const cfg = requestConfig(await overheadOf(sys ? sys.text : '', request.tools ?? []));
    const dicts = messages.map(ahead ? aheadDict : messageDict);
    const usage = usageFromMessages(messages);
    let triggeredNow = false;
    if (conditions.length > 0) {
      const tokens = await tokenCounter(messages);
      triggeredNow = triggered(conditions, messages.length, tokens, maxInputTokens(model));
    }
    const state = request.state;
    const runtime = request.runtime;
    const conv = typeof conversationId === 'function' ? conversationId(state, runtime)
      : conversationId ?? /** @type {any} */ (runtime)?.configurable?.thread_id ?? 'default';
    if (ahead && !triggeredNow) {
      // compactAhead counts, starts a compaction in the background, applies
      // one that is done, and compacts now only at the budget.
      const { view, result } = await aheadView(compactor, String(conv), dicts, {
        shape: 'langchain', config: cfg, usage: usage ?? undefined, targetShare: 0,
      });
      if (result !== null) onCompact?.(result);
      return view === dicts ? undefined : stateMessages(view, result, dicts, messages);
    }
    // Neither the trigger nor clipfold's budget: nothing to do. countContext
    // pays for the messages new since the conversation's last check only.
    if (!triggeredNow && !(await compactor.countContext(String(conv), dicts, { config: cfg, usage: usage ?? undefined })).due) {
      return undefined;
    }
    const r = await compactor.compress(String(conv), dicts, {
      callerOwned: true, shape: 'langchain', config: cfg, onlyIfDue: !triggeredNow, usage: usage ?? undefined,
    });
    if (r.failed || r.messages_compressed > 0) onCompact?.(r);
    if (r.failed || r.messages_compressed === 0) return undefined;
    return stateMessages(r.history, r, dicts, messages);
  };

  /**
   * The model call, with the clip-archive appended to the system message
   * when the messages start with it as a SystemMessage (a HumanMessage
   * clip-archive stays: it is the user turn the request starts with).
   * @param {any} request
   * @param {(request: any) => Promise<any>} handler
   */
  const callModel = (request, handler) => {
    const [first, ...rest] = request.messages;
    if (!archiveInSystemMessage || !first || !isClipArchive(first)) return handler(request);
    const text = first.text;
    const sys = request.systemMessage;
    const systemMessage = sys && sys.text !== '' ? sys.concat(`\n\n${text}`) : new SystemMessage(text);
    return handler({ ...request, systemMessage, messages: rest });
  };

  return createMiddleware({
    name: 'ClipfoldMiddleware',
    wrapModelCall: async (request, handler) => {
      const next = await compactRequest(request);
      if (next === undefined) return callModel(request, handler);
      const answer = await callModel({ ...request, messages: next }, handler);
      // The state becomes the compacted list and the answer (which follows
      // what the model was sent, so its usage counts those messages).
      return new Command({ update: { messages: [new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), ...next, answer] } });
    },
  });
}

/**
 * @typedef {object} MemoryReadToolOptions
 * @property {Compactor} compactor
 * @property {string} [conversationId] search only this conversation's archive (default: the run's thread_id, else
 *   every conversation)
 * @property {number} [maxTokens] the most tokens an answer takes, counted as the window is (default 1,000; at least 150)
 * @property {string} [description]
 */

/**
 * The memory_read tool (docs/spec.md#search), made with LangChain's `tool()`: the model
 * asks a question in plain words and gets the best archived summaries and
 * removed messages, and the messages still in the agent's state (the
 * caller-owned context, searched with the archive: hits "in your
 * context"), or reads one by id — within `maxTokens`, by the plug-in's
 * buildMemoryRead: whole hits first, then the best passage of the next,
 * then what was left out and how to read it.
 * @param {MemoryReadToolOptions} o
 */
export function memoryReadTool(o) {
  const { compactor, conversationId, maxTokens, description = MEMORY_READ_DESCRIPTION } = o ?? /** @type {any} */ ({});
  if (!compactor || typeof compactor.search !== 'function') throw new TypeError('memoryReadTool: compactor must be a clipfold compactor (createCompactor)');
  return tool(async (input, config) => memoryRead(compactor, {
    ...input, conversationId: conversationId ?? /** @type {any} */ (config)?.configurable?.thread_id, maxTokens,
    // In an agent, the tool's runtime carries the graph's state: the messages the model sees.
    inContext: /** @type {any} */ (config)?.state?.messages?.map(messageDict),
  }), {
    name: MEMORY_READ_NAME,
    description,
    schema: z.object({
      query: z.string().optional().describe('a question in plain words'),
      id: z.string().optional().describe('the id of a hit to read (with a query: the part about it)'),
      limit: z.number().int().positive().max(50).optional().describe('at most this many hits (default 10)'),
    }),
  });
}

/**
 * llm_complete answered by a LangChain chat model: clipfold's summaries
 * written by the model summarizationMiddleware would have used. The
 * request's system prompt and messages become LangChain messages; the
 * answer's text is the summary; a thrown error is a retryable
 * `unavailable` (clipfold retries, then fails safe).
 * @param {{invoke(messages: BaseMessage[], options?: any): Promise<BaseMessage>}} model
 * @returns {LLM}
 */
export function chatModelLLM(model) {
  if (!model || typeof model.invoke !== 'function') throw new TypeError('chatModelLLM: model must be a LangChain chat model');
  return {
    async complete(/** @type {ModelRequest} */ req) {
      /** @type {BaseMessage[]} */
      const msgs = [];
      const sys = joinText(req.system);
      if (sys) msgs.push(new SystemMessage(sys));
      for (const m of req.messages) {
        const text = typeof m.content === 'string' ? m.content : m.content.map((p) => p.text ?? '').join('\n');
        msgs.push(m.role === 'assistant' ? new AIMessage(text) : m.role === 'system' ? new SystemMessage(text) : new HumanMessage(text));
      }
      try {
        const out = await model.invoke(msgs, req.timeout_ms ? { timeout: req.timeout_ms } : undefined);
        return { content: [{ type: 'text', text: out.text }], stop_reason: 'end_turn' };
      } catch (err) {
        return { error: { code: 'unavailable', message: `chat model: ${err instanceof Error ? err.message : String(err)}`, retryable: true } };
      }
    },
  };
}
