// Who owns the history (docs/spec.md#who-owns-the-history): frameworks keep their messages (no ids,
// no times) and either replace their list with the compacted one or send
// all of it every turn. Both work, store-owned or caller-owned, with no
// duplicate, no no_gain and no commit_conflict — as the Go host's
// TestCompressFrameworkPatterns and the Python host's test_owner.py.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createCompactor, MemoryStore, ClipfoldError } from '../src/index.js';
import { archiveRole, requireExports, wasmPath } from './helpers/common.js';

// The seeds' token arithmetic (chars4): these tests are about who owns the
// list. Counted conservatively, the clip-archive's four dated batch headers
// alone (about 45 tokens each) leave a 600-token window no room.
const FRAMEWORK_CONFIG = { keep_recent: 4, chunk_size: 8, max_summary_tokens: 80, model_max_tokens: 1200, context_budget: 0.5,
  token_estimator: 'chars4' };

/** A turn as frameworks keep it: OpenAI Chat messages without ids or times. @param {number} i */
export function frameworkTurn(i) {
  return [
    { role: 'user', content: `Question ${i}: what did we decide about module ${i} and its retry budget?` },
    { role: 'assistant', content: null, tool_calls: [{ id: `call_${i}`, type: 'function', function: { name: 'search_notes', arguments: JSON.stringify({ module: i }) } }] },
    { role: 'tool', tool_call_id: `call_${i}`, content: `notes: module ${i} keeps a retry budget of ${10 + i}; decided on the ${i}th` },
    { role: 'assistant', content: `We agreed module ${i} keeps a retry budget of ${10 + i}; the decision was recorded in the notes.` },
  ];
}

/** @param {number} i */
function anthropicTurn(i) {
  const chat = frameworkTurn(i);
  return [
    { role: 'user', content: chat[0].content },
    { role: 'assistant', content: [{ type: 'tool_use', id: `tu_${i}`, name: 'search_notes', input: { module: i } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: `tu_${i}`, content: chat[2].content }] },
    { role: 'assistant', content: [{ type: 'text', text: chat[3].content }] },
  ];
}

/** @param {number} i */
function responsesTurn(i) {
  const chat = frameworkTurn(i);
  return [
    { type: 'message', role: 'user', content: chat[0].content },
    { type: 'function_call', call_id: `fc_${i}`, name: 'search_notes', arguments: JSON.stringify({ module: i }) },
    { type: 'function_call_output', call_id: `fc_${i}`, output: chat[2].content },
    { type: 'message', role: 'assistant', content: chat[3].content },
  ];
}

/**
 * Every tool result answers a call of an earlier message of the same list
 * (the request a provider would accept), in the Chat, Anthropic and
 * Responses shapes.
 * @param {any[]} history
 */
function assertToolPairs(history) {
  const calls = new Set();
  for (const m of history) {
    for (const c of m.tool_calls ?? []) calls.add(c.id);
    if (m.type === 'function_call') calls.add(m.call_id);
    if (m.type === 'function_call_output') assert.ok(calls.has(m.call_id), `output without its call: ${JSON.stringify(m)}`);
    if (m.role === 'tool') assert.ok(calls.has(m.tool_call_id), `tool result without its call: ${JSON.stringify(m)}`);
    if (Array.isArray(m.content)) {
      for (const b of m.content) {
        if (b.type === 'tool_use') calls.add(b.id);
        if (b.type === 'tool_result') assert.ok(calls.has(b.tool_use_id), `tool_result without its tool_use: ${JSON.stringify(m)}`);
      }
    }
  }
}

/**
 * The recall rows of a store (from its dump: each row a JSON line; recall
 * rows are the ones with removed_at).
 * @param {MemoryStore} store
 * @returns {any[]}
 */
function recallRows(store) {
  return store.dump().split('\n').filter((l) => l.startsWith('  {')).map((l) => JSON.parse(l.slice(2)))
    .filter((r) => Object.hasOwn(r, 'removed_at') && Object.hasOwn(r, 'raw'));
}

