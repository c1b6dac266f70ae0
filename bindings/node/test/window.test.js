// The window is a promise: the Node host counts what the model will count.
// The provider's usage ({input_tokens: N, messages: K}) wins over the
// estimate of the messages it counted, the system prompt and tool schemas
// count as overhead_tokens, and the LangChain middleware and the AI SDK's
// prepareStep check before every model call, tool loops included — through
// the real plug-in, real agents driven by their frameworks' own fake models
// (LangChain's fakeModel, the AI SDK's own mock model) and a real
// node:http server for the LLM client.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, createAgent, fakeModel, tool as lcTool } from 'langchain';
import { MemorySaver } from '@langchain/langgraph';
import { generateText, stepCountIs, tool } from 'ai';
import { z } from 'zod';
import { ClipfoldError, createCompactor, MemoryStore, openaiCompatible, usageOf } from '../src/index.js';
import { clipfoldMiddleware, messageDict, toolSchemas as lcToolSchemas, usageFromMessages } from '../src/langchain.js';
import { prepareStep, toolSchemas } from '../src/ai-sdk.js';
import { MockLanguageModel } from './helpers/aisdk.js';
import { wasmPath } from './helpers/common.js';

const SYSTEM = 'You are the on-call assistant of the data platform team. Read logs with read_logs; answer briefly.';
const CALLS = 40;
const WINDOW = 3000;

const chat = () => [
  { id: 'm0', role: 'user', content: 'Which regions does the checkout service run in?' },
  { id: 'm1', role: 'assistant', content: 'eu-west-1 and us-east-2; Priya is on call until Friday.' },
  { id: 'm2', role: 'user', content: 'Then ask Priya about the failed deploy of build 4471.' },
];

/** A shard's ingest log, about 300 tokens. @param {number} shard */
function shardLog(shard) {
  return Array.from({ length: 8 }, (_, k) => `2026-03-0${1 + (k % 3)} 02:${String((7 * k) % 60).padStart(2, '0')} shard-${String(shard).padStart(2, '0')} `
    + `ingest: upstream timeout after ${30 + k}s (attempt ${(k % 3) + 1}/3), request ${(0x5eed0000 + shard * 97 + k).toString(16)}`).join('\n');
}

