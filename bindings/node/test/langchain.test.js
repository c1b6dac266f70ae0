// clipfold/langchain end to end against the real LangChain.js v1 (the
// `langchain`, `@langchain/core` and `@langchain/langgraph` packages pinned
// in package-lock.json): createAgent with tools, clipfoldMiddleware and a
// MemorySaver checkpointer, driven turn after turn by LangChain's own fake
// chat model (fakeModel, no network); the summaries are written by another
// fakeModel through chatModelLLM, or, compacting ahead of time, by an
// OpenAI-compatible summarizer on a real node:http server.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, createAgent, createMiddleware, fakeModel, summarizationMiddleware, tool } from 'langchain';
import { Command, MemorySaver } from '@langchain/langgraph';
import { z } from 'zod';
import { createCompactor, MemoryStore } from '../src/index.js';
import { CLIP_ARCHIVE_SOURCE, chatModelLLM, clipfoldMiddleware, memoryReadTool, messageDict, toolSchemas } from '../src/langchain.js';
import { watchedAhead } from './helpers/ahead.js';
import { wasmPath } from './helpers/common.js';

/** The clip-archive message the middleware puts in the state (a SystemMessage or a HumanMessage). @param {any} m */
const isArchive = (m) => m?.additional_kwargs?.lc_source === CLIP_ARCHIVE_SOURCE;

const SYSTEM = 'You are the on-call assistant. Use lookup_service for facts.';
const TEAMS = ['otter', 'heron', 'lynx', 'badger', 'marten', 'ibis', 'vole', 'gecko'];

/** @param {string} name */
function serviceDoc(name) {
  const n = Number(/\d+/.exec(name)?.[0] ?? 0);
  return `${name}: runs on port ${8000 + n}, owned by team-${TEAMS[n % 8]}. `
    + 'Deploys go through the blue/green pipeline with a canary of 5 percent; rollbacks are automatic when the error budget '
    + 'drops below 99.5. Logs ship to the central collector and are kept for 30 days. '.repeat(3);
}

/** @param {any[]} messages */
function assertToolPairs(messages) {
  const calls = new Set();
  for (const m of messages) {
    if (AIMessage.isInstance(m)) for (const c of m.tool_calls ?? []) calls.add(c.id);
    if (ToolMessage.isInstance(m)) assert.ok(calls.has(m.tool_call_id), `ToolMessage ${m.tool_call_id} without its AIMessage`);
  }
}

/**
 * n turns of an agent's state: a question, a lookup_service call, its
 * result, an answer.
 * @param {number} n
 * @returns {any[]}
 */
function toolTurns(n) {
  return Array.from({ length: n }, (_, i) => [
    new HumanMessage({ id: `h${i}`, content: `Question ${i} about service-${i}?` }),
    new AIMessage({ id: `a${i}`, content: '', tool_calls: [{ id: `t${i}`, name: 'lookup_service', args: { name: `service-${i}` }, type: 'tool_call' }] }),
    new ToolMessage({ id: `r${i}`, tool_call_id: `t${i}`, content: serviceDoc(`service-${i}`) }),
    new AIMessage({ id: `x${i}`, content: `service-${i} answered.` }),
  ]).flat();
}

/**
 * Calls a middleware's wrapModelCall as the agent does, in thread
 * `threadId`, with no system prompt and no tools; the model answers "ok"
 * and `sent` records each request it got.
 * @param {any} mw
 * @param {string} threadId
 */
function driver(mw, threadId) {
  const runtime = { configurable: { thread_id: threadId } };
  /** @type {any[]} */
  const sent = [];
  const handler = async (/** @type {any} */ req) => { sent.push(req); return new AIMessage({ id: `answer${sent.length}`, content: 'ok' }); };
  const call = (/** @type {any[]} */ msgs) => mw.wrapModelCall({ messages: msgs, systemMessage: new SystemMessage(''), tools: [], state: { messages: msgs }, runtime }, handler);
  return { call, sent };
}

