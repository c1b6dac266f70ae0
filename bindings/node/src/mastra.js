/**
 * clipfold for Mastra (`@mastra/core` ≥ 1): `clipfoldProcessor`, an input
 * processor that compacts what the agent's Memory recalled (and the turn's
 * tool loop added) before every model call, and the `memory_read` tool the
 * clip-archive points to, made with Mastra's `createTool`.
 *
 * ```js
 * import { Agent } from '@mastra/core/agent';
 * import { Memory } from '@mastra/memory';
 * import { createCompactor } from 'clipfold';
 * import { clipfoldProcessor, memoryReadTool } from 'clipfold/mastra';
 * const compactor = await createCompactor({ config: { model_max_tokens: 128000 } });
 * const agent = new Agent({
 *   id: 'ops', name: 'ops', instructions, model,
 *   memory: new Memory({ storage, options: { lastMessages: 1000 } }),   // recall the thread; clipfold fits it
 *   tools: { ...tools, memory_read: memoryReadTool({ compactor }) },
 *   inputProcessors: [clipfoldProcessor({ compactor })],
 * });
 * ```
 *
 * Mastra 1 replaced the Memory option `processors` with input processors
 * (its TokenLimiter is one). This one works where TokenLimiter does its
 * budgeting, in `processLLMRequest`: on the prompt the model is about to
 * receive — the system messages, the messages Memory recalled, the turn,
 * the tool calls and results of the loop so far, as AI SDK prompt messages
 * (the shape "Vercel AI SDK ModelMessage" the plug-in reads). When the
 * prompt is due it is compacted into the plug-in's view: the clip-archive,
 * the instructions, the newest messages verbatim with tool calls and their
 * results. The change is to this model call only: Memory's storage keeps
 * every message, the compacted ones are also in clipfold's recall storage
 * (searchable through memory_read), and each later call is compacted into
 * the same view (docs/spec.md#who-owns-the-history, history_owner "caller").
 *
 * It counts the request as the model will: the provider's usage of the
 * step before (`steps[i].usage.inputTokens`, for the view that step was
 * sent), the estimate of what was appended since, and the tool schemas of
 * the step (from `processInputStep`) as overhead_tokens until a usage
 * counts them; the system messages are in the prompt.
 *
 * With `ahead: true` no model call waits for the summarizer before the
 * limit (docs/spec.md#compaction-ahead-of-time): the check is
 * compactor.compactAhead on the prompt as Mastra builds it, which over
 * `prepare_at` of the limit starts a compaction in the background and lets
 * the call go on with its prompt as it is; a later call (of this turn or a
 * later one) applies it, what came meanwhile after the clip-archive, and
 * only a call that reaches the limit first waits, for the rest of the
 * work under way.
 *
 * This module imports `@mastra/core` and `zod` (peer dependencies);
 * `clipfold` itself never does.
 * @module
 */
import { createTool } from '@mastra/core/tools';
import { z } from 'zod';
import { DEFAULT_TARGET_SHARE } from './compactor.js';
import { MEMORY_READ_DESCRIPTION, MEMORY_READ_NAME, memoryRead } from './memory.js';
import { optionalBool } from './args.js';
import { CONTINUATION, aheadChecker, checkStep, continueView, sentView, userTurnFirst } from './stepview.js';

/**
 * @typedef {import('./compactor.js').Compactor<any>} Compactor
 * @typedef {import('./types.js').Config} Config
 * @typedef {import('./types.js').CompactionResult} CompactionResult
 * @typedef {{role: string, content: unknown}} PromptMessage one message of Mastra's LanguageModelV2Prompt
 */

/**
 * @typedef {object} ClipfoldProcessorOptions
 * @property {Compactor} compactor
 * @property {string | ((args: {requestContext?: any}) => string)} [conversationId] the archive's conversation:
 *   default the Memory thread of the call (requestContext "MastraMemory"), else "default"
 * @property {number} [targetShare]    compact to this share of the limit (default 0.8; compactIfDue's)
 * @property {Config} [config]         config for these compactions (model_max_tokens: your model's context window)
 * @property {(result: CompactionResult) => void} [onCompact] sees every compaction that changed the prompt
 *   (including a failed one: the call then gets the view earlier compactions made, or the prompt as it is)
 * @property {boolean} [ahead]         compact ahead of time (default false): over `prepare_at` of the limit a compaction
 *   starts in the background and the model call goes on; a later call applies it; a call waits only at the limit, for
 *   the rest of the work under way (compactor.compactAhead)
 */