describe('the provider\'s usage and the overhead, through the compactor', () => {
  test('shouldCompact: usage wins for the messages it counted; bad usage is named', async () => {
    const c = await createCompactor({ wasmPath: wasmPath() });
    try {
      const cfg = { model_max_tokens: 1000, overhead_tokens: 300 };
      const est = (await c.estimateTokens(chat())).tokens;
      const plain = await c.shouldCompact(chat(), cfg);
      assert.equal(plain.tokens, est + 300);
      assert.equal(plain.due, false);
      const counted = await c.shouldCompact(chat(), cfg, { input_tokens: 790, messages: 2 });
      assert.equal(counted.tokens, 790 + (await c.estimateTokens(chat().slice(2))).tokens);
      assert.equal(counted.due, true);
      for (const [usage, field] of /** @type {[any, string][]} */ ([
        [[790, 2], 'usage'], ['790', 'usage'], [{ messages: 2 }, 'usage.input_tokens'], [{ input_tokens: 790 }, 'usage.messages'],
        [{ input_tokens: -1, messages: 2 }, 'usage.input_tokens'], [{ input_tokens: 1.5, messages: 2 }, 'usage.input_tokens'],
        [{ input_tokens: 10, messages: 'all' }, 'usage.messages'], [{ input_tokens: 10, messages: 4 }, 'usage.messages'],
      ])) {
        for (const call of [() => c.shouldCompact(chat(), undefined, usage),
          () => c.compress('bad-usage', chat(), { callerOwned: true, usage }),
          () => c.compactIfDue('bad-usage', chat(), { callerOwned: true, usage })]) {
          await assert.rejects(call, (/** @type {any} */ e) => e instanceof ClipfoldError && e.code === 'invalid_input' && e.field === field,
            `${JSON.stringify(usage)} names ${field}`);
        }
      }
      assert.deepEqual(c.store.activeMessages('bad-usage'), [], 'refused before anything was stored');
    } finally {
      await c.close();
    }
  });

  test('overheadTokens is the estimate of the system prompt and the tool schemas, added to every count without usage', async () => {
    const c = await createCompactor({ wasmPath: wasmPath() });
    try {
      const tools = [{ type: 'function', function: { name: 'read_logs', description: 'Reads a shard\'s ingest logs.', parameters: { type: 'object', properties: { shard: { type: 'integer' } } } } }];
      const n = await c.overheadTokens({ system: SYSTEM, tools });
      const want = (await c.estimateTokens([{ role: 'system', content: SYSTEM }, { role: 'system', content: JSON.stringify(tools) }])).tokens;
      assert.equal(n, want);
      assert.ok(await c.overheadTokens({ system: SYSTEM }) < n);
      assert.equal(await c.overheadTokens({}), 0);
      assert.equal(await c.overheadTokens({ system: SYSTEM, config: { token_estimator: 'chars4' } }), Math.ceil(SYSTEM.length / 4));
      await assert.rejects(() => c.overheadTokens({ system: /** @type {any} */ (42) }), (/** @type {any} */ e) => e.field === 'system');
      await assert.rejects(() => c.overheadTokens({ tools: [Number.NaN] }), (/** @type {any} */ e) => e.field === 'tools[0]');
      const base = (await c.shouldCompact(chat())).tokens;
      assert.equal((await c.shouldCompact(chat(), { overhead_tokens: n })).tokens, base + n);
    } finally {
      await c.close();
    }
  });

  for (const callerOwned of [true, false]) {
    test(`compress and compactIfDue honour usage (${callerOwned ? 'caller' : 'store'}-owned)`, async () => {
      const c = await createCompactor({ wasmPath: wasmPath(), config: { model_max_tokens: 1000, keep_recent: 4 } });
      try {
        const msgs = Array.from({ length: 16 }, (_, i) => [
          { id: `q${i}`, role: 'user', content: `Question ${i}: what did we decide about module ${i}?` },
          { id: `a${i}`, role: 'assistant', content: `Module ${i} keeps a retry budget of ${10 + i} attempts; the owner is team ${'abc'[i % 3]}.` },
        ]).flat();
        assert.ok((await c.estimateTokens(msgs)).tokens < 800);
        let r = await c.compress('plain', msgs, { callerOwned, onlyIfDue: true });
        assert.equal(r.messages_compressed, 0);
        assert.equal(await c.compactIfDue('plain', msgs, { callerOwned }), null);
        // The provider counted 300 tokens more than the estimate of what it
        // saw (a system prompt, say): over the 800-token budget.
        const n = (await c.estimateTokens(msgs.slice(0, -2))).tokens + 300;
        const rest = (await c.estimateTokens(msgs.slice(-2))).tokens;
        assert.ok(n + rest > 800);
        const usage = { input_tokens: n, messages: msgs.length - 2 };
        r = await c.compress('counted', msgs, { callerOwned, onlyIfDue: true, usage });
        assert.equal(r.failed, false, r.failure_message ?? '');
        assert.ok(r.messages_compressed > 0);
        assert.equal(r.tokens_estimate_before, n + rest);
        assert.ok(r.tokens_estimate_after <= 800);
        const r2 = await c.compactIfDue('counted-2', msgs, { callerOwned, usage });
        assert.ok(r2 && !r2.failed && r2.messages_compressed > 0, r2?.failure_message ?? 'not compacted');
      } finally {
        await c.close();
      }
    });
  }

  test('usageOf: a host running its own loop with openaiCompatible passes each answer\'s usage', async () => {
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', model: 'm', usage: { prompt_tokens: 900, completion_tokens: 5, total_tokens: 905 },
          choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'Priya is on call.' } }] }));
      });
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
    const c = await createCompactor({ wasmPath: wasmPath() });
    try {
      const port = /** @type {import('node:net').AddressInfo} */ (server.address()).port;
      const llm = openaiCompatible({ baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: 'k', model: 'm' });
      /** @type {any} */ (llm).bindPlugin?.({ has: () => true, callJSON: c.call });
      /** @type {any[]} */
      const history = [{ role: 'user', content: 'Who is on call?' }];
      const resp = await llm.complete({ system: '', messages: history, max_tokens: 20 });
      const usage = usageOf({ messages: history }, resp);
      assert.deepEqual(usage, { input_tokens: 900, messages: 1 });
      history.push({ role: 'assistant', content: /** @type {any} */ (resp).content[0].text });
      const d = await c.shouldCompact(history, { model_max_tokens: 1000 }, usage);
      assert.equal(d.due, true);
      assert.equal(d.tokens, 900 + (await c.estimateTokens(history.slice(1))).tokens);
      assert.equal(usageOf({ messages: history }, { error: { code: 'unavailable', message: 'x', retryable: true } }), null);
    } finally {
      await c.close();
      server.close();
    }
  });
});

