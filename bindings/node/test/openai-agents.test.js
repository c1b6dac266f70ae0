// clipfold/openai-agents end to end against the real OpenAI Agents SDK for
// JavaScript (`@openai/agents`, pinned in package-lock.json): an Agent
// with a tool and the memory_read tool, run turn after turn with a
// ClipfoldSession and its callModelInputFilter, driven by a fake Model (the
// SDK's Model interface, no network) through 55 turns with tool calls, and
// again with compaction ahead of time (`ahead: true`), the summaries written
// by an OpenAI-compatible summarizer on a real node:http server.
// Every request the model receives is checked: its size counted by the
// plug-in, function call pairs, a user turn first.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, MemorySession, Usage, run, tool } from '@openai/agents';
import { z } from 'zod';
import { createCompactor, MemoryStore } from '../src/index.js';
import { ClipfoldSession, memoryReadTool, toResponsesItem, toolSchemas } from '../src/openai-agents.js';
import { CONTINUATION } from '../src/stepview.js';
import { watchedAhead } from './helpers/ahead.js';
import { wasmPath } from './helpers/common.js';

const CONFIG = { model_max_tokens: 4000, context_budget: 0.5, keep_recent: 4, chunk_size: 8, max_summary_tokens: 150 };
const LIMIT = CONFIG.model_max_tokens * CONFIG.context_budget;
// Ahead of time a compaction is prepared to a lower target (less the distance between the thresholds and the growth
// meanwhile: docs/spec.md#compaction-ahead-of-time): a window of 4,000 leaves it room for the clip-archive and the
// newest items (at 2,000 the target is under what they need, and the prepared compactions fail).
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

/** The text of an item. @param {any} i */
const text = (i) => (typeof i.content === 'string' ? i.content : Array.isArray(i.content) ? i.content.map((/** @type {any} */ p) => p.text ?? '').join('') : '');

/**
 * A fake Model of the SDK playing a tool-using agent: to a question about
 * a service it calls lookup_service, then answers; asked for the codename
 * it calls memory_read, then answers with what it returned. It reports as
 * its usage the plug-in's count of the request (the provider's count).
 * @param {Awaited<ReturnType<typeof createCompactor>>} compactor
 * @param {{input: any[], instructions: string, tokens: number}[]} requests every request it received, counted
 * @param {() => Promise<void>} [onCall] runs first at each call
 * @returns {import('@openai/agents').Model}
 */
function agentModel(compactor, requests, onCall) {
  let calls = 0;
  return {
    async getResponse(req) {
      await onCall?.();
      const input = structuredClone(/** @type {any[]} */ (req.input));
      const instructions = req.systemInstructions ?? '';
      const tokens = (await compactor.estimateTokens(input.map(toResponsesItem), CONFIG)).tokens
        + await compactor.overheadTokens({ system: instructions, tools: toolSchemas(req.tools), config: CONFIG });
      requests.push({ input, instructions, tokens });
      const usage = new Usage({ requests: 1, inputTokens: tokens, outputTokens: 10, totalTokens: tokens + 10 });
      const lastUser = input.findLastIndex((i) => i.role === 'user');
      const question = text(input[lastUser]);
      const results = input.slice(lastUser + 1).filter((i) => i.type === 'function_call_result');
      const call = (/** @type {string} */ name, /** @type {object} */ args) => ({
        usage, output: [{ type: 'function_call', callId: `call_${++calls}`, name, arguments: JSON.stringify(args), status: 'completed' }],
      });
      const say = (/** @type {string} */ t) => ({ usage, output: [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: t }] }] });
      if (question.startsWith('Remember')) return /** @type {any} */ (say('Noted.'));
      if (/codename/.test(question)) {
        if (results.length === 0) return /** @type {any} */ (call('memory_read', { query: 'What is the staging cluster codename?', id: null, limit: null }));
        const out = results[0].output;
        return /** @type {any} */ (say(`From memory: ${typeof out === 'string' ? out : out.text}`));
      }
      const svc = /service-\d+/.exec(question)?.[0] ?? 'service-0';
      if (results.length === 0) return /** @type {any} */ (call('lookup_service', { name: svc }));
      return /** @type {any} */ (say(`${svc} is documented above.`));
    },
    // eslint-disable-next-line require-yield
    async *getStreamedResponse() { throw new Error('the test runs without streaming'); },
  };
}

/**
 * Every function call result answers a function call earlier in the same
 * input, and every function call has its result.
 * @param {any[]} input
 */
