// clipfold/ai-sdk end to end against the real Vercel AI SDK (the `ai`
// package pinned in package-lock.json): a multi-turn agent with tool calls
// driven by the SDK's own mock model (ai/test, no network) through
// generateText + stopWhen + prepareStep, the app keeping its whole list
// across turns as AI SDK apps do.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { createCompactor, MemoryStore } from '../src/index.js';
import { memoryReadTool, prepareStep } from '../src/ai-sdk.js';
import { wasmPath } from './helpers/common.js';

const CONFIG = { model_max_tokens: 3000, context_budget: 0.5, keep_recent: 4, chunk_size: 8, max_summary_tokens: 120 };
const SYSTEM = 'You are the on-call assistant. Use lookup_service for facts.';

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 5, text: 5, reasoning: undefined } };

/** A service's long tool output, with one fact to find later. @param {string} name */
function serviceDoc(name) {
  const n = Number(/\d+/.exec(name)?.[0] ?? 0);
  return `${name}: runs on port ${8000 + n}, owned by team-${['otter', 'heron', 'lynx', 'badger', 'marten', 'ibis', 'vole', 'gecko'][n % 8]}. `
    + `Deploys go through the blue/green pipeline with a canary of 5 percent; rollbacks are automatic when the error budget `
    + `drops below 99.5. Logs ship to the central collector and are kept for 30 days. `.repeat(3);
}

/**
 * The mock model of a tool-using agent: to a question it calls
 * lookup_service for the service and its replica, then answers; asked who
 * owned a service earlier, it calls memory_read first.
 * @param {any[][]} prompts every prompt the model saw
 */
function agentModel(prompts) {
  let calls = 0;
  return new MockLanguageModelV3({
    doGenerate: async (options) => {
      prompts.push(structuredClone(options.prompt));
      const p = options.prompt;
      const lastUser = p.findLastIndex((m) => m.role === 'user');
      const question = lastUser >= 0 ? p[lastUser].content.map((/** @type {any} */ c) => c.text ?? '').join('') : '';
      const results = p.slice(lastUser + 1).filter((m) => m.role === 'tool').flatMap((m) => m.content);
      const callTool = (/** @type {string} */ toolName, /** @type {object} */ input) => ({
        content: [{ type: 'tool-call', toolCallId: `call_${++calls}`, toolName, input: JSON.stringify(input) }],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage, warnings: [],
      });
      const say = (/** @type {string} */ text) => ({ content: [{ type: 'text', text }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] });
      const svc = /service-\d+/.exec(question)?.[0] ?? 'service-0';
      if (/owned .* earlier/.test(question)) {
        if (results.length === 0) return callTool('memory_read', { query: `Which team owns ${svc}?` });
        const out = /** @type {any} */ (results[0]).output;
        return say(`From the archive: ${typeof out.value === 'string' ? out.value : JSON.stringify(out)}`);
      }
      if (results.length === 0) return callTool('lookup_service', { name: svc });
      if (results.length === 1) return callTool('lookup_service', { name: `${svc}-replica` });
      return say(`${svc} is documented above; both instances checked.`);
    },
  });
}

/**
 * Every tool result of a prompt answers a tool call of an earlier
 * assistant message of the same prompt.
 * @param {any[]} prompt
 */
function assertToolPairs(prompt) {
  const calls = new Set();
  for (const m of prompt) {
    if (m.role === 'assistant') for (const c of m.content) if (c.type === 'tool-call') calls.add(c.toolCallId);
    if (m.role === 'tool') for (const c of m.content) assert.ok(calls.has(c.toolCallId), `tool result ${c.toolCallId} without its call`);
  }
}