// ------------------------------------------------------------------ LangChain

const readLogs = lcTool(async ({ shard }) => shardLog(shard), {
  name: 'read_logs', description: 'Reads the ingest logs of one shard over the last day.', schema: z.object({ shard: z.number().int() }),
});

/**
 * LangChain's fakeModel scripted for a tool loop: `calls` tool calls, then
 * the answer; every request recorded; usage_metadata.input_tokens
 * reported when `inputTokens` is given.
 * @param {number} calls @param {any[][]} requests @param {number} [inputTokens]
 */
function loopModel(calls, requests, inputTokens) {
  const model = fakeModel();
  const usage = inputTokens === undefined ? {} : { usage_metadata: { input_tokens: inputTokens, output_tokens: 8, total_tokens: inputTokens + 8 } };
  for (let i = 0; i <= calls; i++) {
    model.respond((/** @type {any[]} */ msgs) => {
      requests.push(msgs);
      return i < calls
        ? new AIMessage({ content: '', tool_calls: [{ id: `call_${i}`, name: 'read_logs', args: { shard: i }, type: 'tool_call' }], ...usage })
        : new AIMessage({ content: 'Every shard times out against the upstream since March 1st.', ...usage });
    });
  }
  return model;
}

/**
 * What a request the model received counts, by the plug-in's estimate:
 * its messages, the system prompt (with the clip-archive appended to it)
 * and the tool schemas.
 * @param {any} c @param {any[]} request
 */
async function requestTokens(c, request) {
  const system = request.filter((m) => SystemMessage.isInstance(m)).map((m) => m.text).join('\n\n');
  const rest = request.filter((m) => !SystemMessage.isInstance(m));
  return (await c.estimateTokens(rest.map(messageDict))).tokens + await c.overheadTokens({ system, tools: lcToolSchemas([readLogs]) });
}

/** @param {any[][]} requests */
const firstCompacted = (requests) => requests.findIndex((r) => r.some(lcArchive));
/**
 * The clip-archive in a LangChain request: in the system message, or the
 * user turn first when the kept messages start with a tool call.
 * @param {any} m
 */
const lcArchive = (m) => (SystemMessage.isInstance(m) || HumanMessage.isInstance(m)) && m.text.includes('[Context Summary');

/**
 * createAgent with clipfoldMiddleware (no trigger: clipfold's budget) and
 * one user message.
 * @param {any} model @param {number} keep
 */
async function runLangChainLoop(model, keep) {
  const store = new MemoryStore();
  const compactor = await createCompactor({ wasmPath: wasmPath(), store });
  const agent = createAgent({
    model, systemPrompt: SYSTEM, tools: [readLogs], checkpointer: new MemorySaver(),
    middleware: [clipfoldMiddleware({ compactor, keep: { messages: keep }, config: { model_max_tokens: WINDOW, max_summary_tokens: 80 } })],
  });
  const cfg = { configurable: { thread_id: 'loop' }, recursionLimit: 200 };
  const out = await agent.invoke({ messages: [new HumanMessage(`The nightly export failed. Read the logs of all ${CALLS} shards; which time out?`)] }, cfg);
  return { store, compactor, agent, cfg, out };
}

