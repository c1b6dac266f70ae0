// clipfold/ai-sdk end to end against the real Vercel AI SDK (the `ai` 6
// pinned in package-lock.json; `make test-frameworks` runs it again on the
// newest `ai` 7): a multi-turn agent with tool calls driven by the SDK's
// own mock model (ai/test, no network) through generateText (and
// streamText) + stopWhen + prepareStep, the app keeping its whole list
// across turns as AI SDK apps do; and with compaction ahead of time
// (`ahead: true`), the summaries written by an OpenAI-compatible
// summarizer on a real node:http server.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import { convertArrayToReadableStream } from 'ai/test';
import { z } from 'zod';
import { createCompactor, MemoryStore } from '../src/index.js';
import { memoryReadTool, prepareStep } from '../src/ai-sdk.js';
import { watchedAhead } from './helpers/ahead.js';
import { MockLanguageModel, responseMessages } from './helpers/aisdk.js';
import { wasmPath } from './helpers/common.js';

const CONFIG = { model_max_tokens: 3000, context_budget: 0.5, keep_recent: 4, chunk_size: 8, max_summary_tokens: 120 };
const SYSTEM = 'You are the on-call assistant. Use lookup_service for facts.';

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
 * owned a service earlier, it calls memory_read first; streamed too. With
 * `count` it reports as its usage that count of the request (the
 * provider's count) and runs `onCall` first.
 * @param {any[][]} prompts every prompt the model saw
 * @param {{count: (prompt: any[], tools: unknown[]) => Promise<number>, onCall: () => Promise<void>}} [counted]
 */
function agentModel(prompts, counted) {
  let calls = 0;
  /** @param {any} options */
  const respond = async (options) => {
    await counted?.onCall();
    prompts.push(structuredClone(options.prompt));
    const p = options.prompt;
    const n = counted ? await counted.count(p, options.tools ?? []) : 10;
    const usage = { inputTokens: { total: n, noCache: n, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 5, text: 5, reasoning: undefined } };
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
  };
  return new MockLanguageModel({
    doGenerate: respond,
    doStream: async (options) => {
      const r = await respond(options);
      const parts = r.content.flatMap((/** @type {any} */ c) => (c.type === 'text'
        ? [{ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: c.text }, { type: 'text-end', id: 't' }] : [c]));
      return { stream: convertArrayToReadableStream([{ type: 'stream-start', warnings: [] }, ...parts,
        { type: 'finish', finishReason: r.finishReason, usage: r.usage }]) };
    },
  });
}

/**
 * The agent's tools: lookup_service and memory_read.
 * @param {Awaited<ReturnType<typeof createCompactor>>} compactor
 * @param {string} conversationId
 */
function agentTools(compactor, conversationId) {
  return {
    lookup_service: tool({
      description: 'Facts about a service',
      inputSchema: z.object({ name: z.string() }),
      execute: async ({ name }) => serviceDoc(name),
    }),
    memory_read: memoryReadTool({ compactor, conversationId }),
  };
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

/**
 * The messages of a prompt that carry a clip-archive: a system message
 * holding it, or the user turn it is written as.
 * @param {any[]} prompt
 */
const archivesOf = (prompt) => prompt.filter((m) => (m.role === 'system' || m.role === 'user') && JSON.stringify(m.content).includes('[Context Summary'));

/**
 * Nothing lost, nothing twice: every message of the app's list is in the
 * last view or in recall storage, once; nothing of the list is stored.
 * Returns how many were recalled.
 * @param {Awaited<ReturnType<typeof createCompactor>>} compactor
 * @param {MemoryStore} store
 * @param {string} conv
 * @param {any[]} messages the app's list
 */
async function assertNothingLost(compactor, store, conv, messages) {
  const { messages: decoded } = await compactor.decodeHistory(conv, messages, { shape: 'ai_sdk' });
  const view = await compactor.compress(conv, messages, { callerOwned: true, shape: 'ai_sdk', onlyIfDue: true });
  const inView = new Set(view.history.map((m) => JSON.stringify(m)));
  let recalled = 0;
  decoded.forEach((d, i) => {
    if (inView.has(JSON.stringify(messages[i]))) return;
    recalled++;
    assert.equal(store.recall(d.id)?.raw, JSON.stringify(messages[i]), `lost: ${JSON.stringify(messages[i]).slice(0, 200)}`);
  });
  const rows = store.dump().split('\n').filter((l) => l.startsWith('  {')).map((l) => JSON.parse(l.slice(2)))
    .filter((r) => Object.hasOwn(r, 'removed_at') && !String(r.content).startsWith('[Context Summary'));
  assert.equal(rows.length, recalled, 'each removed message is in recall once');
  assert.deepEqual(store.activeMessages(conv), [], 'the app owns its list: nothing of it is stored');
  return recalled;
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
      const tools = agentTools(compactor, 'ops');
      const step = prepareStep({ compactor, conversationId: 'ops', system: SYSTEM, onCompact: (r) => compactions.push(r) });
      /** @type {any[]} */
      const messages = [];
      const questions = [...Array.from({ length: 12 }, (_, i) => `What port does service-${i} use, and who owns it?`),
        'Who owned service-1 earlier?'];
      let last = '';
      for (const q of questions) {
        messages.push({ role: 'user', content: q });
        const r = await generateText({ model, system: SYSTEM, messages, tools, stopWhen: stepCountIs(5), prepareStep: step });
        messages.push(...await responseMessages(r));
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

      assert.ok(await assertNothingLost(compactor, store, 'ops', messages) > 0);
    } finally {
      await compactor.close();
      store.close();
    }
  });

  test('ahead: true, 45 turns with tool calls: compactions prepared in the background and applied on a later step, every request within the limit, tool pairs intact, the archive found by memory_read, nothing lost', async () => {
    const TURNS = 45;
    // A window of 4,000 (compaction ahead of time prepares to a lower target: docs/spec.md#compaction-ahead-of-time).
    const config = { ...CONFIG, model_max_tokens: 8000 };
    const limit = config.model_max_tokens * config.context_budget;
    const store = new MemoryStore();
    const watch = await watchedAhead({ store, config });
    const { compactor } = watch;
    try {
      /** @type {any[][]} */
      const prompts = [];
      /** @type {number[]} the plug-in's count of each request */
      const counts = [];
      /** @type {import('../src/index.js').CompactionResult[]} */
      const compactions = [];
      const model = agentModel(prompts, {
        onCall: watch.modelCall,
        count: async (prompt, tools) => {
          const schemas = tools.map((/** @type {any} */ t) => ({ type: 'function', name: t.name, description: t.description ?? '', parameters: t.inputSchema }));
          const n = (await compactor.estimateTokens(prompt, config)).tokens + await compactor.overheadTokens({ tools: schemas, config });
          counts.push(n);
          return n;
        },
      });
      const tools = agentTools(compactor, 'ahead');
      const step = prepareStep({ compactor, conversationId: 'ahead', system: SYSTEM, tools, config, ahead: true, onCompact: (r) => compactions.push(r) });
      /** @type {any[]} */
      const messages = [];
      let last = '';
      for (let i = 0; i < TURNS; i++) {
        messages.push({ role: 'user', content: i === TURNS - 1 ? 'Who owned service-1 earlier?' : `What port does service-${i} use, and who owns it?` });
        const r = await generateText({ model, system: SYSTEM, messages, tools, stopWhen: stepCountIs(5), prepareStep: step });
        messages.push(...await responseMessages(r));
        last = r.text;
      }

      // Started in the background, the model called meanwhile, applied later; summaries by the summarizer.
      const stats = watch.check();
      const done = compactions.filter((r) => !r.failed && r.messages_compressed > 0);
      assert.ok(done.length >= 2, `${done.length} compactions`);
      assert.deepEqual(compactions.filter((r) => r.failed).map((r) => r.failure_message), [], 'no failed compaction');
      assert.deepEqual(stats.discarded, [], 'every prepared compaction applied: each step\'s list continues the one before');
      assert.ok(done.every((r) => r.batches.every((b) => b.method === 'llm')), 'every summary by the summarizer');
      assert.equal(prompts.length, 3 * TURNS - 1);

      // Every request: within the limit as the plug-in counts it, the system prompt first (with the clip-archive),
      // tool pairs intact, nothing repeated.
      for (const [i, p] of prompts.entries()) {
        assert.ok(counts[i] <= limit, `request ${i}: ${counts[i]} tokens > ${limit}`);
        assert.ok(p[0].role === 'system' && p[0].content.startsWith(SYSTEM), `request ${i}: the system prompt first`);
        assert.equal(p.filter((m) => m.role === 'system').length, 1, `request ${i}: one system message`);
        assert.ok(archivesOf(p).length <= 1, `request ${i}: ${archivesOf(p).length} clip-archives`);
        assertToolPairs(p);
        const answered = new Set(p.filter((m) => m.role === 'tool').flatMap((m) => m.content.map((/** @type {any} */ c) => c.toolCallId)));
        for (const m of p) if (m.role === 'assistant') for (const c of m.content) if (c.type === 'tool-call') assert.ok(answered.has(c.toolCallId), `request ${i}: ${c.toolCallId} without its result`);
        const texts = p.map((m) => JSON.stringify(m));
        assert.equal(new Set(texts).size, texts.length, `request ${i}: a message repeated`);
      }
      const summarized = prompts.filter((p) => archivesOf(p).length > 0);
      assert.ok(summarized.length >= TURNS, `${summarized.length} requests carried the clip-archive`);

      // The first turns' facts: out of the model's view at the end, found by memory_read.
      assert.ok(!JSON.stringify(prompts.at(-2)?.slice(1)).includes('service-1: runs on port'), 'service-1 is no longer in the messages');
      assert.match(last, /^From the archive: .*service-1: runs on port 8001, owned by team-heron/s, last);

      const recalled = await assertNothingLost(compactor, store, 'ahead', messages);
      assert.ok(recalled > TURNS, `${recalled} messages recalled`);
      console.log(`${prompts.length} model calls, the longest ${Math.max(...counts)} tokens (limit ${limit}); ${done.length} compactions; `
        + `${recalled} messages in recall; ahead: ${JSON.stringify(stats)}`);
    } finally {
      await watch.close();
      store.close();
    }
  });

  test('streamText, the system prompt as system messages and no `system` given: the clip-archive right after them, one in every request, tool pairs intact, nothing lost', async () => {
    const store = new MemoryStore();
    const compactor = await createCompactor({ wasmPath: wasmPath(), store, config: CONFIG });
    try {
      /** @type {any[][]} */
      const prompts = [];
      /** @type {import('../src/index.js').CompactionResult[]} */
      const compactions = [];
      /** @type {unknown[]} */
      const errors = [];
      const model = agentModel(prompts);
      const tools = agentTools(compactor, 'stream');
      const cache = { anthropic: { cacheControl: { type: 'ephemeral' } } };
      /** @type {import('ai').SystemModelMessage[]} */
      const system = [{ role: 'system', content: SYSTEM, providerOptions: cache }];
      const step = prepareStep({ compactor, conversationId: 'stream', tools, onCompact: (r) => compactions.push(r) });
      /** @type {any[]} */
      const messages = [];
      for (let i = 0; i < 12; i++) {
        messages.push({ role: 'user', content: `What port does service-${i} use, and who owns it?` });
        const r = streamText({ model, system, messages, tools, stopWhen: stepCountIs(5), prepareStep: step, onError: ({ error }) => { errors.push(error); } });
        await r.consumeStream();
        messages.push(...await responseMessages(r));
      }
      assert.deepEqual(errors, []);
      assert.equal(prompts.length, 3 * 12);
      const done = compactions.filter((r) => !r.failed && r.messages_compressed > 0);
      assert.ok(done.length >= 1, `${compactions.length} compactions, none succeeded: ${JSON.stringify(compactions.map((r) => r.failure_message))}`);
      assert.deepEqual(compactions.filter((r) => r.failed), [], 'no failed compaction');
      let archived = 0;
      for (const [i, p] of prompts.entries()) {
        assert.equal(p[0].content, SYSTEM, `request ${i}: the system prompt first`);
        assert.deepEqual(p[0].providerOptions, cache, `request ${i}: its provider options kept`);
        const archives = archivesOf(p);
        assert.ok(archives.length <= 1, `request ${i}: ${archives.length} clip-archives`);
        if (archives.length === 1) {
          archived++;
          // A system message right after the system prompt, or the user turn first after it.
          assert.equal(archives[0], p[1], `request ${i}: the clip-archive right after the system prompt`);
        }
        assertToolPairs(p);
        const texts = p.map((m) => JSON.stringify(m));
        assert.equal(new Set(texts).size, texts.length, `request ${i}: a message repeated`);
      }
      assert.ok(archived > 0, 'some request carried the clip-archive');
      assert.ok(await assertNothingLost(compactor, store, 'stream', messages) > 0);
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
      assert.throws(() => prepareStep({ compactor, conversationId: 'quiet', ahead: /** @type {any} */ (1) }), /^ClipfoldError: invalid_input: ahead: must be true or false, got 1$/);
      assert.throws(() => memoryReadTool(/** @type {any} */ ({})), TypeError);
      const t = memoryReadTool({ compactor, conversationId: 'quiet' });
      assert.match(String(await t.execute?.({ query: 'anything at all' }, { toolCallId: 'x', messages: [] })), /^Nothing matches "anything at all"\.$/);
    } finally {
      await compactor.close();
    }
  });
});
