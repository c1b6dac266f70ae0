// clipfold/mastra end to end against the real Mastra (`@mastra/core` and
// `@mastra/memory`, pinned in package-lock.json): an Agent with a Memory
// that recalls the whole thread, a tool, the memory_read tool and
// clipfoldProcessor, driven by Mastra's own mock model
// (MastraLanguageModelV2Mock, no network) through 55 turns with tool calls,
// and again with compaction ahead of time (`ahead: true`), the summaries
// written by an OpenAI-compatible summarizer on a real node:http server.
// Every request the model receives is checked: its size counted by the
// plug-in, tool pairs, a user turn first after the system messages.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent } from '@mastra/core/agent';
import { InMemoryStore } from '@mastra/core/storage';
import { MastraLanguageModelV2Mock } from '@mastra/core/test-utils/llm-mock';
import { createTool } from '@mastra/core/tools';
import { Memory } from '@mastra/memory';
import { z } from 'zod';
import { createCompactor, MemoryStore } from '../src/index.js';
import { clipfoldProcessor, memoryReadTool, toolSchemas } from '../src/mastra.js';
import { watchedAhead } from './helpers/ahead.js';
import { wasmPath } from './helpers/common.js';

const CONFIG = { model_max_tokens: 4000, context_budget: 0.5, keep_recent: 4, chunk_size: 8, max_summary_tokens: 150 };
const LIMIT = CONFIG.model_max_tokens * CONFIG.context_budget;
// Ahead of time a compaction is prepared to a lower target (less the distance between the thresholds and the growth
// meanwhile: docs/spec.md#compaction-ahead-of-time): a window of 4,000 leaves it room for the clip-archive and the
// newest messages (at 2,000 the target is under what they need, and the prepared compactions fail).
const AHEAD_CONFIG = { ...CONFIG, model_max_tokens: 8000 };
const INSTRUCTIONS = 'You are the on-call assistant. Use lookup_service for facts about services.';
const FACT = 'the staging cluster codename is BLUE-OTTER-7';
const TURNS = 55;

/** A service's long tool output. @param {string} name */
function serviceDoc(name) {
  const n = Number(/\d+/.exec(name)?.[0] ?? 0);
  return `${name}: runs on port ${8000 + n}, owned by team-${['otter', 'heron', 'lynx', 'badger', 'marten', 'ibis', 'vole', 'gecko'][n % 8]}. `
    + 'Deploys go through the blue/green pipeline with a canary of 5 percent; rollbacks are automatic when the error budget '
    + 'drops below 99.5. Logs ship to the central collector and are kept for 30 days. '.repeat(3);
}

/** The text of a prompt message. @param {any} m */
const text = (m) => (typeof m.content === 'string' ? m.content : m.content.map((/** @type {any} */ p) => p.text ?? JSON.stringify(p.output ?? p.input ?? '')).join(''));

/**
 * Mastra's mock model playing a tool-using agent: to a question about a
 * service it calls lookup_service, then answers; asked for the codename
 * it calls memory_read, then answers with what it returned. It reports as
 * its usage the plug-in's count of the request (the provider's count).
 * @param {Awaited<ReturnType<typeof createCompactor>>} compactor
 * @param {{prompt: any[], tokens: number}[]} requests every request it received, counted
 * @param {() => Promise<void>} [onCall] runs first at each call
 */
function agentModel(compactor, requests, onCall) {
  let calls = 0;
  return new MastraLanguageModelV2Mock({
    doGenerate: async (options) => {
      await onCall?.();
      const prompt = structuredClone(options.prompt);
      const tools = (options.tools ?? []).map((/** @type {any} */ t) => ({ type: 'function', name: t.name, description: t.description ?? '', parameters: t.inputSchema }));
      const tokens = (await compactor.estimateTokens(/** @type {any} */ (prompt), CONFIG)).tokens + await compactor.overheadTokens({ tools, config: CONFIG });
      requests.push({ prompt, tokens });
      const usage = { inputTokens: tokens, outputTokens: 10, totalTokens: tokens + 10 };
      const lastUser = prompt.findLastIndex((m) => m.role === 'user');
      const question = text(prompt[lastUser]);
      const results = prompt.slice(lastUser + 1).filter((m) => m.role === 'tool').flatMap((m) => m.content);
      const call = (/** @type {string} */ toolName, /** @type {object} */ input) => ({
        content: [{ type: 'tool-call', toolCallId: `call_${++calls}`, toolName, input: JSON.stringify(input) }],
        finishReason: 'tool-calls', usage, warnings: [],
      });
      const say = (/** @type {string} */ t) => ({ content: [{ type: 'text', text: t }], finishReason: 'stop', usage, warnings: [] });
      if (question.startsWith('Remember')) return say('Noted.');
      if (/codename/.test(question)) {
        if (results.length === 0) return call('memory_read', { query: 'What is the staging cluster codename?' });
        const out = /** @type {any} */ (results[0]).output;
        return say(`From memory: ${typeof out.value === 'string' ? out.value : JSON.stringify(out.value)}`);
      }
      const svc = /service-\d+/.exec(question)?.[0] ?? 'service-0';
      if (results.length === 0) return call('lookup_service', { name: svc });
      return say(`${svc} is documented above.`);
    },
  });
}

