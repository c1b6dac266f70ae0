// After a compaction the history fits
// (docs/spec.md#counting-tokens-and-the-window): tool results cleared (clear_tool_results, and the window
// guarantee), a message larger than the window middle-truncated, pinned
// overflow refused with over_window — through the real plug-in and SQLite.
// The Node store applies a commit's replace_messages as the Go and Python
// stores do (hostfuncs/store/SCHEMA.md, "The commit"); caller-owned lists
// get the replacements back in their view every turn, with no duplicate
// recall row. As the Go harness's window tests and test_replace.py.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createCompactor, MemoryStore, SQLiteStore } from '../src/index.js';
import { requireExports, wasmPath } from './helpers/common.js';

const CLEARED = '[tool result cleared: read_log; full output in recall storage as "t1" (memory_read)]';

/** @param {number} i */
function logOutput(i) {
  const lines = [];
  for (let j = 0; j < 40; j++) {
    lines.push(`2026-03-0${1 + (i % 9)} 10:${String(j % 60).padStart(2, '0')}:${String((i * j) % 60).padStart(2, '0')} worker-${i} shard=${j} retry=${j % 5} status=degraded latency_ms=${100 + 7 * j}`);
  }
  return lines.join(' ');
}

/** An agent reading logs: OpenAI Chat messages without ids, a long tool output. @param {number} i */
function toolTurn(i) {
  return [
    { role: 'user', content: `Turn ${i}: what does shard ${i} say?` },
    { role: 'assistant', content: null, tool_calls: [{ id: `call_${i}`, type: 'function', function: { name: i % 2 === 0 ? 'read_logs' : 'grep_logs', arguments: JSON.stringify({ shard: i }) } }] },
    { role: 'tool', tool_call_id: `call_${i}`, content: logOutput(i) },
    { role: 'assistant', content: `Shard ${i} is degraded; retries climb.` },
  ];
}

/** Every tool message answers a call of an earlier message. @param {any[]} history */
function assertToolPairs(history) {
  const calls = new Set();
  for (const m of history) {
    for (const c of m.tool_calls ?? []) calls.add(c.id);
    if (m.role === 'tool') assert.ok(calls.has(m.tool_call_id), `tool result without its call: ${JSON.stringify(m)}`);
  }
}

const storeMessages = () => [
  { id: 'u1', role: 'user', content: 'read the deployment log please' },
  { id: 'a1', role: 'assistant', content: 'reading it' },
  { id: 't1', role: 'tool', content: 'the deployment log: kestrel-cluster rollout stalled at 73 percent' },
  { id: 'u2', role: 'user', content: 'thanks' },
];