describe('who owns the history', () => {
  before(() => requireExports('decodeHistory', 'compress'));

  for (const [callerOwned, replace] of [[false, true], [false, false], [true, true], [true, false]]) {
    const label = `${callerOwned ? 'caller' : 'store'}-owned, ${replace ? 'list replaced' : 'whole list every turn'}`;
    test(`${label}: compacts, no duplicate, no no_gain, tool pairs intact, nothing lost`, async () => {
      const store = new MemoryStore();
      const c = await createCompactor({ wasmPath: wasmPath(), store, config: FRAMEWORK_CONFIG });
      try {
        /** @type {any[]} */
        let list = [];
        /** @type {any[]} */
        const everything = [];
        /** @type {any} */
        let last = null;
        let compactions = 0;
        for (let turn = 0; turn < 20; turn++) {
          list = [...list, ...frameworkTurn(turn)];
          everything.push(...frameworkTurn(turn));
          const r = await c.compress('fw', list, { callerOwned, onlyIfDue: true });
          assert.equal(r.failed, false, `turn ${turn}: ${r.failure_code} ${r.failure_message}`);
          assertToolPairs(r.history);
          if (r.messages_compressed > 0) {
            compactions++;
            assert.ok(r.clip_archive?.startsWith('[Context Summary'));
            assert.deepEqual(r.history[0], { role: 'system', content: r.clip_archive }, 'plain Chat messages get a plain system message, nothing added');
          }
          if (callerOwned && !replace) {
            // The same list sent again gives the same view, and writes nothing.
            const before = store.dump();
            const again = await c.compress('fw', list, { callerOwned: true, onlyIfDue: true });
            assert.deepEqual(again.history, r.history);
            assert.equal(again.messages_compressed, 0);
            assert.equal(store.dump(), before);
          }
          if (replace) list = r.history;
          last = r;
        }
        assert.ok(compactions >= 3, `${compactions} compactions`);
        assert.ok(last.history.length < everything.length / 2, 'the history sent back is compacted');
        // Nothing lost, nothing twice: every message is in the history
        // returned last or, once, in recall storage.
        const { messages: decoded } = await c.decodeHistory('fw', everything);
        const returned = new Set(last.history.map((/** @type {any} */ m) => JSON.stringify(m)));
        let removed = 0;
        decoded.forEach((d, i) => {
          if (returned.has(JSON.stringify(everything[i]))) return;
          removed++;
          assert.deepEqual(store.recall(d.id)?.message, everything[i], `lost: ${JSON.stringify(everything[i])}`);
        });
        assert.equal(recallRows(store).filter((r) => r.role !== 'system').length, removed, 'each removed message is in recall once');
        if (callerOwned) assert.deepEqual(store.activeMessages('fw'), [], 'a caller-owned list is not stored');
        else if (replace) assert.deepEqual(store.history('fw'), list);
        assert.ok((await c.search('retry budget of module 3', { conversationId: 'fw' })).length > 0);
      } finally {
        await c.close();
        store.close();
      }
    });
  }

  test('a caller-owned compaction needs the list', async () => {
    const c = await createCompactor({ wasmPath: wasmPath() });
    try {
      await assert.rejects(c.compress('fw', undefined, { callerOwned: true }), (/** @type {any} */ e) => e instanceof ClipfoldError && e.field === 'history');
      await assert.rejects(c.compress('fw', [], { callerOwned: /** @type {any} */ ('yes') }), (/** @type {any} */ e) => e instanceof ClipfoldError && e.field === 'callerOwned');
    } finally {
      await c.close();
    }
  });

  test('messages come back as given: nothing added, the clip-archive the only new message', async () => {
    const c = await createCompactor({ wasmPath: wasmPath(), config: { ...FRAMEWORK_CONFIG, keep_recent: 3 } });
    try {
      const msgs = Array.from({ length: 6 }, (_, i) => frameworkTurn(i)).flat();
      /** @type {any} */ (msgs[0]).x_custom = { kept: [1, 2.5, 'é'] };
      for (const callerOwned of [false, true]) {
        const r = await c.compress(`given-${callerOwned}`, msgs, { callerOwned });
        assert.ok(!r.failed && r.messages_compressed > 0, JSON.stringify(r).slice(0, 400));
        assert.deepEqual(r.history.slice(1), msgs.slice(msgs.length - r.history.length + 1));
        const start = msgs.length - r.history.length + 1;
        assert.ok(r.history.slice(1).every((m, k) => m === msgs[start + k]), 'the very objects given come back');
        // A system message, or the user turn first when the kept messages start with another.
        assert.deepEqual(r.history[0], { role: archiveRole(r.history.slice(1)), content: r.clip_archive });
      }
    } finally {
      await c.close();
    }
  });

  test('the store-owned list is stored under the decodeHistory ids; no manual append, no ids needed', async () => {
    const store = new MemoryStore();
    const c = await createCompactor({ wasmPath: wasmPath(), store, config: FRAMEWORK_CONFIG });
    try {
      const msgs = [frameworkTurn(0), frameworkTurn(1)].flat();
      const r = await c.compress('ids', msgs, { onlyIfDue: true });
      assert.equal(r.failed, false);
      assert.equal(r.messages_compressed, 0, 'not due');
      assert.deepEqual(r.history, msgs);
      const { messages } = await c.decodeHistory('ids', msgs);
      assert.deepEqual(store.activeMessages('ids').map((m) => m.id), messages.map((m) => m.id));
      assert.ok(messages.every((m) => m.id.startsWith('d_')), 'derived ids');
      assert.deepEqual(store.history('ids'), msgs);
    } finally {
      await c.close();
      store.close();
    }
  });

  for (const [shape, turn] of /** @type {const} */ ([['anthropic', anthropicTurn], ['responses', responsesTurn]])) {
    test(`${shape}: caller-owned, whole list every turn — tool units whole, the clip-archive in the shape's form, each removed message in recall once`, async () => {
      const store = new MemoryStore();
      const c = await createCompactor({ wasmPath: wasmPath(), store, config: FRAMEWORK_CONFIG });
      try {
        /** @type {any[]} */
        const list = [];
        let compacted = 0;
        for (let i = 0; i < 20; i++) {
          list.push(...turn(i));
          const r = await c.compress('s', list, { callerOwned: true, onlyIfDue: true });
          assert.equal(r.failed, false, `${i}: ${r.failure_code} ${r.failure_message}`);
          compacted += r.messages_compressed;
          if (r.clip_archive != null) {
            assert.deepEqual(r.history[0], shape === 'anthropic'
              ? { role: 'user', content: r.clip_archive } : { type: 'message', role: 'system', content: r.clip_archive });
          }
          assertToolPairs(r.history);
        }
        assert.ok(compacted > 0);
        // Superseded clip-archives stay in recall for provenance; every
        // other recalled row is one removed message, once.
        assert.equal(recallRows(store).filter((r) => r.conversation_id === 's' && !String(r.content).startsWith('[Context Summary')).length, compacted);
      } finally {
        await c.close();
        store.close();
      }
    });
  }
});