/** The processor's key in Mastra's per-request processor state. */
const STATE = 'clipfold';

/**
 * The tools of a step as the JSON schemas a provider is sent (Mastra hands
 * processInputStep its tools converted, the schema under
 * `parameters.jsonSchema`), for the compactor's overheadTokens.
 * @param {Record<string, any> | undefined} tools
 * @returns {unknown[]}
 */
export function toolSchemas(tools) {
  return Object.entries(tools ?? {}).map(([name, t]) => ({
    type: 'function', name, description: String(t?.description ?? ''),
    parameters: t?.parameters?.jsonSchema ?? t?.parameters ?? {},
  }));
}

/** @param {PromptMessage} m @returns {'system' | 'user' | 'other'} */
const kind = (m) => (m.role === 'system' ? 'system' : m.role === 'user' ? 'user' : 'other');

/**
 * The prompt the model is sent for a view: the clip-archive after the
 * other leading system messages (the instructions stay the prefix a
 * provider caches), and a user turn first after them.
 * @param {PromptMessage[]} view
 * @param {string | null} archive
 * @returns {PromptMessage[]}
 */
function promptOf(view, archive) {
  let out = view;
  // The plug-in renders the clip-archive first: a system message, or a
  // user turn when the kept messages start with an assistant turn.
  const first = /** @type {any} */ (view[0]);
  const text = typeof first?.content === 'string' ? first.content
    : Array.isArray(first?.content) ? first.content.map((/** @type {any} */ p) => p?.text ?? '').join('') : null;
  if (archive !== null && text === archive) {
    const n = view.findIndex((m, i) => i > 0 && m.role !== 'system');
    const end = n < 0 ? view.length : n;
    // A user turn of the prompt holds parts (the provider's prompt form:
    // its models map over them), where the plug-in writes a string.
    const turn = first.role === 'user' && typeof first.content === 'string' ? { ...first, content: [{ type: 'text', text: first.content }] } : first;
    out = [...view.slice(1, end), turn, ...view.slice(end)];
  }
  return userTurnFirst(out, kind, { role: 'user', content: [{ type: 'text', text: CONTINUATION }] });
}

/**
 * An input processor (`new Agent({ inputProcessors: [...] })`) that
 * compacts the prompt of every model call when it is due (see the module
 * comment). Nothing changes when it is not.
 * @param {ClipfoldProcessorOptions} o
 */