describe('clipfoldMiddleware checks before every model call', () => {
  test('one user message and 40 tool calls: compacted inside the loop, no request over the budget, tool pairs intact, nothing lost', async () => {
    /** @type {any[][]} */
    const requests = [];
    const { store, compactor, agent, cfg, out } = await runLangChainLoop(loopModel(CALLS, requests), 6);
    try {
      assert.equal(requests.length, CALLS + 1);
      assert.match(out.messages.at(-1).text, /March 1st/);
      const counts = await Promise.all(requests.map((r) => requestTokens(compactor, r)));
      assert.ok(Math.max(...counts) <= 0.8 * WINDOW, `every request fits the budget: ${counts}`);
      const compacted = requests.filter((r) => r.some(lcArchive));
      assert.ok(compacted.length > 0 && firstCompacted(requests) < CALLS, 'compacted inside the tool loop');
      assert.ok(requests.some((r) => r.some((m) => HumanMessage.isInstance(m) && lcArchive(m))), 'a clip-archive written as the user turn');
      for (const r of requests) {
        const first = r.find((m) => !SystemMessage.isInstance(m));
        assert.ok(HumanMessage.isInstance(first), `a request starts with ${first?.type} after the system message`);
        const calls = new Set();
        for (const m of r) {
          if (AIMessage.isInstance(m)) for (const tc of m.tool_calls ?? []) calls.add(tc.id);
          if (ToolMessage.isInstance(m)) assert.ok(calls.has(m.tool_call_id), `a tool result without its call: ${m.tool_call_id}`);
        }
      }
      // Each message the state ever held and no longer holds is in recall.
      const ever = new Map();
      for await (const snap of agent.getStateHistory(cfg)) for (const m of snap.values.messages ?? []) if (m.id) ever.set(m.id, m);
      const final = new Set((await agent.getState(cfg)).values.messages.map((/** @type {any} */ m) => m.id));
      let recalled = 0;
      for (const [id, m] of ever) {
        if (final.has(id) || String(m.text).startsWith('[Context Summary')) continue;
        recalled++;
        assert.deepEqual(store.recall(id)?.message, JSON.parse(JSON.stringify(messageDict(m))), `message ${id} was lost`);
      }
      assert.ok(recalled > CALLS, `${recalled} recalled`);
    } finally {
      await compactor.close();
      store.close();
    }
  });

  test('a model reporting more input tokens than the estimate makes compaction due earlier', async () => {
    /** @type {any[][]} */
    const plain = [];
    /** @type {any[][]} */
    const counted = [];
    for (const [requests, tokens] of /** @type {[any[][], number | undefined][]} */ ([[plain, undefined], [counted, 2300]])) {
      const { store, compactor } = await runLangChainLoop(loopModel(5, requests, tokens), 2);
      await compactor.close();
      store.close();
    }
    assert.equal(firstCompacted(plain), -1, 'five calls fit the window by the estimate');
    const at = firstCompacted(counted);
    assert.ok(at >= 1 && at <= 2, `due at the call after the first 2,300-token answer (${at})`);
    const msgs = [new HumanMessage('hi'), new AIMessage({ content: 'a', usage_metadata: { input_tokens: 50, output_tokens: 1, total_tokens: 51 } }), new HumanMessage('more')];
    assert.deepEqual(usageFromMessages(msgs), { input_tokens: 50, messages: 1 });
    assert.equal(usageFromMessages([...msgs, new AIMessage('b')]), null, 'only the last answer\'s usage counts');
  });
});

// ------------------------------------------------------------------ AI SDK

const sdkTools = {
  read_logs: tool({ description: 'Reads the ingest logs of one shard over the last day.', inputSchema: z.object({ shard: z.number().int() }),
    execute: async ({ shard }) => shardLog(shard) }),
};

/**
 * The AI SDK's mock model in a tool loop: `calls` tool calls, then the
 * answer; every prompt recorded; each step reports `inputTokens` when
 * given (a provider's count wins over the estimate, so a mock reports
 * none rather than a made-up one).
 * @param {number} calls @param {any[][]} prompts @param {number} [inputTokens]
 */
