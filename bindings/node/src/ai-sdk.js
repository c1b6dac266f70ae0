/**
 * clipfold for the Vercel AI SDK (`ai` 6 and 7): a `prepareStep` that
 * compacts the messages of each step when they are due, and the
 * memory_read tool.
 *
 * ```js
 * import { generateText, stepCountIs } from 'ai';
 * import { createCompactor } from 'clipfold';
 * import { prepareStep, memoryReadTool } from 'clipfold/ai-sdk';
 * const compactor = await createCompactor();
 * const r = await generateText({
 *   model, messages, stopWhen: stepCountIs(10),
 *   tools: { ...tools, memory_read: memoryReadTool({ compactor, conversationId: 'chat-1' }) },
 *   prepareStep: prepareStep({ compactor, conversationId: 'chat-1' }),
 * });
 * ```
 *
 * The AI SDK hands prepareStep the whole list every step (the messages
 * given plus every response so far; ai 7 hands them as `initialMessages`
 * and `responseMessages`, its `messages` being those it carried forward
 * from the step before) and the app usually keeps its whole list across
 * turns: the caller owns the history (docs/spec.md#who-owns-the-history
 * history_owner "caller"). Each step the list is compacted when due into
 * the same compacted view — summaries archived once, removed messages
 * written to recall once, searchable through memory_read.
 *
 * prepareStep runs before every model call of generateText/streamText
 * (each step of a tool loop), and counts the step as the model will: the
 * provider's usage of the step before (`steps[i].usage.inputTokens`, for
 * the messages that step was sent), the estimate of what came after it,
 * and without usage (the first step) the `system` prompt and `tools` given
 * to prepareStep as overhead_tokens (a prepareStep does not see them).
 *
 * With `ahead: true` no step waits for the summarizer before the limit
 * (docs/spec.md#compaction-ahead-of-time): the check is
 * compactor.compactAhead, which over `prepare_at` of the limit starts a
 * compaction in the background and lets the step go on with its messages
 * as they are; a later step (of this generateText call or a later one)
 * applies it, the messages that came meanwhile after the clip-archive, and
 * only a step that reaches the limit first waits, for the rest of the
 * work under way.
 *
 * This module imports `ai` and `zod` (peer dependencies); `clipfold`
 * itself never does.
 * @module
 */
import { asSchema, tool } from 'ai';
import { z } from 'zod';
import { optionalBool } from './args.js';
import { DEFAULT_TARGET_SHARE } from './compactor.js';
import { MEMORY_READ_DESCRIPTION, joinText, memoryRead } from './memory.js';
import { aheadChecker, checkStep, inputCount } from './stepview.js';

/**
 * @typedef {import('./compactor.js').Compactor<any>} Compactor
 * @typedef {import('./types.js').Config} Config
 * @typedef {import('./types.js').CompactionResult} CompactionResult
 * @typedef {import('ai').ModelMessage} ModelMessage
 * @typedef {string | import('ai').SystemModelMessage | import('ai').SystemModelMessage[]} Instructions the AI SDK's
 *   instructions (ai 7; ai 6's `system`)
 */

/**
 * @typedef {object} PrepareStepOptions
 * @property {Compactor} compactor
 * @property {string} conversationId   the archive's conversation (one per chat)
 * @property {string} [system]         your system prompt: given, the clip-archive is appended to it and the step's
 *   `system` is set (the messages then hold no system message); not given, the clip-archive stays the system message
 *   compress put first in the messages. ai 7, which takes no system message in the messages, hands prepareStep the
 *   step's `instructions`: the clip-archive is appended to them (to `system` when there are none) and the step's
 *   `instructions` set. Counted as overhead_tokens until the model's usage counts it
 * @property {Record<string, any>} [tools] your tools (the `tools` of generateText): their schemas are counted as
 *   overhead_tokens until the model's usage counts them
 * @property {number} [targetShare]    compact to this share of the limit (default 0.8; compactIfDue's)
 * @property {Config} [config]         config for these compactions (model_max_tokens: your model's context window)
 * @property {(result: CompactionResult) => void} [onCompact] sees every compaction that changed the messages
 *   (including a failed one: the step then runs on the messages as they were)
 * @property {boolean} [ahead]         compact ahead of time (default false): over `prepare_at` of the limit a compaction
 *   starts in the background and the step goes on; a later step applies it; a step waits only at the limit, for the
 *   rest of the work under way (compactor.compactAhead)
 */

/**
 * The tools of generateText as the JSON schemas a provider is sent (name,
 * description, input schema), for the compactor's overheadTokens.
 * @param {Record<string, any> | undefined} tools
 * @returns {Promise<unknown[]>}
 */