describe('SQLiteStore commit: history_owner caller, insert_raw', () => {
  const insert = { id: 'clip_1', role: 'system', content: '[Context Summary — 2 messages compressed]' };
  /** @param {string} id @param {string} text */
  const write = (id, text) => ({ id, role: 'user', content: text, created_at: '2026-03-01T09:00:00Z', search_text: text,
    message: { type: 'human', content: text } });

  test('recall writes are idempotent, the active history untouched, only archive_deletes conflict', async () => {
    const s = new MemoryStore();
    try {
      const commit = (/** @type {any} */ extra) => s.commit({
        conversation_id: 'c1', operation_id: 'op1', history_owner: 'caller', insert_message: insert,
        archive_writes: [{ label: 'compaction-batch-c1-x', content: 'summary of the wombat plan', tier: 'archival' }],
        recall_writes: [write('d_1', 'the wombat plan'), write('d_2', 'more wombat notes'), write('d_1', 'repeated: the first wins')], ...extra,
      });
      assert.deepEqual(commit({}), { ok: true });
      assert.deepEqual(commit({}), { ok: true }, 'the same removed messages again: written once, no conflict');
      assert.equal(recallRows(s).length, 2);
      assert.deepEqual(s.recall('d_1')?.message, { type: 'human', content: 'the wombat plan' });
      assert.deepEqual(s.activeMessages('c1'), [], 'nothing joins an active history');
      assert.ok((await s.search('wombat')).some((h) => h.id === 'd_2'));
      assert.throws(() => commit({ archive_deletes: ['blk_gone'] }), (/** @type {any} */ e) => e.code === 'conflict');
      assert.throws(() => commit({ remove_message_ids: ['d_1'] }), (/** @type {any} */ e) => e.code === 'invalid_request' && /remove_message_ids: must be empty/.test(e.message));
      const refused = s.dump();
      assert.throws(() => commit({ archive_deletes: ['blk_gone'], recall_writes: [write('d_3', 'x')] }), (/** @type {any} */ e) => e.code === 'conflict');
      assert.equal(s.dump(), refused, 'a refused commit changes nothing');
      // Another conversation's message of the same id is another message.
      assert.deepEqual(s.commit({ conversation_id: 'c2', operation_id: 'op2', history_owner: 'caller', insert_message: insert,
        recall_writes: [write('d_1', 'another conversation')] }), { ok: true });
      assert.equal(recallRows(s).length, 3);
      assert.deepEqual(s.recall('d_1', 'c2')?.message, { type: 'human', content: 'another conversation' });
      assert.deepEqual(s.recall('d_1', 'c1')?.message, { type: 'human', content: 'the wombat plan' });
      assert.throws(() => commit({ history_owner: 'someone' }), /history_owner/);
      assert.throws(() => commit({ recall_writes: [{ ...write('d_9', 'x'), role: 'robot' }] }), /recall_writes\[0\]\.role/);
    } finally {
      s.close();
    }
  });

  test('a store-owned commit stores the clip-archive as insert_raw (the history\'s shape)', () => {
    const s = new MemoryStore();
    try {
      s.append('c1', [{ id: 'm1', role: 'user', content: 'a' }, { id: 'm2', role: 'user', content: 'b' }]);
      const raw = { role: 'user', content: insert.content };
      s.commit({ conversation_id: 'c1', operation_id: 'op1', remove_message_ids: ['m1'], insert_message: insert, insert_raw: raw });
      assert.deepEqual(s.history('c1'), [raw, { id: 'm2', role: 'user', content: 'b' }]);
      assert.deepEqual(s.activeMessages('c1').map((m) => m.id), ['clip_1', 'm2']);
    } finally {
      s.close();
    }
  });
});
