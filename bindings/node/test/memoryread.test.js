// memory_read within its token budget, and what is still in the context
// searched with the archive: through the real plug-in, the real SQLite
// store, LangChain.js's createAgent and the AI SDK's generateText with
// their own fake models.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateText, stepCountIs, tool as aiTool } from 'ai';
import { AIMessage, ToolMessage, createAgent, fakeModel, tool } from 'langchain';
import { MemorySaver } from '@langchain/langgraph';
import { z } from 'zod';
import { createCompactor, DEFAULT_MEMORY_READ_TOKENS, SQLiteStore } from '../src/index.js';
import { memoryReadTool as aiMemoryReadTool } from '../src/ai-sdk.js';
import { clipfoldMiddleware, memoryReadTool } from '../src/langchain.js';
import { memoryRead } from '../src/memory.js';
import { MockLanguageModel } from './helpers/aisdk.js';
import { wasmPath } from './helpers/common.js';

/** A long JSON tool output: 300 orders, one of them the fact asked for. */
const orders = `[${Array.from({ length: 300 }, (_, i) => (i === 150 ? '{"order":4471,"status":"lost in transit","carrier":"Pelican Post"}'
  : `{"order":${1000 + i},"status":"delivered","note":"nothing unusual"}`)).join(',')}]`;

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 5, text: 5, reasoning: undefined } };