function sdkLoopModel(calls, prompts, inputTokens) {
  let n = 0;
  const usage = { inputTokens: { total: inputTokens, noCache: inputTokens, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 5, text: 5, reasoning: undefined } };
  return new MockLanguageModel({
    doGenerate: async (options) => {
      prompts.push(structuredClone(options.prompt));
      const i = n++;
      if (i < calls) {
        return { content: [{ type: 'tool-call', toolCallId: `call_${i}`, toolName: 'read_logs', input: JSON.stringify({ shard: i }) }],
          finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage, warnings: [] };
      }
      return { content: [{ type: 'text', text: 'Every shard times out since March 1st.' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
    },
  });
}

/**
 * generateText with prepareStep and one user message.
 * @param {any} model @param {number} calls @param {any[]} sent what each step was sent (messages and system)
 */
async function runSdkLoop(model, calls, sent, keepRecent = 6) {
  const compactor = await createCompactor({ wasmPath: wasmPath(), store: new MemoryStore(),
    config: { model_max_tokens: WINDOW, keep_recent: keepRecent, max_summary_tokens: 80 } });
  const step = prepareStep({ compactor, conversationId: 'loop', system: SYSTEM, tools: sdkTools, targetShare: 0 });
  const r = await generateText({
    model, system: SYSTEM, tools: sdkTools, stopWhen: stepCountIs(calls + 2),
    messages: [{ role: 'user', content: `The nightly export failed. Read the logs of all ${calls} shards; which time out?` }],
    prepareStep: async (args) => {
      const out = await step(args);
      sent.push({ messages: out?.messages ?? args.messages, system: out?.system ?? SYSTEM });
      return out;
    },
  });
  return { compactor, r };
}

/**
 * Whether an AI SDK prompt carries the clip-archive: in the system
 * message, or as the user turn first when the kept messages start with a
 * tool call.
 * @param {any[]} p
 */
const sdkArchived = (p) => p.some((m) => (m.role === 'system' && m.content.includes('[Context Summary'))
  || (m.role === 'user' && m.content.some((/** @type {any} */ c) => c.type === 'text' && c.text.startsWith('[Context Summary'))));

describe('prepareStep checks before every step', () => {
  test('one user message and 40 tool calls: compacted inside the loop, no step over the budget, tool pairs intact', async () => {
    /** @type {any[][]} */
    const prompts = [];
    /** @type {any[]} */
    const sent = [];
    const { compactor, r } = await runSdkLoop(sdkLoopModel(CALLS, prompts), CALLS, sent);
    try {
      assert.equal(prompts.length, CALLS + 1);
      assert.match(r.text, /March 1st/);
      const schemas = await toolSchemas(sdkTools);
      const counts = await Promise.all(sent.map(async (s) => (await compactor.estimateTokens(s.messages)).tokens
        + await compactor.overheadTokens({ system: s.system, tools: schemas })));
      assert.ok(Math.max(...counts) <= 0.8 * WINDOW, `every step fits the budget: ${counts}`);
      const first = prompts.findIndex(sdkArchived);
      assert.ok(first > 0 && first < CALLS, `compacted inside the tool loop (${first})`);
      assert.ok(prompts.some((p) => p.some((m) => m.role === 'user' && sdkArchived([m]))), 'a clip-archive written as the user turn');
      for (const p of prompts) {
        assert.equal(p.find((m) => m.role !== 'system')?.role, 'user', 'the first turn after the system message');
        assert.ok(p.filter((m) => sdkArchived([m])).length <= 1, 'one clip-archive at most (a newer one replaces it)');
        const calls = new Set();
        for (const m of p) {
          if (m.role === 'assistant') for (const c of m.content) if (c.type === 'tool-call') calls.add(c.toolCallId);
          if (m.role === 'tool') for (const c of m.content) assert.ok(calls.has(c.toolCallId), `tool result ${c.toolCallId} without its call`);
        }
      }
    } finally {
      await compactor.close();
    }
  });

  test('a step reporting more input tokens than the estimate makes compaction due earlier', async () => {
    /** @type {any[][]} */
    const plain = [];
    /** @type {any[][]} */
    const counted = [];
    for (const [prompts, tokens] of /** @type {[any[][], number | undefined][]} */ ([[plain, undefined], [counted, 2300]])) {
      const { compactor } = await runSdkLoop(sdkLoopModel(5, prompts, tokens), 5, [], 2);
      await compactor.close();
    }
    const first = (/** @type {any[][]} */ ps) => ps.findIndex(sdkArchived);
    assert.equal(first(plain), -1, 'five steps fit the window by the estimate');
    const at = first(counted);
    assert.ok(at >= 1 && at <= 2, `due at the step after the first 2,300-token answer (${at})`);
  });
});
