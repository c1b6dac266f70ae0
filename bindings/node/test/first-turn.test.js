// After compaction the model's request starts with a user turn. An agent
// compacted in the middle of a tool loop keeps messages that start with an
// assistant turn making tool calls; the plug-in then writes the
// clip-archive as a user turn (docs/spec.md#message-shapes), so the request
// every adapter sends starts with one, as Gemini and other providers and
// gateways require. Checked on the wire: each adapter drives a real agent
// whose model is the framework's own provider — LangChain's ChatOpenAI and
// ChatAnthropic, the AI SDK's @ai-sdk/openai and @ai-sdk/anthropic (also
// Mastra's models), the Agents SDK's Chat Completions and Responses models —
// talking to a local HTTP server that plays the provider (scripted tool
// calls, then an answer) and keeps every request body, checked against the
// providers' documented rules.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { createAgent, tool as lcTool } from 'langchain';
import { ChatOpenAI } from '@langchain/openai';
import { ChatAnthropic } from '@langchain/anthropic';
import { generateText, stepCountIs, tool } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { Agent as MastraAgent } from '@mastra/core/agent';
import { InMemoryStore } from '@mastra/core/storage';
import { createTool } from '@mastra/core/tools';
import { Memory } from '@mastra/memory';
import { Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel, run, setTracingDisabled, tool as agentsTool } from '@openai/agents';
import OpenAI from 'openai';
import { z } from 'zod';
import { createCompactor } from '../src/index.js';
import { clipfoldMiddleware } from '../src/langchain.js';
import { prepareStep } from '../src/ai-sdk.js';
import { clipfoldProcessor } from '../src/mastra.js';
import { ClipfoldSession } from '../src/openai-agents.js';
import { CONTINUATION } from '../src/stepview.js';
import { responseMessages } from './helpers/aisdk.js';
import { wasmPath } from './helpers/common.js';

const STEPS = 10; // tool calls per question, one after the other
const SYSTEM = "You are the team's assistant.";
const QUESTIONS = ['Read the ten modules and tell me their retry budgets.', 'Now read them again: did anything change?'];

/** A file's long content. @param {string} path */
function readFile(path) {
  const body = Array.from({ length: 8 }, (_, k) => `line ${k} of ${path}: retry budget ${10 + k}, owner team-${path.at(-4)}, timeout ${100 * k} ms.`).join(' ');
  return `${path} (${40 * body.length} bytes): ${body}`;
}

/**
 * A local server playing OpenAI Chat Completions (/chat/completions), the
 * OpenAI Responses API (/responses) and the Anthropic Messages API
 * (/messages): for each question, STEPS tool calls one after the other,
 * then an answer; every request body is kept.
 */
class Provider {
  /** @type {{kind: string, body: any}[]} */
  bodies = [];
  calls = 0;
  server = createServer((req, res) => {
    let data = '';
    req.on('data', (c) => { data += c; });
    req.on('end', () => {
      const kind = req.url?.endsWith('/messages') ? 'anthropic' : req.url?.endsWith('/responses') ? 'responses' : 'openai';
      const out = JSON.stringify(this.answer(kind, JSON.parse(data)));
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
      res.end(out);
    });
  });

  async start() {
    await new Promise((ok) => this.server.listen(0, '127.0.0.1', () => ok(undefined)));
    const a = /** @type {import('node:net').AddressInfo} */ (this.server.address());
    this.url = `http://127.0.0.1:${a.port}/v1`;
  }