export function clipfoldProcessor(o) {
  const { compactor, conversationId, targetShare = DEFAULT_TARGET_SHARE, config, onCompact, ahead: aheadOption } = o ?? /** @type {any} */ ({});
  if (!compactor || typeof compactor.compactIfDue !== 'function') throw new TypeError('clipfoldProcessor: compactor must be a clipfold compactor (createCompactor)');
  if (conversationId !== undefined && typeof conversationId !== 'function' && (typeof conversationId !== 'string' || conversationId === '')) {
    throw new TypeError('clipfoldProcessor: conversationId must be a non-empty string or a function');
  }
  const adapter = { compactor, onCompact, ahead: optionalBool(aheadOption, 'ahead') ? aheadChecker(compactor, onCompact) : null };
  const ownOverhead = config !== undefined && Object.hasOwn(config, 'overhead_tokens');
  /** @type {Map<string, number>} the overhead of each tool set seen */
  const overheads = new Map();
  /** @param {Record<string, any> | undefined} tools */
  const overheadOf = async (tools) => {
    const schemas = toolSchemas(tools);
    const key = JSON.stringify([schemas, config?.token_estimator ?? null]);
    let n = overheads.get(key);
    if (n === undefined) {
      if (overheads.size >= 64) overheads.clear();
      n = await compactor.overheadTokens({ tools: schemas, config });
      overheads.set(key, n);
    }
    return n;
  };
  /** @param {any} args @returns {string} */
  const conversation = (args) => {
    if (typeof conversationId === 'function') return String(conversationId(args));
    return conversationId ?? args.requestContext?.get?.('MastraMemory')?.thread?.id ?? 'default';
  };

  return {
    id: 'clipfold',
    name: 'clipfold',

    /**
     * Before each step: the overhead of the step's tool schemas, for the
     * prompt stage. Changes nothing.
     * @param {{tools?: Record<string, any>, state: Record<string, any>}} args
     * @returns {Promise<undefined>}
     */
    async processInputStep({ tools, state }) {
      if (!ownOverhead) state[STATE] = { ...state[STATE], overhead: await overheadOf(tools) };
      return undefined;
    },

    /**
     * Before each model call: the prompt compacted when due.
     * @param {{prompt: PromptMessage[], steps?: ReadonlyArray<{usage?: {inputTokens?: number}}>,
     *   state: Record<string, any>, requestContext?: any}} args
     * @returns {Promise<{prompt: any[]} | undefined>}
     */
    async processLLMRequest(args) {
      const { prompt, steps = [], state } = args;
      if (!Array.isArray(prompt) || prompt.length === 0) return undefined;
      /** @type {{overhead?: number, sent?: import('./stepview.js').SentView<PromptMessage>, step?: number, archive?: string | null}} */
      const s = state[STATE] ?? {};
      // The step before was sent s.sent's view, and the provider counted it.
      const prev = s.sent && s.step === steps.length - 1 ? s.sent : undefined;
      const { history, usage } = continueView(prev, prompt, steps.at(-1)?.usage?.inputTokens);
      const cfg = ownOverhead ? config : { ...config, overhead_tokens: s.overhead ?? 0 };
      // Ahead of time, compactAhead maps the prompt Mastra built onto the view it returned last.
      const { view, archive } = await checkStep(adapter, conversation(args), { list: prompt, history, archive: prev ? s.archive ?? null : null },
        { shape: 'ai_sdk', targetShare, config: cfg, usage });
      state[STATE] = { ...s, sent: sentView(view, prompt), step: steps.length, archive };
      if (view === prompt) return undefined;
      return { prompt: promptOf(view, archive) };
    },
  };
}

/**
 * @typedef {object} MemoryReadToolOptions
 * @property {Compactor} compactor
 * @property {string} [conversationId] search only this conversation's archive (default: the agent's Memory thread,
 *   else every conversation)
 * @property {number} [maxTokens]      the most tokens an answer takes, counted as the window is (default 1,000; at least 150)
 * @property {string} [description]    what the model is told (default MEMORY_READ_DESCRIPTION)
 */

/**
 * The memory_read tool (docs/spec.md#search)
 * made with Mastra's `createTool`: the model asks a question in plain
 * words and gets the best archived summaries and compacted messages of the
 * thread, or reads one by id — within `maxTokens`, by the plug-in's
 * buildMemoryRead. Register it under the key `memory_read`.
 * @param {MemoryReadToolOptions} o
 */
export function memoryReadTool(o) {
  const { compactor, conversationId, maxTokens, description = MEMORY_READ_DESCRIPTION } = o ?? /** @type {any} */ ({});
  if (!compactor || typeof compactor.search !== 'function') throw new TypeError('memoryReadTool: compactor must be a clipfold compactor (createCompactor)');
  return createTool({
    id: MEMORY_READ_NAME,
    description,
    inputSchema: z.object({
      query: z.string().optional().describe('a question in plain words'),
      id: z.string().optional().describe('the id of a hit to read (with a query: the part about it)'),
      limit: z.number().int().positive().max(50).optional().describe('at most this many hits (default 10)'),
    }),
    execute: async (input, context) => memoryRead(compactor, {
      ...input, conversationId: conversationId ?? /** @type {any} */ (context)?.agent?.threadId, maxTokens,
    }),
  });
}