describe('the store replaces messages in place', () => {
  for (const newId of ['t1', 'd_t1cleared']) {
    test(`${newId === 't1' ? 'own id kept' : 'a new id'}: original to recall, replacement in its place, held ids not appended`, () => {
      const s = new SQLiteStore();
      try {
        s.append('c1', storeMessages());
        const msg = newId === 't1' ? { id: 't1', role: 'tool', content: CLEARED } : { role: 'tool', content: CLEARED };
        s.commit({ conversation_id: 'c1', operation_id: 'op1', insert_message: null,
          replace_messages: [{ id: 't1', new_id: newId, role: 'tool', content: CLEARED, message: msg }],
          search_text: { t1: 'the deployment log: kestrel-cluster rollout stalled at 73 percent' } });
        assert.deepEqual(s.history('c1'), [storeMessages()[0], storeMessages()[1], msg, storeMessages()[3]]);
        assert.deepEqual(s.recall('t1', 'c1')?.message, storeMessages()[2], 'the original is in recall, exact');
        const hits = s.searchFts5('"kestrel" OR "stalled"', { conversationId: 'c1' });
        assert.ok(hits.some((h) => h.id === 't1' && h.text.includes('kestrel')), JSON.stringify(hits));
        assert.deepEqual(s.appendNew('c1', [storeMessages()[2]]), [], 'the original id is held');
        assert.deepEqual(s.appendNew('c1', [{ id: newId, role: 'tool', content: CLEARED }]), [], 'the replacement id is held');
        // A later compaction removes the replacement: the original stays.
        s.commit({ conversation_id: 'c1', operation_id: 'op2', remove_message_ids: ['u1', 'a1', newId],
          insert_message: { id: 'ca1', role: 'system', content: '[Context Summary — 3 messages]' }, search_text: { [newId]: '' } });
        assert.deepEqual(s.activeMessages('c1').map((m) => m.id), ['ca1', 'u2']);
        assert.deepEqual(s.recall('t1', 'c1')?.message, storeMessages()[2], 'the original, not its replacement');
      } finally {
        s.close();
      }
    });
  }

  test('refusals change nothing', () => {
    const s = new SQLiteStore();
    try {
      s.append('c1', storeMessages());
      s.commit({ conversation_id: 'c1', operation_id: 'op0', remove_message_ids: ['u1'],
        insert_message: { id: 'ca0', role: 'system', content: '[Context Summary]' } });
      /** @param {Record<string, unknown>} kw */
      const rep = (kw = {}) => ({ id: 't1', new_id: 't1', role: 'tool', content: CLEARED, message: { role: 'tool', content: CLEARED }, ...kw });
      for (const [extra, code, word] of /** @type {[Record<string, unknown>, string, string][]} */ ([
        [{ replace_messages: [rep({ id: 'u1' })] }, 'conflict', 'u1'],
        [{ replace_messages: [rep({ new_id: 'u2' })] }, 'invalid_request', 'u2'],
        [{ replace_messages: [rep()], history_owner: 'caller' }, 'invalid_request', 'replace_messages: must be empty'],
        [{ replace_messages: [rep({ message: 'x' })] }, 'invalid_request', 'message'],
        [{ replace_messages: [rep()], remove_message_ids: ['t1'] }, 'invalid_request', 'removed or replaced twice'],
      ])) {
        const before = s.dump();
        assert.throws(() => s.commit(/** @type {any} */ ({ conversation_id: 'c1', operation_id: 'op1', insert_message: null, ...extra })),
          (/** @type {any} */ e) => e.code === code && e.message.includes(word));
        assert.equal(s.dump(), before, 'nothing changed');
      }
    } finally {
      s.close();
    }
  });
});