  /** @param {string} kind @param {any} body */
  answer(kind, body) {
    this.bodies.push({ kind, body });
    const last = (kind === 'responses' ? body.input : body.messages).at(-1);
    const results = last.role === 'tool' || last.type === 'function_call_output'
      || (Array.isArray(last.content) && last.content.some((/** @type {any} */ b) => b.type === 'tool_result'));
    this.calls = results ? this.calls + 1 : 0;
    const tokens = Math.floor(JSON.stringify(body).length / 4); // the provider's count, about right
    const n = this.bodies.length;
    const text = `All ${STEPS} files read: every module keeps a retry budget.`;
    const path = `src/module_${n}.py`;
    if (kind === 'openai') {
      const message = this.calls < STEPS
        ? { role: 'assistant', content: null, tool_calls: [{ id: `call_${n}`, type: 'function', function: { name: 'read_file', arguments: JSON.stringify({ path }) } }] }
        : { role: 'assistant', content: text };
      return {
        id: `chatcmpl-${n}`, object: 'chat.completion', created: 0, model: 'gpt-4o',
        choices: [{ index: 0, message, finish_reason: this.calls < STEPS ? 'tool_calls' : 'stop' }],
        usage: { prompt_tokens: tokens, completion_tokens: 20, total_tokens: tokens + 20 },
      };
    }
    if (kind === 'responses') {
      return {
        id: `resp_${n}`, object: 'response', created_at: 0, status: 'completed', model: 'gpt-4o',
        output: this.calls < STEPS
          ? [{ type: 'function_call', id: `fc_${n}`, call_id: `call_${n}`, name: 'read_file', arguments: JSON.stringify({ path }), status: 'completed' }]
          : [{ type: 'message', id: `msg_${n}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] }],
        usage: { input_tokens: tokens, output_tokens: 20, total_tokens: tokens + 20,
          input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } },
      };
    }
    return {
      id: `msg_${n}`, type: 'message', role: 'assistant', model: 'claude-sonnet-5-5',
      content: this.calls < STEPS ? [{ type: 'tool_use', id: `toolu_${n}`, name: 'read_file', input: { path } }] : [{ type: 'text', text }],
      stop_reason: this.calls < STEPS ? 'tool_use' : 'end_turn', stop_sequence: null,
      usage: { input_tokens: tokens, output_tokens: 20 },
    };
  }

  /**
   * The requests compacted in the middle of the tool loop: a tool call
   * right after the first turn, which is the clip-archive — or the user turn
   * an adapter put in front when the clip-archive went to the system
   * prompt (the Agents SDK's instructions).
   */
  archivedFirst() {
    return this.bodies.filter(({ kind, body }) => {
      const all = kind === 'responses' ? body.input : body.messages;
      const msgs = all.filter((/** @type {any} */ m) => m.role !== 'system' && m.role !== 'developer');
      const c = msgs[0].content;
      const text = typeof c === 'string' ? c : c.map((/** @type {any} */ b) => b.text ?? '').join(' ');
      const system = JSON.stringify(kind === 'anthropic' ? body.system : kind === 'responses' ? body.instructions : all.filter((/** @type {any} */ m) => m.role === 'system'));
      const archived = text.startsWith('[Context Summary') || (text === CONTINUATION && system.includes('[Context Summary'));
      return archived && (msgs[1]?.role === 'assistant' || msgs[1]?.type === 'function_call');
    }).length;
  }
}

/**
 * OpenAI Chat Completions: the first message that is not a system (or
 * developer) message is the user's; an assistant message with tool_calls
 * is followed at once by one tool message for each call, and a tool
 * message answers a call of the assistant message before its run.
 * @param {any} body
 */
function checkOpenAI(body) {
  const msgs = body.messages;
  const first = msgs.find((/** @type {any} */ m) => m.role !== 'system' && m.role !== 'developer');
  assert.equal(first.role, 'user', `the first turn is ${first.role}: ${JSON.stringify(msgs).slice(0, 600)}`);
  for (let i = 0; i < msgs.length;) {
    const m = msgs[i];
    assert.notEqual(m.role, 'tool', `a tool message not right after its call: ${JSON.stringify(m).slice(0, 200)}`);
    i++;
    if (m.role !== 'assistant' || !m.tool_calls?.length) continue;
    const want = new Set(m.tool_calls.map((/** @type {any} */ c) => c.id));
    const got = new Set();
    for (; i < msgs.length && msgs[i].role === 'tool'; i++) {
      assert.ok(want.has(msgs[i].tool_call_id), msgs[i].tool_call_id);
      got.add(msgs[i].tool_call_id);
    }
    assert.deepEqual([...got].sort(), [...want].sort(), 'calls without their results');
  }
}

/**
 * The Messages API: no system role in messages; the first message is a user
 * turn that is not made of tool results; user and assistant turns
 * alternate; an assistant turn with tool_use blocks is followed by a user
 * turn that starts with a tool_result for each, and a tool_result answers a
 * tool_use of the assistant turn just before.
 * @param {any} body
 */
function checkAnthropic(body) {
  const msgs = body.messages;
  const blocks = (/** @type {any} */ m) => (typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content);
  assert.ok(msgs.every((/** @type {any} */ m) => m.role === 'user' || m.role === 'assistant'), JSON.stringify(msgs.map((/** @type {any} */ m) => m.role)));
  assert.equal(msgs[0].role, 'user', `the first turn is ${msgs[0].role}: ${JSON.stringify(msgs).slice(0, 600)}`);
  assert.ok(blocks(msgs[0]).some((/** @type {any} */ b) => b.type !== 'tool_result'), 'the first turn is tool results alone');
  for (let i = 1; i < msgs.length; i++) assert.notEqual(msgs[i].role, msgs[i - 1].role, `two ${msgs[i].role} turns in a row`);
  msgs.forEach((/** @type {any} */ m, /** @type {number} */ i) => {
    const uses = new Set(i > 0 ? blocks(msgs[i - 1]).filter((/** @type {any} */ b) => b.type === 'tool_use').map((/** @type {any} */ b) => b.id) : []);
    for (const b of blocks(m)) if (b.type === 'tool_result') assert.ok(uses.has(b.tool_use_id), `a tool_result not right after its tool_use: ${b.tool_use_id}`);
    const mine = blocks(m).filter((/** @type {any} */ b) => b.type === 'tool_use').map((/** @type {any} */ b) => b.id);
    if (m.role === 'assistant' && mine.length > 0) {
      assert.ok(i + 1 < msgs.length, 'a tool_use without its result');
      const lead = blocks(msgs[i + 1]).slice(0, mine.length).filter((/** @type {any} */ b) => b.type === 'tool_result').map((/** @type {any} */ b) => b.tool_use_id);
      assert.deepEqual(lead.sort(), [...mine].sort(), 'the next turn does not start with the results');
    }
  });
}

/**
 * The Responses API: the first input item that is not a system (or
 * developer) message is a user message; a function_call_output answers a
 * function_call before it, and every function_call has its output.
 * @param {any} body
 */
function checkResponses(body) {
  const items = body.input;
  const first = items.find((/** @type {any} */ i) => !((i.type ?? 'message') === 'message' && (i.role === 'system' || i.role === 'developer')));
  assert.ok((first.type ?? 'message') === 'message' && first.role === 'user', `the first item is ${first.type} ${first.role}: ${JSON.stringify(items).slice(0, 600)}`);
  const calls = new Set();
  const answered = new Set();
  for (const i of items) {
    if (i.type === 'function_call') calls.add(i.call_id);
    if (i.type === 'function_call_output') {
      assert.ok(calls.has(i.call_id), `an output before its call: ${i.call_id}`);
      answered.add(i.call_id);
    }
  }
  assert.deepEqual([...answered].sort(), [...calls].sort(), 'calls without their outputs');
}

const checks = { openai: checkOpenAI, anthropic: checkAnthropic, responses: checkResponses };

/** @param {Provider} p */
function checkAll(p) {
  assert.equal(p.bodies.length, QUESTIONS.length * (STEPS + 1));
  for (const { kind, body } of p.bodies) checks[/** @type {keyof typeof checks} */ (kind)](body);
  assert.ok(p.archivedFirst() >= 2, 'compactions in the middle of the tool loop');
}

const CONFIG = { model_max_tokens: 1600, context_budget: 0.5, keep_recent: 3, max_summary_tokens: 80 };

describe('after compaction every request starts with a user turn', () => {
  /** @type {Provider} */
  let p;
  before(async () => { p = new Provider(); await p.start(); });
  after(() => p.server.close());

  /**
   * Runs an agent with a fresh compactor, then checks every request the
   * provider received.
   * @param {(compactor: Awaited<ReturnType<typeof createCompactor>>) => Promise<void>} agent
   */
  async function drive(agent) {
    p.bodies = [];
    const compactor = await createCompactor({ wasmPath: wasmPath() });
    try {
      await agent(compactor);
      checkAll(p);
    } finally {
      await compactor.close();
    }
  }

  /** The AI SDK's own provider (also Mastra's model) talking to the local server. @param {string} kind */
  const aiSdkModel = (kind) => (kind === 'openai'
    ? createOpenAI({ baseURL: p.url, apiKey: 'sk-test' }).chat('gpt-4o')
    : createAnthropic({ baseURL: p.url, apiKey: 'sk-ant-test' })('claude-sonnet-5-5'));

  for (const kind of ['openai', 'anthropic']) {
    test(`LangChain clipfoldMiddleware, ${kind === 'openai' ? 'ChatOpenAI' : 'ChatAnthropic'}`, () => drive(async (compactor) => {
      const model = kind === 'openai'
        ? new ChatOpenAI({ model: 'gpt-4o', apiKey: 'sk-test', configuration: { baseURL: p.url }, maxRetries: 0 })
        : new ChatAnthropic({ model: 'claude-sonnet-5-5', apiKey: 'sk-ant-test', anthropicApiUrl: p.url?.replace(/\/v1$/, ''), maxRetries: 0 });
      const readTool = lcTool(async ({ path }) => readFile(path), {
        name: 'read_file', description: 'Reads a file of the repository.', schema: z.object({ path: z.string() }),
      });
      const agent = createAgent({
        model, tools: [readTool], systemPrompt: SYSTEM,
        middleware: [clipfoldMiddleware({ compactor, trigger: { messages: 8 }, keep: { messages: 3 }, config: { max_summary_tokens: 80 } })],
      });
      /** @type {any[]} */
      let messages = [];
      for (const q of QUESTIONS) {
        const out = await agent.invoke({ messages: [...messages, { role: 'user', content: q }] });
        messages = out.messages;
      }
      // The state: one clip-archive, first.
      const archives = messages.filter((m) => String(m.content).startsWith('[Context Summary'));
      assert.equal(archives.length, 1);
      assert.equal(messages[0], archives[0]);
    }));

    test(`AI SDK prepareStep, @ai-sdk/${kind}`, () => drive(async (compactor) => {
      const model = aiSdkModel(kind);
      const tools = { read_file: tool({ description: 'Reads a file of the repository.', inputSchema: z.object({ path: z.string() }), execute: async ({ path }) => readFile(path) }) };
      /** @type {any[]} */
      let messages = [];
      for (const q of QUESTIONS) {
        messages.push({ role: 'user', content: q });
        const r = await generateText({
          model, system: SYSTEM, tools, messages, stopWhen: stepCountIs(STEPS + 2),
          prepareStep: prepareStep({ compactor, conversationId: `ai-sdk-${kind}`, system: SYSTEM, tools, config: CONFIG }),
        });
        messages = [...messages, ...await responseMessages(r)];
      }
    }));

    test(`Mastra clipfoldProcessor, @ai-sdk/${kind}`, () => drive(async (compactor) => {
      const readTool = createTool({
        id: 'read_file', description: 'Reads a file of the repository.', inputSchema: z.object({ path: z.string() }),
        execute: async ({ path }) => readFile(path),
      });
      const agent = new MastraAgent({
        id: 'team', name: 'team', instructions: SYSTEM, model: aiSdkModel(kind), tools: { read_file: readTool },
        memory: new Memory({ storage: new InMemoryStore(), options: { lastMessages: 1000 } }),
        inputProcessors: [clipfoldProcessor({ compactor, config: CONFIG })],
      });
      for (const q of QUESTIONS) await agent.generate(q, { memory: { thread: `mastra-${kind}`, resource: 'user-1' }, maxSteps: STEPS + 2 });
    }));
  }

  for (const api of ['chat', 'responses']) {
    test(`OpenAI Agents ClipfoldSession, ${api === 'chat' ? 'OpenAIChatCompletionsModel' : 'OpenAIResponsesModel'}`, () => drive(async (compactor) => {
      setTracingDisabled(true);
      const client = new OpenAI({ baseURL: p.url, apiKey: 'sk-test', maxRetries: 0 });
      const model = api === 'chat' ? new OpenAIChatCompletionsModel(client, 'gpt-4o') : new OpenAIResponsesModel(client, 'gpt-4o');
      const readTool = agentsTool({
        name: 'read_file', description: 'Reads a file of the repository.', parameters: z.object({ path: z.string() }),
        execute: async ({ path }) => readFile(path),
      });
      const agent = new Agent({ name: 'team', instructions: SYSTEM, model, tools: [readTool] });
      const session = new ClipfoldSession({ compactor, sessionId: `agents-${api}`, config: CONFIG });
      for (const q of QUESTIONS) await run(agent, q, { session, callModelInputFilter: session.callModelInputFilter, maxTurns: STEPS + 2 });
    }));
  }
});