/**
 * Nothing lost, nothing twice: every message the state held (`seen`, by
 * id, as first seen) is in the final state as it was or, once, in recall
 * storage (removed, or kept changed to fit: a tool result cleared); the
 * state keeps one clip-archive, first; the store holds no active message.
 * Returns how many were recalled.
 * @param {MemoryStore} store
 * @param {Map<string, Record<string, unknown>>} seen
 * @param {any[]} messages the final state's
 * @param {string} conversationId
 */
function assertNothingLost(store, seen, messages, conversationId) {
  const finalById = new Map(messages.map((m) => [m.id, JSON.stringify(messageDict(m))]));
  assert.equal(messages.filter((m) => isArchive(m)).length, 1);
  assert.ok(isArchive(messages[0]));
  let recalled = 0;
  for (const [id, d] of seen) {
    if (finalById.get(id) === JSON.stringify(d)) continue;
    recalled++;
    assert.deepEqual(store.recall(id)?.message, JSON.parse(JSON.stringify(d)), `lost: ${id}`);
  }
  const rows = store.dump().split('\n').filter((l) => l.startsWith('  {')).map((l) => JSON.parse(l.slice(2)))
    .filter((r) => Object.hasOwn(r, 'removed_at') && r.role !== 'system');
  assert.equal(rows.length, recalled, 'each removed message is in recall once');
  assert.deepEqual(store.activeMessages(conversationId), [], 'the agent state owns the messages');
  return recalled;
}