export async function toolSchemas(tools) {
  return Promise.all(Object.entries(tools ?? {}).map(async ([name, t]) => {
    /** @type {unknown} */
    let parameters = {};
    try {
      if (t?.inputSchema !== undefined) parameters = await asSchema(t.inputSchema).jsonSchema;
    } catch {
      // a schema the SDK cannot describe: its name and description still count
    }
    return { type: 'function', name, description: t?.description ?? '', parameters };
  }));
}

/**
 * A prepareStep function: when the step's messages are due (over
 * context_budget × model_max_tokens; once compacted, their compacted view),
 * it returns `{ messages }` compacted — the clip-archive first, the newest
 * messages verbatim, tool calls with their results — else nothing (the step
 * runs on its messages as they are). A failed compaction archives nothing:
 * the step gets the view earlier compactions made, or its messages as they
 * are.
 * @param {PrepareStepOptions} o
 * @returns {(step: {messages: ModelMessage[], steps?: ReadonlyArray<{usage?: {inputTokens?: number}}>, instructions?: Instructions,
 *   initialMessages?: ModelMessage[], responseMessages?: ModelMessage[], experimental_steeringMessages?: ModelMessage[]})
 *   => Promise<{messages: ModelMessage[], system?: string, instructions?: Instructions} | undefined>}
 */
export function prepareStep(o) {
  const { compactor, conversationId, system, tools, targetShare = DEFAULT_TARGET_SHARE, config, onCompact, ahead: aheadOption } = o ?? {};
  if (!compactor || typeof compactor.compactIfDue !== 'function') throw new TypeError('prepareStep: compactor must be a clipfold compactor (createCompactor)');
  if (typeof conversationId !== 'string' || conversationId === '') throw new TypeError('prepareStep: conversationId must be a non-empty string');
  const adapter = { compactor, onCompact, ahead: optionalBool(aheadOption, 'ahead') ? aheadChecker(compactor, onCompact) : null };
  /** @type {Promise<Config> | undefined} the config with overhead_tokens (system prompt and tools), once */
  let withOverhead;
  const stepConfig = () => {
    withOverhead ??= (async () => {
      if (config !== undefined && Object.hasOwn(config, 'overhead_tokens')) return config;
      const overhead = await compactor.overheadTokens({ system, tools: await toolSchemas(tools), config });
      return { ...config, overhead_tokens: overhead };
    })();
    return withOverhead;
  };
  /**
   * Per generateText call (its `steps` array): what the last step was
   * sent (the view, with the clip-archive as its first message when it
   * has one), how many messages of the SDK's list that stood for, that
   * step's number, and the instructions returned (undefined: none) with
   * the step's own they were made of.
   * @type {WeakMap<object, {view: ModelMessage[], length: number, step: number, archive: string | null,
   *   instructions: Instructions | undefined, base: Instructions | undefined}>}
   */
  const sent = new WeakMap();
  return async (args) => {
    const { steps } = args;
    const messages = sdkList(args);
    const prev = steps ? sent.get(steps) : undefined;
    // The provider counted what the step before was sent: continue from
    // that view, with what the SDK appended since (the answer, the tool
    // results), so its usage counts the view's messages.
    let history = messages;
    /** @type {import('./types.js').ContextUsage | undefined} */
    let usage;
    /** @type {string | null} */
    let archive = null;
    if (prev && steps && prev.step === steps.length - 1 && messages.length >= prev.length) {
      history = [...prev.view, ...messages.slice(prev.length)];
      archive = prev.archive;
      const n = inputCount(steps.at(-1)?.usage?.inputTokens);
      if (n !== undefined) usage = { input_tokens: n, messages: prev.view.length };
    }
    // Ahead of time, compactAhead maps the SDK's whole list onto the view it returned last.
    const checked = await checkStep(adapter, conversationId, { list: messages, history, archive },
      { shape: 'ai_sdk', targetShare, config: await stepConfig(), usage });
    const view = checked.view;
    archive = checked.archive;
    const moved = archive !== null && view[0]?.role === 'system' && view[0].content === archive;
    /** @type {{messages: ModelMessage[], system?: string, instructions?: Instructions} | undefined} */
    let out;
    /** @type {Instructions | undefined} */
    let base;
    if (!Object.hasOwn(args, 'instructions')) {
      // ai 6: the step's system is given as `system`, the SDK's own otherwise; a system message may lead the messages.
      if (view !== messages) out = system !== undefined && moved ? { system: joinText(system, archive) ?? '', messages: view.slice(1) } : { messages: view };
    } else {
      // ai 7 hands prepareStep the step's instructions and carries those returned forward (the ones
      // made here are replaced); the clip-archive goes after them, not in the messages (streamText
      // rejects a system message there).
      const ours = prev?.instructions !== undefined && args.instructions === prev.instructions;
      base = ours ? prev?.base : args.instructions;
      if (moved) out = { instructions: withArchive(base ?? system, /** @type {string} */ (archive)), messages: view.slice(1) };
      else if (ours) out = { instructions: base ?? [], messages: view };
      else if (view !== messages) out = { messages: view };
    }
    if (steps) sent.set(steps, { view, length: messages.length, step: steps.length, archive, instructions: out?.instructions, base });
    return out;
  };
}