describe('compaction fits the window', () => {
  before(() => requireExports('compress', 'decodeHistory'));

  test('clearing alone: no LLM call, originals in recall, placeholders name them, clear_exclude_tools respected', async () => {
    const turns = Array.from({ length: 8 }, (_, i) => toolTurn(i)).flat();
    const store = new MemoryStore();
    const c = await createCompactor({ wasmPath: wasmPath(), store });
    try {
      const { tokens: full } = await c.estimateTokens(turns);
      const cfg = { clear_tool_results: 2, model_max_tokens: Math.floor(Math.floor(full * 10 / 8) * 6 / 10) };
      const r = await c.compress('logs', turns, { config: cfg });
      assert.equal(r.failed, false, r.failure_message ?? '');
      assert.equal(r.llm_calls, 0);
      assert.equal(r.messages_compressed, 0);
      assert.equal(r.clip_archive, null);
      assert.equal(r.tool_results_cleared, 6);
      assert.ok(r.tokens_estimate_after <= cfg.model_max_tokens * 0.8);
      assertToolPairs(r.history);
      const { messages: ids } = await c.decodeHistory('logs', turns);
      ids.forEach((d, i) => {
        if (JSON.stringify(r.history[i]) === JSON.stringify(turns[i])) return;
        assert.ok(r.history[i].content.startsWith('[tool result cleared: '));
        assert.ok(r.history[i].content.includes(`"${d.id}"`));
        assert.deepEqual(store.recall(d.id, 'logs')?.message, turns[i], 'the original is in recall');
      });
      assert.deepEqual(store.history('logs'), r.history, "the store's active history is what was returned");

      const excl = await c.compress('logs2', turns, { config: { ...cfg, clear_exclude_tools: ['read_logs'], model_max_tokens: Math.floor(full * 10 / 8) - 40 } });
      assert.equal(excl.failed, false, excl.failure_message ?? '');
      assert.equal(excl.tool_results_cleared, 3);
      const texts = excl.history.map((/** @type {any} */ m) => String(m.content ?? ''));
      assert.ok(texts.some((t) => t.startsWith('[tool result cleared: grep_logs')));
      assert.ok(!texts.some((t) => t.startsWith('[tool result cleared: read_logs')), 'clear_exclude_tools are never cleared');
    } finally {
      await c.close();
      store.close();
    }
  });

  for (const [callerOwned, replace] of [[false, true], [false, false], [true, true], [true, false]]) {
    test(`${callerOwned ? 'caller' : 'store'}-owned, ${replace ? 'list replaced' : 'whole list every turn'}: cleared turn after turn, within the window, nothing lost or twice`, async () => {
      const store = new MemoryStore();
      const c = await createCompactor({ wasmPath: wasmPath(), store, config: { keep_recent: 8, chunk_size: 8, model_max_tokens: 5000, clear_tool_results: 2 } });
      try {
        /** @type {any[]} */
        let list = [];
        /** @type {any[]} */
        const everything = [];
        /** @type {any} */
        let last = null;
        let cleared = 0;
        for (let turn = 0; turn < 16; turn++) {
          list = [...list, ...toolTurn(turn)];
          everything.push(...toolTurn(turn));
          const r = await c.compress('fw', list, { callerOwned, onlyIfDue: true });
          assert.equal(r.failed, false, `turn ${turn}: ${r.failure_code} ${r.failure_message}`);
          assertToolPairs(r.history);
          assert.ok(r.tokens_estimate_after <= 4000, `turn ${turn}: ${r.tokens_estimate_after}`);
          cleared += r.tool_results_cleared;
          if (callerOwned && !replace) {
            const before = store.dump();
            const again = await c.compress('fw', list, { callerOwned: true, onlyIfDue: true });
            assert.deepEqual(again.history, r.history, 'the view re-renders the replacements');
            assert.equal(again.tool_results_cleared, 0);
            assert.equal(store.dump(), before, 'the same list writes nothing');
          }
          if (replace) list = r.history;
          last = r;
        }
        assert.ok(cleared > 0);
        const { messages: decoded } = await c.decodeHistory('fw', everything);
        const returned = new Set(last.history.map((/** @type {any} */ m) => JSON.stringify(m)));
        decoded.forEach((d, i) => {
          if (returned.has(JSON.stringify(everything[i]))) return;
          assert.deepEqual(store.recall(d.id, 'fw')?.message, everything[i], `lost: ${JSON.stringify(everything[i])}`);
        });
      } finally {
        await c.close();
        store.close();
      }
    });
  }

  test('a single message larger than the window is middle-truncated; pinned overflow is over_window and changes nothing', async () => {
    const msgs = Array.from({ length: 3 }, (_, i) => toolTurn(i)).flat();
    const huge = { id: 'paste', role: 'user', content: `Here is the whole dump: ${logOutput(9).repeat(40)}` };
    const store = new MemoryStore();
    const c = await createCompactor({ wasmPath: wasmPath(), store });
    try {
      const r = await c.compress('huge', [...msgs, huge], { config: { target_tokens: 3000 } });
      assert.equal(r.failed, false, r.failure_message ?? '');
      assert.equal(r.messages_truncated, 1);
      assert.ok(r.tokens_estimate_after <= 3000);
      const lastMsg = r.history[r.history.length - 1];
      assert.ok(lastMsg.content.includes('characters omitted; the full text is in recall storage as "paste"'));
      assert.ok(lastMsg.content.startsWith('Here is the whole dump: '));
      assert.deepEqual(store.recall('paste', 'huge')?.message, huge);

      const pinned = [{ role: 'system', content: `Rules: ${logOutput(1).repeat(20)}` }, ...msgs];
      const p = await c.compress('pinned', pinned, { config: { target_tokens: 2000 } });
      assert.equal(p.failed, true);
      assert.equal(p.failure_code, 'over_window');
      assert.ok(p.failure_message?.includes('pinned messages'));
      assert.deepEqual(p.history, pinned);
      assert.deepEqual(store.history('pinned'), pinned, 'nothing changed');
    } finally {
      await c.close();
      store.close();
    }
  });
});