describe('clipfold/langchain with the real LangChain.js', () => {
  test('createAgent + clipfoldMiddleware: compacted when triggered, tool pairs intact in every request, memory_read finds the archive, nothing duplicated', async () => {
    const questions = [...Array.from({ length: 12 }, (_, i) => `What port does service-${i} use, and who owns it?`), 'Who owned service-1 earlier?'];
    // The agent's model: for each question two lookups and an answer; for
    // the last, memory_read and an answer quoting it.
    // (respondWithTools would give each call the whole input as content.)
    const model = fakeModel();
    let n = 0;
    const callTool = (/** @type {string} */ name, /** @type {object} */ args) => new AIMessage({ content: '', tool_calls: [{ name, args, id: `call_${++n}`, type: 'tool_call' }] });
    for (let i = 0; i < 12; i++) {
      model.respond(callTool('lookup_service', { name: `service-${i}` }))
        .respond(callTool('lookup_service', { name: `service-${i}-replica` }))
        .respond(new AIMessage(`service-${i} checked, both instances.`));
    }
    model.respond(callTool('memory_read', { query: 'Which team owns service-1?' }))
      .respond((msgs) => new AIMessage(`From the archive: ${msgs.at(-1)?.text}`));
    // The summarizer: a LangChain chat model too.
    const summarizer = fakeModel();
    for (let i = 0; i < 200; i++) {
      summarizer.respond((msgs) => new AIMessage(`Facts: ${[...new Set(msgs.map((m) => m.text).join(' ')
        .match(/service-\d+: runs on port \d+, owned by team-\w+/g) ?? [])].join('; ')}`));
    }

    const store = new MemoryStore();
    const compactor = await createCompactor({ wasmPath: wasmPath(), store, llm: chatModelLLM(summarizer) });
    /** @type {import('../src/index.js').CompactionResult[]} */
    const compactions = [];
    try {
      const lookup = tool(async ({ name }) => serviceDoc(name), {
        name: 'lookup_service', description: 'Facts about a service', schema: z.object({ name: z.string() }),
      });
      const agent = createAgent({
        model, systemPrompt: SYSTEM, checkpointer: new MemorySaver(),
        tools: [lookup, memoryReadTool({ compactor })],
        // keep.tokens leaves room for memory_read's answer (about 700 tokens) beside the archive: smaller, the
        // window guarantee would middle-truncate it in the very request that reads it.
        middleware: [clipfoldMiddleware({ compactor, trigger: { tokens: 2000 }, keep: { tokens: 1200 }, onCompact: (r) => compactions.push(r) })],
      });
      const cfg = { configurable: { thread_id: 'ops' } };
      /** @type {Map<string, Record<string, unknown>>} every message the state ever held, by id, as first seen */
      const seen = new Map();
      const see = (/** @type {any} */ m) => { if (m.id && !isArchive(m) && !seen.has(m.id)) seen.set(m.id, messageDict(m)); };
      /** @type {any} */
      let state;
      let calls = 0;
      for (const q of questions) {
        state = await agent.invoke({ messages: [new HumanMessage(q)] }, cfg);
        // The requests first (a tool result may be cleared before the run ends), then the state.
        for (const call of model.calls.slice(calls)) call.messages.forEach(see);
        calls = model.calls.length;
        state.messages.forEach(see);
      }

      // Compaction happened: summaries by the LangChain summarizer, and the
      // model saw the clip-archive in its system message.
      assert.ok(compactions.length >= 2, `${compactions.length} compactions`);
      assert.deepEqual(compactions.filter((r) => r.failed).map((r) => r.failure_message), [], 'no failed compaction');
      assert.ok(summarizer.callCount > 0 && compactions.every((r) => r.batches.every((b) => b.method === 'llm')));
      // The clip-archive is in the system message, or, when the kept
      // messages start with a tool call, the user turn the request starts with.
      const compacted = model.calls.filter((c) => SystemMessage.isInstance(c.messages[0]) && c.messages[0].text.includes('[Context Summary'));
      const asTurn = model.calls.filter((c) => isArchive(c.messages[1]));
      assert.ok(compacted.length + asTurn.length > 0, 'some request carried the clip-archive');
      for (const c of compacted) {
        assert.ok(c.messages[0].text.startsWith(SYSTEM), 'the agent\'s system prompt stays first');
        assert.equal(c.messages.filter((m) => SystemMessage.isInstance(m)).length, 1, 'one system message per request');
        assert.ok(HumanMessage.isInstance(c.messages[1]), 'a user turn first');
      }
      for (const c of asTurn) {
        assert.ok(HumanMessage.isInstance(c.messages[1]) && AIMessage.isInstance(c.messages[2]), 'the clip-archive turn, then a tool call');
        assert.equal(c.messages.filter((m) => SystemMessage.isInstance(m)).length, 1, 'one system message per request');
      }
      const sizes = model.calls.map((c) => JSON.stringify(c.messages.map((m) => messageDict(m))).length);
      // Bounded by the trigger, well under the whole run (memory_read's answer, which the run holds too, is bounded
      // by its token budget since it fits one: half of the run was met only while that answer was unbounded).
      assert.ok(Math.max(...sizes) < JSON.stringify([...seen.values()]).length * 0.6, `requests stay small: ${Math.max(...sizes)}`);

      // Tool pairs intact and nothing repeated in every request the model saw.
      for (const c of model.calls) {
        assertToolPairs(c.messages);
        const ids = c.messages.map((m) => m.id).filter(Boolean);
        assert.equal(new Set(ids).size, ids.length, 'a message repeated in one request');
      }

      // The agent found the old fact with memory_read; the archive is searchable.
      assert.match(state.messages.at(-1).text, /^From the archive: .*service-1: runs on port 8001, owned by team-heron/s);
      assert.ok((await compactor.search('who owns service-1', { conversationId: 'ops' })).some((h) => /team-heron/.test(h.text)));

      const recalled = assertNothingLost(store, seen, state.messages, 'ops');
      assert.ok(recalled > 20, `${recalled} recalled`);
    } finally {
      await compactor.close();
      store.close();
    }
  });

  test('ahead: true, 45 turns with tool calls: compactions prepared in the background and applied on a later model call, every request within the budget, tool pairs intact, the first turn\'s fact found by memory_read, nothing lost', async () => {
    const TURNS = 45;
    const FACT = 'the staging cluster codename is BLUE-OTTER-7';
    // A window of 4,000 (compaction ahead of time prepares to a lower target: docs/spec.md#compaction-ahead-of-time).
    const config = { model_max_tokens: 8000, context_budget: 0.5, chunk_size: 8, max_summary_tokens: 150 };
    const limit = config.model_max_tokens * config.context_budget;
    const store = new MemoryStore();
    const watch = await watchedAhead({ store, config });
    const { compactor } = watch;
    /** @type {import('../src/index.js').CompactionResult[]} */
    const compactions = [];
    try {
      const model = fakeModel();
      let n = 0;
      const callTool = (/** @type {string} */ name, /** @type {object} */ args) => new AIMessage({ content: '', tool_calls: [{ name, args, id: `call_${++n}`, type: 'tool_call' }] });
      model.respond(new AIMessage('Noted.'));
      for (let i = 1; i < TURNS - 1; i++) {
        model.respond(callTool('lookup_service', { name: `service-${i}` })).respond(new AIMessage(`service-${i} is documented above.`));
      }
      model.respond(callTool('memory_read', { query: 'What is the staging cluster codename?' }))
        .respond((msgs) => new AIMessage(`From memory: ${msgs.at(-1)?.text}`));
      const lookup = tool(async ({ name }) => serviceDoc(name), {
        name: 'lookup_service', description: 'Facts about a service', schema: z.object({ name: z.string() }),
      });
      const tools = [lookup, memoryReadTool({ compactor, maxTokens: 300 })];
      const agent = createAgent({
        model, systemPrompt: SYSTEM, checkpointer: new MemorySaver(), tools,
        middleware: [
          clipfoldMiddleware({ compactor, config, keep: { messages: 4 }, ahead: true, onCompact: (r) => compactions.push(r) }),
          // Right before the model: the model call lasts as a provider's would (helpers/ahead.js).
          createMiddleware({ name: 'ModelCall', wrapModelCall: async (request, handler) => { await watch.modelCall(); return handler(request); } }),
        ],
      });
      const cfg = { configurable: { thread_id: 'ahead' } };
      /** @type {Map<string, Record<string, unknown>>} */
      const seen = new Map();
      const see = (/** @type {any} */ m) => { if (m.id && !isArchive(m) && !seen.has(m.id)) seen.set(m.id, messageDict(m)); };
      /** @type {any} */
      let state;
      let calls = 0;
      for (let i = 0; i < TURNS; i++) {
        const q = i === 0 ? `Remember this: ${FACT}.` : i === TURNS - 1 ? 'What was the staging cluster codename I gave you at the start?'
          : `What port does service-${i} use, and who owns it?`;
        state = await agent.invoke({ messages: [new HumanMessage(q)] }, cfg);
        for (const call of model.calls.slice(calls)) call.messages.forEach(see);
        calls = model.calls.length;
        state.messages.forEach(see);
      }

      // Started in the background, the model called meanwhile, applied later; summaries by the summarizer.
      const stats = watch.check();
      const done = compactions.filter((r) => !r.failed && r.messages_compressed > 0);
      assert.ok(done.length >= 2, `${done.length} compactions`);
      assert.deepEqual(compactions.filter((r) => r.failed).map((r) => r.failure_message), [], 'no failed compaction');
      assert.ok(done.every((r) => r.batches.every((b) => b.method === 'llm')), 'every summary by the summarizer');
      assert.equal(model.calls.length, 2 * TURNS - 1);

      // Every request: within the budget as the plug-in counts it (the clip-archive in the system message), tool
      // pairs intact, one system message, nothing repeated.
      const schemas = toolSchemas(tools);
      for (const [i, c] of model.calls.entries()) {
        const [sys, ...rest] = c.messages;
        assert.ok(SystemMessage.isInstance(sys) && sys.text.startsWith(SYSTEM), `request ${i}: the system prompt first`);
        const tokens = (await compactor.estimateTokens(rest.map((m) => messageDict(m)), config)).tokens
          + await compactor.overheadTokens({ system: sys.text, tools: schemas, config });
        assert.ok(tokens <= limit, `request ${i}: ${tokens} tokens > ${limit}`);
        assertToolPairs(rest);
        assert.ok(rest.every((m, k) => !AIMessage.isInstance(m) || !m.tool_calls?.length || ToolMessage.isInstance(rest[k + 1])),
          `request ${i}: a tool call without its result`);
        assert.equal(rest.filter((m) => SystemMessage.isInstance(m)).length, 0, `request ${i}: one system message`);
        const ids = rest.map((m) => m.id).filter(Boolean);
        assert.equal(new Set(ids).size, ids.length, `request ${i}: a message repeated`);
      }
      const summarized = model.calls.filter((c) => c.messages[0].text.includes('[Context Summary') || isArchive(c.messages[1]));
      assert.ok(summarized.length >= TURNS, `${summarized.length} requests carried the clip-archive`);

      // The first turn's fact: out of the model's view at the end, found by memory_read.
      assert.ok(!model.calls.at(-2)?.messages.slice(1).some((m) => !isArchive(m) && m.text.includes('BLUE-OTTER-7')), 'the fact is no longer in the messages');
      assert.match(state.messages.at(-1).text, /^From memory: .*BLUE-OTTER-7/s);

      const recalled = assertNothingLost(store, seen, state.messages, 'ahead');
      assert.ok(recalled > TURNS, `${recalled} recalled`);
      console.log(`${model.calls.length} model calls; ${done.length} compactions; ${recalled} messages in recall; ahead: ${JSON.stringify(stats)}`);
    } finally {
      await watch.close();
      store.close();
    }
  });

  test('the check before each model call counts the new messages only: at 2,000 messages as at 100', async () => {
    const compactor = await createCompactor({ wasmPath: wasmPath(), config: { model_max_tokens: 1_000_000 } });
    /** @type {number[]} */
    const counted = [];
    const real = compactor.callRaw;
    compactor.callRaw = (name, input) => {
      if (name === 'estimateTokens') counted.push(typeof input === 'string' ? Buffer.byteLength(input) : input.length);
      return real(name, input);
    };
    try {
      const mw = /** @type {any} */ (clipfoldMiddleware({ compactor }));
      const handler = async () => new AIMessage({ content: 'ok' });
      /** @type {Record<number, number[]>} */
      const perTurn = {};
      for (const n of [100, 2_000]) {
        const runtime = { configurable: { thread_id: `flat-${n}` } };
        let msgs = Array.from({ length: n }, (_, i) => (i % 2 === 0
          ? new HumanMessage({ id: `h${i}`, content: `Question ${i} about service-${i}?` })
          : new AIMessage({ id: `a${i}`, content: `service-${i} answered.` })));
        const call = () => mw.wrapModelCall({ messages: msgs, systemMessage: new SystemMessage(''), tools: [], state: { messages: msgs }, runtime }, handler);
        await call();
        counted.length = 0;
        for (let i = 0; i < 20; i++) {
          msgs = [...msgs, new HumanMessage({ id: `new${i}`, content: `and service-${i % 10}?` })];
          assert.ok(AIMessage.isInstance(await call()), 'under the budget: the answer, nothing else');
        }
        perTurn[n] = [...counted];
      }
      assert.equal(perTurn[100].length, 20);
      assert.deepEqual(perTurn[2_000], perTurn[100], 'the turn\'s new message alone, whatever the length');
    } finally {
      compactor.callRaw = real;
      await compactor.close();
    }
  });

  test('without a trigger clipfold\'s budget decides; keep.messages keeps that many; a second call on the replaced list is quiet', async () => {
    const compactor = await createCompactor({ wasmPath: wasmPath(), config: { model_max_tokens: 2000, context_budget: 0.5 } });
    try {
      const mw = /** @type {any} */ (clipfoldMiddleware({ compactor, keep: { messages: 6 } }));
      const messages = toolTurns(12);
      const { call, sent } = driver(mw, 'no-trigger');
      const first = await call(messages.slice(0, 4));
      assert.ok(AIMessage.isInstance(first), 'under the budget: the answer, nothing else');
      assert.deepEqual(sent[0].messages, messages.slice(0, 4));
      const out = await call(messages);
      assert.ok(out instanceof Command, 'over the budget: compacted, and the state replaced');
      const [remove, clip, ...rest] = out.update.messages;
      const kept = rest.slice(0, -1);
      assert.equal(rest.at(-1).id, 'answer2', 'the answer follows the compacted list');
      assert.equal(remove.id, '__remove_all__');
      // The kept messages start with a tool call: the clip-archive is a
      // user turn, and the model is sent it first.
      assert.ok(HumanMessage.isInstance(clip) && clip.text.startsWith('[Context Summary'));
      assert.deepEqual(kept.map((m) => m.id), messages.slice(-kept.length).map((m) => m.id), JSON.stringify(kept.map((m) => m.id)));
      assert.ok(kept.length >= 6 && kept.every((m, i) => m === messages[messages.length - kept.length + i]), 'at least the newest six, the very objects');
      assertToolPairs(kept);
      assert.ok(AIMessage.isInstance(kept[0]) && kept[0].tool_calls?.length, 'the kept messages start with a tool call');
      assert.deepEqual(sent[1].messages, [clip, ...kept], 'the model was sent the clip-archive turn and the kept messages');
      assert.equal(sent[1].systemMessage.text, '', 'the system message is left alone');
      assert.ok(AIMessage.isInstance(await call([clip, ...kept])), 'the replaced list is under the budget');
    } finally {
      await compactor.close();
    }
  });

  test('ahead: true with a trigger: the trigger met compacts at once, far under the budget; the replaced list is then quiet', async () => {
    const compactor = await createCompactor({ wasmPath: wasmPath(), config: { model_max_tokens: 1_000_000 } });
    try {
      const mw = /** @type {any} */ (clipfoldMiddleware({ compactor, ahead: true, trigger: { messages: 30 }, keep: { messages: 6 } }));
      const messages = toolTurns(10);
      const { call, sent } = driver(mw, 'ahead-trigger');
      assert.ok(AIMessage.isInstance(await call(messages.slice(0, 28))), 'under the trigger and the soft threshold: the answer, nothing else');
      const out = await call(messages);
      assert.ok(out instanceof Command, 'the trigger met: compacted at once');
      const [, clip, ...rest] = out.update.messages;
      assert.ok(isArchive(clip) && clip.text.startsWith('[Context Summary'));
      const kept = rest.slice(0, -1);
      assert.ok(kept.length >= 6 && kept.every((m, i) => m === messages[messages.length - kept.length + i]), 'the newest, the very objects');
      assert.deepEqual(sent[1].messages.slice(-kept.length), kept, 'the model was sent the compacted list');
      const next = [clip, ...kept, rest.at(-1), new HumanMessage({ id: 'h-next', content: 'And service-3?' })];
      assert.ok(AIMessage.isInstance(await call(next)), 'the replaced list: under the trigger, nothing to do');
      assert.equal(sent[2].messages.length, next.length);
    } finally {
      await compactor.close();
    }
  });

  test('the same trigger/keep vocabulary as summarizationMiddleware; bad options are TypeErrors', async () => {
    const compactor = await createCompactor({ wasmPath: wasmPath() });
    try {
      const opts = { trigger: [{ tokens: 5000, messages: 3 }, { tokens: 3000, messages: 6 }], keep: { messages: 20 } };
      // Both accept the same options (summarizationMiddleware needs its model).
      assert.equal(summarizationMiddleware({ model: fakeModel(), ...opts }).name, 'SummarizationMiddleware');
      assert.equal(clipfoldMiddleware({ compactor, ...opts }).name, 'ClipfoldMiddleware');
      assert.throws(() => clipfoldMiddleware({ compactor, keep: /** @type {any} */ ({ messages: 2, tokens: 3 }) }), TypeError);
      assert.throws(() => clipfoldMiddleware({ compactor, trigger: { fraction: 0.5 } }), /profile/);
      assert.ok(clipfoldMiddleware({ compactor, trigger: { fraction: 0.5 }, model: { profile: { maxInputTokens: 1000 } } }));
      assert.throws(() => clipfoldMiddleware(/** @type {any} */ ({})), TypeError);
      assert.throws(() => clipfoldMiddleware({ compactor, ahead: /** @type {any} */ ('yes') }), /^ClipfoldError: invalid_input: ahead: must be true or false, got "yes"$/);
      const t = memoryReadTool({ compactor, conversationId: 'none' });
      assert.equal(t.name, 'memory_read');
      assert.match(String(await t.invoke({ query: 'anything' })), /^Nothing matches "anything"\.$/);
    } finally {
      await compactor.close();
    }
  });
});