/**
 * The SDK's list of a step as ai 6 hands it to prepareStep: every message
 * given and every response since. ai 7 hands over the messages it carried
 * forward (those a prepareStep returned, and what came after them) and,
 * with them, the messages given (`initialMessages`) and the responses
 * (`responseMessages`): its list is those, with the steering messages each
 * step was sent before its responses (`experimental_steeringMessages`).
 * @param {{messages: ModelMessage[], initialMessages?: ModelMessage[], responseMessages?: ModelMessage[],
 *   steps?: ReadonlyArray<{response?: {messages?: readonly unknown[]}, experimental_steeringMessages?: ModelMessage[]}>,
 *   experimental_steeringMessages?: ModelMessage[]}} args
 * @returns {ModelMessage[]}
 */
function sdkList(args) {
  const { initialMessages, responseMessages, steps = [] } = args;
  if (!Array.isArray(initialMessages) || !Array.isArray(responseMessages)) return args.messages;
  // The responses before the first step's (of tool approvals given with the messages), then each step's.
  let at = responseMessages.length - steps.reduce((n, s) => n + (s.response?.messages?.length ?? 0), 0);
  const list = [...initialMessages, ...responseMessages.slice(0, at)];
  for (const s of steps) {
    const n = s.response?.messages?.length ?? 0;
    list.push(...(s.experimental_steeringMessages ?? []), ...responseMessages.slice(at, at + n));
    at += n;
  }
  list.push(...(args.experimental_steeringMessages ?? []));
  return list;
}

/**
 * The AI SDK's instructions with the clip-archive after them: one text
 * when they are text (or none), else their system messages and one more.
 * @param {Instructions | undefined} instructions
 * @param {string} archive
 * @returns {Instructions}
 */
function withArchive(instructions, archive) {
  if (instructions === undefined || instructions === null || typeof instructions === 'string') return joinText(instructions, archive) ?? '';
  /** @type {import('ai').SystemModelMessage} */
  const message = { role: 'system', content: archive };
  return [...(Array.isArray(instructions) ? instructions : [instructions]), message];
}

/**
 * @typedef {object} MemoryReadToolOptions
 * @property {Compactor} compactor
 * @property {string} [conversationId] search only this conversation's archive (default: every conversation)
 * @property {number} [maxTokens]      the most tokens an answer takes, counted as the window is (default 1,000; at least 150)
 * @property {string} [description]    what the model is told (default MEMORY_READ_DESCRIPTION)
 */

/**
 * The memory_read tool (docs/spec.md#search) the clip-archive points to: the model
 * asks a question in plain words and gets the best archived summaries and
 * removed messages, and the messages of the step that are still in its
 * context (the AI SDK hands a tool the step's messages; they are searched
 * with the archive: hits "in your context"), or reads one by id — within
 * `maxTokens`, by the plug-in's buildMemoryRead: whole hits first, then
 * the best passage of the next, then what was left out and how to read
 * it. Register it under the name `memory_read`.
 * @param {MemoryReadToolOptions} o
 */
export function memoryReadTool(o) {
  const { compactor, conversationId, maxTokens, description = MEMORY_READ_DESCRIPTION } = o ?? {};
  if (!compactor || typeof compactor.search !== 'function') throw new TypeError('memoryReadTool: compactor must be a clipfold compactor (createCompactor)');
  return tool({
    description,
    inputSchema: z.object({
      query: z.string().optional().describe('a question in plain words'),
      id: z.string().optional().describe('the id of a hit to read (with a query: the part about it)'),
      limit: z.number().int().positive().max(50).optional().describe('at most this many hits (default 10)'),
    }),
    execute: async (input, options) => memoryRead(compactor, { ...input, conversationId, maxTokens, inContext: options?.messages }),
  });
}