/**
 * Every tool result of a prompt answers a tool call of an earlier assistant
 * message of the same prompt, and every tool call has its result.
 * @param {any[]} prompt
 */
function assertToolPairs(prompt) {
  const calls = new Set();
  const answered = new Set();
  for (const m of prompt) {
    if (m.role === 'assistant') for (const c of m.content) if (c.type === 'tool-call') calls.add(c.toolCallId);
    if (m.role === 'tool') {
      for (const c of m.content) {
        assert.ok(calls.has(c.toolCallId), `tool result ${c.toolCallId} without its call`);
        answered.add(c.toolCallId);
      }
    }
  }
  for (const id of calls) assert.ok(answered.has(id), `tool call ${id} without its result`);
}

describe('clipfold/mastra with the real Mastra', () => {
  for (const ahead of [false, true]) test(`${TURNS} turns with tool calls${ahead ? ', compacted ahead of time' : ''}: every request within the window, tool pairs intact, a summary, a user turn first, the first turn's fact found by memory_read, nothing lost`, async () => {
    const store = new MemoryStore();
    // Ahead of time: summarized by a summarizer on a node:http server, held until the model is called meanwhile.
    const config = ahead ? AHEAD_CONFIG : CONFIG;
    const limit = config.model_max_tokens * config.context_budget;
    const watch = ahead ? await watchedAhead({ store, config }) : null;
    const compactor = watch?.compactor ?? await createCompactor({ wasmPath: wasmPath(), store, config });
    try {
      /** @type {{prompt: any[], tokens: number}[]} */
      const requests = [];
      /** @type {import('../src/index.js').CompactionResult[]} */
      const compactions = [];
      /** @type {any[]} the prompt of the last call as Mastra built it */
      let fullPrompt = [];
      const lookup = createTool({
        id: 'lookup_service', description: 'Facts about a service', inputSchema: z.object({ name: z.string() }),
        execute: async ({ name }) => serviceDoc(name),
      });
      const agent = new Agent({
        id: 'ops', name: 'ops', instructions: INSTRUCTIONS, model: agentModel(compactor, requests, watch?.modelCall),
        memory: new Memory({ storage: new InMemoryStore(), options: { lastMessages: 1000 } }),
        tools: { lookup_service: lookup, memory_read: memoryReadTool({ compactor, maxTokens: 300 }) },
        inputProcessors: [
          { id: 'witness', processLLMRequest: async ({ prompt }) => { fullPrompt = structuredClone(prompt); return undefined; } },
          clipfoldProcessor({ compactor, ahead, onCompact: (r) => compactions.push(r) }),
        ],
      });
      const memory = { thread: 'thread-1', resource: 'user-1' };
      let last = '';
      for (let i = 0; i < TURNS; i++) {
        const q = i === 0 ? `Remember this: ${FACT}.` : i === TURNS - 1 ? 'What was the staging cluster codename I gave you at the start?'
          : `What port does service-${i} use, and who owns it?`;
        const r = await agent.generate(q, { memory, maxSteps: 5 });
        last = r.text;
      }

      // Compactions happened, none failed.
      const done = compactions.filter((r) => !r.failed && r.messages_compressed > 0);
      assert.ok(done.length >= 3, `${done.length} compactions`);
      assert.deepEqual(compactions.filter((r) => r.failed).map((r) => r.failure_message), [], 'no failed compaction');
      assert.ok(requests.length >= 2 * TURNS - 2, `${requests.length} model calls`);
      // Ahead of time: started in the background, the model called meanwhile, applied later, written by the summarizer.
      const aheadStats = watch?.check();
      if (watch) assert.ok(done.every((r) => r.batches.every((b) => b.method === 'llm')), 'every summary by the summarizer');

      // Every request: within the window, tool pairs intact, one clip-archive at most, a user turn after the system messages.
      for (const [i, { prompt, tokens }] of requests.entries()) {
        assert.ok(tokens <= limit, `request ${i}: ${tokens} tokens > ${limit}`);
        assertToolPairs(prompt);
        const first = prompt.find((m) => m.role !== 'system');
        assert.equal(first?.role, 'user', `request ${i} starts with ${first?.role} after the system messages`);
        assert.equal(prompt[0].content, INSTRUCTIONS, `request ${i}: the instructions stay first`);
        assert.ok(prompt.filter((m) => text(m).startsWith('[Context Summary')).length <= 1);
      }
      // The clip-archive: a system message, or the user turn first when the kept messages start with an assistant turn.
      const summarized = requests.filter(({ prompt }) => prompt.some((m) => m.role !== 'assistant' && text(m).startsWith('[Context Summary')));
      assert.ok(summarized.length >= TURNS, `${summarized.length} requests carried the clip-archive`);
      assert.ok(requests.some(({ prompt }) => /^\(conversation continues\)$|^\[Context Summary/.test(text(prompt.find((m) => m.role !== 'system')))),
        'a compaction that kept a tail starting with an assistant turn put a user turn in front');
      const longest = Math.max(...requests.map((r) => r.tokens));
      const whole = (await compactor.estimateTokens(fullPrompt, CONFIG)).tokens;
      assert.ok(whole > (ahead ? 2 : 4) * limit, `the thread (${whole} tokens) is far over the window (${limit}); the longest request ${longest}`);

      // The first turn's fact: out of the model's view at the end, found by memory_read.
      const asked = requests.at(-2)?.prompt ?? [];
      assert.ok(!asked.filter((m) => m.role !== 'system' && !text(m).startsWith('[Context Summary')).some((m) => text(m).includes('BLUE-OTTER-7')),
        'the fact is no longer in the messages');
      assert.match(last, /^From memory: .*BLUE-OTTER-7/s, last);

      // Nothing lost: every message of the thread's last prompt is in the
      // last request or in recall storage, once.
      const conv = 'thread-1';
      const { messages: decoded } = await compactor.decodeHistory(conv, fullPrompt, { shape: 'ai_sdk' });
      const seen = new Set(requests.at(-1)?.prompt.map((m) => JSON.stringify(m)));
      let recalled = 0;
      decoded.forEach((d, i) => {
        if (seen.has(JSON.stringify(fullPrompt[i]))) return;
        recalled++;
        assert.equal(store.recall(d.id, conv)?.raw, JSON.stringify(fullPrompt[i]), `lost: ${JSON.stringify(fullPrompt[i]).slice(0, 200)}`);
      });
      assert.ok(recalled > TURNS, `${recalled} messages recalled`);
      assert.deepEqual(store.activeMessages(conv), [], 'Memory owns the thread: nothing of it is stored twice');
      console.log(`${requests.length} model calls, the longest ${longest} tokens (limit ${limit}, the thread ${whole}); `
        + `${done.length} compactions; ${recalled} messages in recall${aheadStats ? `; ahead: ${JSON.stringify(aheadStats)}` : ''}`);
    } finally {
      await (watch ?? compactor).close();
      store.close();
    }
  });

  test('not due: the prompt is left as it is; the tool schemas count as overhead; bad options are TypeErrors', async () => {
    const compactor = await createCompactor({ wasmPath: wasmPath(), config: CONFIG });
    try {
      const p = clipfoldProcessor({ compactor, conversationId: 'quiet' });
      /** @type {Record<string, any>} */
      const state = {};
      const tools = { lookup_service: { description: 'Facts about a service', parameters: { jsonSchema: { type: 'object', properties: { name: { type: 'string' } } } } } };
      assert.equal(await p.processInputStep({ tools, state }), undefined);
      assert.equal(state.clipfold.overhead, await compactor.overheadTokens({ tools: toolSchemas(tools) }));
      assert.ok(state.clipfold.overhead > 10);
      const prompt = [{ role: 'system', content: INSTRUCTIONS }, { role: 'user', content: [{ type: 'text', text: 'hi' }] }];
      assert.equal(await p.processLLMRequest({ prompt, steps: [], state }), undefined);
      assert.throws(() => clipfoldProcessor(/** @type {any} */ ({})), /compactor/);
      assert.throws(() => clipfoldProcessor(/** @type {any} */ ({ compactor, conversationId: '' })), /conversationId/);
      assert.throws(() => clipfoldProcessor({ compactor, ahead: /** @type {any} */ ('yes') }), /^ClipfoldError: invalid_input: ahead: must be true or false, got "yes"$/);
      assert.throws(() => memoryReadTool(/** @type {any} */ ({})), /compactor/);
      const t = memoryReadTool({ compactor, conversationId: 'quiet' });
      assert.match(String(await t.execute?.({ query: 'anything at all' }, /** @type {any} */ ({}))), /^Nothing matches "anything at all"\.$/);
    } finally {
      await compactor.close();
    }
  });
});