function assertToolPairs(input) {
  const calls = new Set();
  const answered = new Set();
  for (const i of input) {
    if (i.type === 'function_call') calls.add(i.callId);
    if (i.type === 'function_call_result') {
      assert.ok(calls.has(i.callId), `function call result ${i.callId} without its call`);
      answered.add(i.callId);
    }
  }
  for (const id of calls) assert.ok(answered.has(id), `function call ${id} without its result`);
}

describe('clipfold/openai-agents with the real OpenAI Agents SDK', () => {
  for (const ahead of [false, true]) test(`${TURNS} turns with tool calls${ahead ? ', compacted ahead of time' : ''}: every request within the window, tool pairs intact, a summary, a user turn first, the first turn's fact found by memory_read, nothing lost`, async () => {
    const store = new MemoryStore();
    const config = ahead ? AHEAD_CONFIG : CONFIG;
    const limit = config.model_max_tokens * config.context_budget;
    // Ahead of time: summarized by a summarizer on a node:http server, held until the model is called meanwhile.
    const watch = ahead ? await watchedAhead({ store, config }) : null;
    const compactor = watch?.compactor ?? await createCompactor({ wasmPath: wasmPath(), store, config });
    try {
      /** @type {{input: any[], instructions: string, tokens: number}[]} */
      const requests = [];
      /** @type {import('../src/index.js').CompactionResult[]} */
      const compactions = [];
      /** @type {any[]} every item the runner stored, in order */
      const added = [];
      const inner = new MemorySession({ sessionId: 'chat-1' });
      /** @type {import('@openai/agents').Session} the stored session, recording what the runner adds */
      const recorder = {
        getSessionId: () => inner.getSessionId(),
        getItems: (limit) => inner.getItems(limit),
        addItems: (items) => {
          if (!items.some((i) => text(i).startsWith('[Context Summary'))) added.push(...structuredClone(items));
          return inner.addItems(items);
        },
        popItem: () => inner.popItem(),
        clearSession: () => inner.clearSession(),
      };
      const session = new ClipfoldSession({ compactor, sessionId: 'chat-1', session: recorder, ahead, onCompact: (r) => compactions.push(r) });
      const lookup = tool({
        name: 'lookup_service', description: 'Facts about a service', parameters: z.object({ name: z.string() }),
        execute: async ({ name }) => serviceDoc(name),
      });
      const agent = new Agent({
        name: 'ops', instructions: INSTRUCTIONS, model: agentModel(compactor, requests, watch?.modelCall),
        tools: [lookup, memoryReadTool({ compactor, session, maxTokens: 300 })],
      });
      let last = '';
      for (let i = 0; i < TURNS; i++) {
        const q = i === 0 ? `Remember this: ${FACT}.` : i === TURNS - 1 ? 'What was the staging cluster codename I gave you at the start?'
          : `What port does service-${i} use, and who owns it?`;
        const r = await run(agent, q, { session, callModelInputFilter: session.callModelInputFilter, maxTurns: 5 });
        last = String(r.finalOutput);
      }

      // Compactions happened, none failed.
      const done = compactions.filter((r) => !r.failed && r.messages_compressed > 0);
      assert.ok(done.length >= 3, `${done.length} compactions`);
      assert.deepEqual(compactions.filter((r) => r.failed).map((r) => r.failure_message), [], 'no failed compaction');
      assert.ok(requests.length >= 2 * TURNS - 2, `${requests.length} model calls`);
      // Ahead of time: started in the background, the model called meanwhile, applied later, written by the summarizer.
      const aheadStats = watch?.check();
      if (watch) assert.ok(done.every((r) => r.batches.every((b) => b.method === 'llm')), 'every summary by the summarizer');

      // Every request: within the window, function call pairs intact, a user turn first, the instructions first.
      for (const [i, { input, instructions, tokens }] of requests.entries()) {
        assert.ok(tokens <= limit, `request ${i}: ${tokens} tokens > ${limit}`);
        assertToolPairs(input);
        const first = input.find((m) => m.role !== 'system');
        assert.equal(first?.role, 'user', `request ${i} starts with ${first?.type ?? first?.role}`);
        assert.ok(instructions.startsWith(INSTRUCTIONS), `request ${i}: the instructions stay first`);
        assert.ok(!input.some((m) => text(m).startsWith('[Context Summary')), 'the clip-archive is in the instructions, not the input');
      }
      const summarized = requests.filter((r) => r.instructions.includes('[Context Summary'));
      assert.ok(summarized.length >= TURNS, `${summarized.length} requests carried the clip-archive`);
      assert.ok(requests.some((r) => text(r.input.find((m) => m.role !== 'system')) === CONTINUATION),
        'some compaction kept a tail that starts with a function call: a user turn was put in front');

      // The session holds the compacted history: the clip-archive first, far fewer items than were added.
      const stored = await session.getItems();
      assert.match(text(stored[0]), /^\[Context Summary/);
      assert.equal(stored.find((m) => /** @type {any} */ (m).role !== 'system')?.role, 'user');
      assert.ok(stored.length < added.length / 4, `${stored.length} items stored of ${added.length}`);
      assert.ok(!added.some((i) => JSON.stringify(i) === JSON.stringify({ type: 'message', role: 'user', content: CONTINUATION })),
        'the user turn put in front of a call is not stored as the user\'s');

      // The first turn's fact: out of the model's view at the end, found by memory_read.
      const asked = requests.at(-2)?.input ?? [];
      assert.ok(!asked.some((m) => text(m).includes('BLUE-OTTER-7')), 'the fact is no longer in the items');
      assert.match(last, /^From memory: .*BLUE-OTTER-7/s, last);

      // Nothing lost: every item the runner stored is in the session or in recall storage, once.
      const wire = added.map(toResponsesItem);
      const { messages: decoded } = await compactor.decodeHistory('chat-1', wire, { shape: 'responses' });
      const kept = new Set(stored.map((m) => JSON.stringify(m)));
      let recalled = 0;
      decoded.forEach((d, i) => {
        if (kept.has(JSON.stringify(added[i]))) return;
        recalled++;
        assert.equal(store.recall(d.id, 'chat-1')?.raw, JSON.stringify(wire[i]), `lost: ${JSON.stringify(added[i]).slice(0, 200)}`);
      });
      assert.ok(recalled > TURNS, `${recalled} items recalled`);
      console.log(`${requests.length} model calls, the longest ${Math.max(...requests.map((r) => r.tokens))} tokens (limit ${limit}); `
        + `${done.length} compactions; ${added.length} items added, ${stored.length} stored, ${recalled} in recall`
        + `${aheadStats ? `; ahead: ${JSON.stringify(aheadStats)}` : ''}`);
    } finally {
      await (watch ?? compactor).close();
      store.close();
    }
  });

  test('not due: the input is left as it is; the items the plug-in cannot pair otherwise are renamed; bad options are TypeErrors', async () => {
    const compactor = await createCompactor({ wasmPath: wasmPath(), config: CONFIG });
    try {
      const session = new ClipfoldSession({ compactor, sessionId: 'quiet' });
      const modelData = { input: [{ type: 'message', role: 'user', content: 'hi' }], instructions: INSTRUCTIONS };
      assert.equal(await session.callModelInputFilter(/** @type {any} */ ({ modelData })), modelData);
      await session.addItems(/** @type {any} */ (modelData.input));
      assert.deepEqual(await session.getItems(), modelData.input);
      assert.deepEqual(toResponsesItem(/** @type {any} */ ({ type: 'function_call_result', name: 'f', callId: 'c1', status: 'completed', output: { type: 'text', text: 'ok' } })),
        { type: 'function_call_output', call_id: 'c1', output: 'ok' });
      assert.deepEqual(toResponsesItem(/** @type {any} */ ({ type: 'function_call', callId: 'c1', name: 'f', arguments: '{}', status: 'completed' })),
        { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' });
      assert.throws(() => new ClipfoldSession(/** @type {any} */ ({})), /compactor/);
      assert.throws(() => new ClipfoldSession(/** @type {any} */ ({ compactor, sessionId: '' })), /sessionId/);
      assert.throws(() => new ClipfoldSession(/** @type {any} */ ({ compactor, session: {} })), /session/);
      assert.throws(() => new ClipfoldSession({ compactor, ahead: /** @type {any} */ ('yes') }), /^ClipfoldError: invalid_input: ahead: must be true or false, got "yes"$/);
      assert.throws(() => memoryReadTool(/** @type {any} */ ({})), /compactor/);
      assert.throws(() => memoryReadTool(/** @type {any} */ ({ compactor, session: new MemorySession() })), /ClipfoldSession/);
      const t = memoryReadTool({ compactor, session });
      assert.match(String(await t.invoke(/** @type {any} */ ({ context: {} }), JSON.stringify({ query: 'anything at all', id: null, limit: null }))),
        /^Nothing matches "anything at all"\.$/);
    } finally {
      await compactor.close();
    }
  });
});