describe('clipfold/ai-sdk with the real AI SDK', () => {
  test('a multi-turn agent with tool calls: compacted when due, tool pairs intact in every request, archive searchable by memory_read, nothing duplicated', async () => {
    const store = new MemoryStore();
    const compactor = await createCompactor({ wasmPath: wasmPath(), store, config: CONFIG });
    try {
      /** @type {any[][]} */
      const prompts = [];
      /** @type {import('../src/index.js').CompactionResult[]} */
      const compactions = [];
      const model = agentModel(prompts);
      const tools = {
        lookup_service: tool({
          description: 'Facts about a service',
          inputSchema: z.object({ name: z.string() }),
          execute: async ({ name }) => serviceDoc(name),
        }),
        memory_read: memoryReadTool({ compactor, conversationId: 'ops' }),
      };
      const step = prepareStep({ compactor, conversationId: 'ops', system: SYSTEM, onCompact: (r) => compactions.push(r) });
      /** @type {any[]} */
      const messages = [];
      const questions = [...Array.from({ length: 12 }, (_, i) => `What port does service-${i} use, and who owns it?`),
        'Who owned service-1 earlier?'];
      let last = '';
      for (const q of questions) {
        messages.push({ role: 'user', content: q });
        const r = await generateText({ model, system: SYSTEM, messages, tools, stopWhen: stepCountIs(5), prepareStep: step });
        messages.push(...r.response.messages);
        last = r.text;
      }

      // Compaction happened, and the model saw it.
      const done = compactions.filter((r) => !r.failed && r.messages_compressed > 0);
      assert.ok(done.length >= 1, `${compactions.length} compactions, none succeeded: ${JSON.stringify(compactions.map((r) => r.failure_message))}`);
      assert.deepEqual(compactions.filter((r) => r.failed), [], 'no failed compaction (no no_gain, no conflict)');
      const compacted = prompts.filter((p) => p[0].role === 'system' && p[0].content.includes('[Context Summary'));
      assert.ok(compacted.length > 0, 'some request carried the clip-archive');
      for (const p of compacted) {
        assert.ok(p[0].content.startsWith(SYSTEM), 'the system prompt stays first');
        assert.equal(p.filter((m) => m.role === 'system').length, 1, 'one system message');
      }
      const longest = Math.max(...prompts.map((p) => JSON.stringify(p).length));
      assert.ok(longest < JSON.stringify(messages).length / 2, `requests stay small: ${longest} vs ${JSON.stringify(messages).length} chars`);

      // Tool pairs intact, nothing repeated, in every request the model saw.
      for (const p of prompts) {
        assertToolPairs(p);
        const texts = p.map((m) => JSON.stringify(m));
        assert.equal(new Set(texts).size, texts.length, 'a message repeated in one request');
      }

      // The archive is searchable, and the agent found the old fact with memory_read.
      assert.match(last, /^From the archive: .*service-1: runs on port 8001, owned by team-heron/s, last);
      const hits = await compactor.search('who owns service-1', { conversationId: 'ops' });
      assert.ok(hits.some((h) => /team-heron/.test(h.text)), JSON.stringify(hits.map((h) => h.text.slice(0, 80))));

      // Nothing lost, nothing twice: every message of the app's list is in
      // the last view or in recall storage, once.
      const { messages: decoded } = await compactor.decodeHistory('ops', messages, { shape: 'ai_sdk' });
      const view = await compactor.compress('ops', messages, { callerOwned: true, shape: 'ai_sdk', onlyIfDue: true });
      const inView = new Set(view.history.map((m) => JSON.stringify(m)));
      let recalled = 0;
      decoded.forEach((d, i) => {
        if (inView.has(JSON.stringify(messages[i]))) return;
        recalled++;
        assert.equal(store.recall(d.id)?.raw, JSON.stringify(messages[i]), `lost: ${JSON.stringify(messages[i]).slice(0, 200)}`);
      });
      assert.ok(recalled > 0);
      const rows = store.dump().split('\n').filter((l) => l.startsWith('  {')).map((l) => JSON.parse(l.slice(2)))
        .filter((r) => Object.hasOwn(r, 'removed_at') && !String(r.content).startsWith('[Context Summary'));
      assert.equal(rows.length, recalled, 'each removed message is in recall once');
      assert.deepEqual(store.activeMessages('ops'), [], 'the app owns its list: nothing of it is stored');
    } finally {
      await compactor.close();
      store.close();
    }
  });

  test('a failed compaction: the step gets the view earlier compactions made, not the whole list', async () => {
    let fail = false;
    const llm = { complete: () => (fail ? { error: { code: 'invalid_request', message: 'down', retryable: false } }
      : { content: [{ type: 'text', text: 'Earlier: services were looked up.' }] }) };
    const compactor = await createCompactor({ wasmPath: wasmPath(), llm, config: CONFIG });
    try {
      /** @param {number} i */
      const turn = (i) => [
        { role: 'user', content: `What port does service-${i} use?` },
        { role: 'assistant', content: [{ type: 'tool-call', toolCallId: `c${i}`, toolName: 'lookup_service', input: { name: `service-${i}` } }] },
        { role: 'tool', content: [{ type: 'tool-result', toolCallId: `c${i}`, toolName: 'lookup_service', output: { type: 'text', value: serviceDoc(`service-${i}`) } }] },
        { role: 'assistant', content: [{ type: 'text', text: `service-${i} answered.` }] },
      ];
      /** @type {import('../src/index.js').CompactionResult[]} */
      const seen = [];
      const step = prepareStep({ compactor, conversationId: 'f', onCompact: (r) => seen.push(r) });
      const first = Array.from({ length: 14 }, (_, i) => turn(i)).flat();
      const a = await step({ messages: /** @type {any} */ (first) });
      assert.ok(seen.length > 0 && !seen[0].failed, JSON.stringify(seen.map((r) => r.failure_message)));
      assert.ok(a && a.messages.length < first.length && String(a.messages[0].content).startsWith('[Context Summary'), 'compacted');
      // The clip-archive is a system message, or the user turn first when
      // the kept messages start without one.
      assert.equal(a.messages[0].role, a.messages[1].role === 'user' ? 'system' : 'user');
      fail = true;
      const more = Array.from({ length: 22 }, (_, i) => turn(i)).flat();
      const b = await step({ messages: /** @type {any} */ (more) });
      assert.equal(seen.at(-1)?.failed, true, 'the compaction failed');
      assert.ok(b && b.messages.length < more.length, 'the earlier view, not the whole list');
      assert.deepEqual(b.messages[0], a.messages[0], 'behind the clip-archive it had');
      assert.deepEqual(b.messages.slice(-4), more.slice(-4));
    } finally {
      await compactor.close();
    }
  });

  test('not due: prepareStep changes nothing; bad options are TypeErrors', async () => {
    const compactor = await createCompactor({ wasmPath: wasmPath() });
    try {
      const step = prepareStep({ compactor, conversationId: 'quiet' });
      assert.equal(await step({ messages: [{ role: 'user', content: 'hi' }] }), undefined);
      assert.throws(() => prepareStep(/** @type {any} */ ({ compactor })), TypeError);
      assert.throws(() => memoryReadTool(/** @type {any} */ ({})), TypeError);
      const t = memoryReadTool({ compactor, conversationId: 'quiet' });
      assert.match(String(await t.execute?.({ query: 'anything at all' }, { toolCallId: 'x', messages: [] })), /^Nothing matches "anything at all"\.$/);
    } finally {
      await compactor.close();
    }
  });
});