describe('memory_read', () => {
  test('answers within its budget, counted by the plug-in: a search, and a record read by id', async () => {
    const compactor = await createCompactor({ wasmPath: wasmPath(), store: new SQLiteStore(), config: { keep_recent: 2, max_summary_tokens: 40 } });
    try {
      const history = [
        { id: 'u1', role: 'user', content: 'list my orders' },
        { id: 'a1', role: 'assistant', content: '', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'list_orders', arguments: '{"customer":77}' } }] },
        { id: 't1', role: 'tool', tool_call_id: 'c1', content: orders },
        ...Array.from({ length: 8 }, (_, i) => ({ id: `h${i}`, role: 'user', content: `filler question ${i} about something else entirely. `.repeat(5) })),
      ];
      assert.ok((await compactor.estimateTokens(orders)).tokens > 3000, 'the output alone is far over the budget');
      const r = await compactor.compress('conv', history, { callerOwned: true });
      assert.ok(!r.failed && r.messages_compressed > 0, r.failure_message);
      for (const maxTokens of [300, DEFAULT_MEMORY_READ_TOKENS]) {
        for (const input of [{ query: 'what happened to order 4471 with Pelican Post?' }, { id: 't1', query: 'Pelican Post' }]) {
          const out = await memoryRead(compactor, { ...input, conversationId: 'conv', maxTokens });
          assert.ok((await compactor.estimateTokens(out)).tokens <= maxTokens, `${maxTokens}: ${out}`);
          assert.match(out, /Pelican Post/);
          assert.match(out, /a passage/);
        }
      }
      assert.match(await memoryRead(compactor, { id: 't1', conversationId: 'conv' }), /ask again with this id and a query/);
      const res = await compactor.buildMemoryRead('x', [], { maxTokens: 200 });
      assert.deepEqual(res, { text: 'Nothing matches "x".', tokens: res.tokens, whole: [], passage: null, left_out: [] });
      await assert.rejects(compactor.buildMemoryRead('x', [], { maxTokens: 20 }), /max_tokens/);
    } finally {
      await compactor.close();
    }
  });

  test('a store-owned conversation is indexed as the plug-in renders it after each sync: a kept call found by name and arguments, in context', async () => {
    const store = new SQLiteStore();
    const compactor = await createCompactor({ wasmPath: wasmPath(), store });
    try {
      const turn = [{ role: 'user', content: 'where is order 4471?' },
        { role: 'assistant', content: '', tool_calls: [{ id: 't1', type: 'function', function: { name: 'get_order', arguments: '{"order":4471}' } }] },
        { role: 'tool', tool_call_id: 't1', content: '{"status":"lost","carrier":"Pelican Post"}' }];
      const r = await compactor.compress('c1', turn, { onlyIfDue: true });
      assert.equal(r.messages_compressed, 0);
      const hits = await compactor.search('get_order {"order":4471}', { conversationId: 'c1' });
      assert.ok(hits.length > 0 && hits.every((h) => h.in_context), JSON.stringify(hits));
      assert.ok(hits.some((h) => h.text.startsWith('get_order {"order":4471}')), JSON.stringify(hits));
      // Caller-owned: nothing stored; searched through inContext.
      assert.deepEqual(await compactor.search('get_order', { conversationId: 'c2' }), []);
      const mine = await compactor.search('get_order', { conversationId: 'c2', inContext: turn });
      assert.ok(mine.length > 0 && mine.every((h) => h.in_context));
      await assert.rejects(compactor.search('get_order', { inContext: turn }), /conversationId/);
    } finally {
      await compactor.close();
    }
  });

  test('LangChain.js: the agent\'s state is searched with the archive, a tool result in it found "in your context"', async () => {
    const compactor = await createCompactor({ wasmPath: wasmPath(), store: new SQLiteStore() });
    try {
      const model = fakeModel()
        .respond(new AIMessage({ content: '', tool_calls: [{ name: 'lookup_notes', args: { module: 3 }, id: 'call_3', type: 'tool_call' }] }))
        .respond(new AIMessage({ content: '', tool_calls: [{ name: 'memory_read', args: { query: 'retry budget of module 3' }, id: 'call_mr', type: 'tool_call' }] }))
        .respond(new AIMessage('Thirteen attempts.'));
      const lookup = tool(async ({ module }) => `Notes for module ${module}: the retry budget is ${10 + module} attempts.`, {
        name: 'lookup_notes', description: 'Notes about a module', schema: z.object({ module: z.number() }),
      });
      const agent = createAgent({ model, tools: [lookup, memoryReadTool({ compactor })], middleware: [clipfoldMiddleware({ compactor })],
        checkpointer: new MemorySaver() });
      const out = await agent.invoke({ messages: [{ role: 'user', content: "What is module 3's retry budget?" }] }, { configurable: { thread_id: 'ctx-1' } });
      const answer = out.messages.find((/** @type {any} */ m) => ToolMessage.isInstance(m) && m.tool_call_id === 'call_mr');
      assert.ok(answer, 'memory_read answered');
      assert.match(answer.text, /in your context/);
      assert.match(answer.text, /retry budget is 13 attempts/);
      assert.deepEqual(await compactor.search('retry budget', { conversationId: 'ctx-1' }), [], 'the store holds none of it');
    } finally {
      await compactor.close();
    }
  });

  test('AI SDK: the step\'s messages are searched with the archive, a tool result among them found "in your context"', async () => {
    const compactor = await createCompactor({ wasmPath: wasmPath(), store: new SQLiteStore() });
    try {
      let n = 0;
      const model = new MockLanguageModel({
        doGenerate: async () => {
          n++;
          const call = (/** @type {string} */ toolName, /** @type {object} */ input) => ({
            content: [{ type: 'tool-call', toolCallId: `call_${n}`, toolName, input: JSON.stringify(input) }],
            finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage, warnings: [],
          });
          if (n === 1) return call('lookup_notes', { module: 3 });
          if (n === 2) return call('memory_read', { query: 'retry budget of module 3' });
          return { content: [{ type: 'text', text: 'Thirteen.' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
        },
      });
      const tools = {
        lookup_notes: aiTool({ description: 'Notes', inputSchema: z.object({ module: z.number() }),
          execute: async ({ module }) => `Notes for module ${module}: the retry budget is ${10 + module} attempts.` }),
        memory_read: aiMemoryReadTool({ compactor, conversationId: 'ctx-2', maxTokens: 300 }),
      };
      const r = await generateText({ model, messages: [{ role: 'user', content: "What is module 3's retry budget?" }], tools, stopWhen: stepCountIs(4) });
      const results = r.steps.flatMap((s) => s.toolResults).filter((t) => t.toolName === 'memory_read');
      assert.equal(results.length, 1);
      const text = String(/** @type {any} */ (results[0]).output);
      assert.match(text, /in your context/);
      assert.match(text, /retry budget is 13 attempts/);
      assert.ok((await compactor.estimateTokens(text)).tokens <= 300);
    } finally {
      await compactor.close();
    }
  });
});
