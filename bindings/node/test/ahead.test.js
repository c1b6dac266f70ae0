// Compaction ahead of time (compactAhead) and the per-turn count
// (countContext), through the real plug-in, SQLite stores and an
// OpenAI-compatible summarizer on a real node:http server.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import sqlite from 'node-sqlite3-wasm';
import { ClipfoldError, createCompactor, openaiCompatible, SQLiteStore } from '../src/index.js';
import { WARM_WRITES } from '../src/hostfns.js';
import { conversationsDir, requireExports, wasmPath } from './helpers/common.js';
import { summarizer } from './helpers/summarizer.js';

const CONFIG = { keep_recent: 4, max_summary_tokens: 120, model_max_tokens: 3000 };

/** A framework's turn: messages without ids or times, a tool call. @param {number} i */
function turn(i) {
  return [
    { role: 'user', content: `Question ${i}: what did we decide about module ${i} and its retry budget?` },
    { role: 'assistant', content: '', tool_calls: [{ id: `call_${i}`, type: 'function', function: { name: 'search_notes', arguments: `{"module":${i}}` } }] },
    { role: 'tool', tool_call_id: `call_${i}`, content: `notes: module ${i} keeps a retry budget of ${10 + i}; decided on the ${i}th` },
    { role: 'assistant', content: `We agreed module ${i} keeps a retry budget of ${10 + i}; the decision was recorded in the notes.` },
  ];
}

/** A turn whose tool result is a long log: kept whole it would not fit a target. @param {number} i */
function bigTurn(i) {
  const t = turn(i);
  t[2] = { role: 'tool', tool_call_id: `call_${i}`, content: `log line ${i}: retry budget exhausted for module ${i} after 3 attempts\n`.repeat(40) };
  return t;
}

/** @param {unknown} m */
const isClip = (m) => JSON.stringify(m).includes('[Context Summary');

/** @type {string} */
let tmp;
before(() => {
  requireExports('compress', 'shouldCompact', 'estimateTokens');
  tmp = mkdtempSync(join(tmpdir(), 'clipfold-ahead-'));
});
after(() => rmSync(tmp, { recursive: true, force: true }));

/**
 * A compactor summarizing through s, on a store (a SQLite file's path, or ':memory:').
 * @param {{url: string}} s
 * @param {string} [path]
 * @param {object} [config]
 */
async function compactor(s, path = ':memory:', config = CONFIG) {
  const store = new SQLiteStore(path);
  const c = await createCompactor({ wasmPath: wasmPath(), store, llm: openaiCompatible({ baseUrl: s.url, apiKey: 'k', model: 'm' }), config: { ...config } });
  return { c, store, async close() { await c.close(); store.close(); } };
}

/**
 * compactAhead until a prepared compaction is applied or dropped.
 * @param {any} c @param {string} conv @param {any[] | undefined} history @param {object} o
 */
async function untilApplied(c, conv, history, o) {
  await c.aheadSettled();
  const r = await c.compactAhead(conv, history, o);
  assert.ok(r.compaction !== null || r.discarded !== null, 'the finished compaction was neither applied nor dropped');
  return r;
}

/**
 * The ids of a conversation's recalled messages in a SQLite file.
 * @param {string} path @param {string} conv
 * @returns {string[]}
 */
function recalledIds(path, conv) {
  const d = new sqlite.Database(path);
  try {
    return d.all('SELECT id FROM recall WHERE conversation_id = ?', [conv]).map((x) => String(x.id));
  } finally {
    d.close();
  }
}

/** The bundled session's messages. @param {string} name */
const session = (name) => JSON.parse(readFileSync(join(conversationsDir, name), 'utf8'));

describe('countContext', () => {
  for (const config of [undefined, { overhead_tokens: 1234, image_tokens: 900 }]) {
    test(`is shouldCompact's count, paying for new messages only (config ${JSON.stringify(config)})`, async () => {
      const msgs = session('debugging-session.json').slice(0, 400);
      const c = await createCompactor({ wasmPath: wasmPath() });
      try {
        let n = 0;
        let seed = 7;
        const step = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return 1 + (seed % 6); };
        while (n < msgs.length) {
          n = Math.min(msgs.length, n + step());
          const list = msgs.slice(0, n);
          const got = await c.countContext('k', list, { config });
          const want = await c.shouldCompact(list, config);
          assert.deepEqual(got, want, `at ${n}`);
          assert.equal(got.prepare_limit, Math.floor(0.7 * want.limit));
          if (n > 10) {
            for (const k of [n - 3, Math.floor(n / 2), n]) { // a length counted before, or not
              const usage = { input_tokens: 5000 + k, messages: k };
              assert.equal((await c.countContext('k', list, { usage, config })).tokens, (await c.shouldCompact(list, config, usage)).tokens, `${n}, ${k}`);
            }
          }
        }
        // The list replaced, as a compaction does: counted anew.
        const replaced = [{ role: 'system', content: '[Context Summary — 300 messages compressed]' }, ...msgs.slice(300)];
        assert.equal((await c.countContext('k', replaced, { config })).tokens, (await c.shouldCompact(replaced, config)).tokens);
        // A message replaced in place at the end is a new list too.
        const edited = [...replaced.slice(0, -1), { role: 'user', content: 'something else entirely' }];
        assert.equal((await c.countContext('k', edited, { config })).tokens, (await c.shouldCompact(edited, config)).tokens);
        // chars4: one ceiling over the whole list, counted whole.
        const chars4 = { ...config, token_estimator: /** @type {'chars4'} */ ('chars4') };
        assert.deepEqual(await c.countContext('k', edited, { config: chars4 }), await c.shouldCompact(edited, chars4));
        await assert.rejects(c.countContext('k', edited, { usage: { input_tokens: 1, messages: edited.length + 1 } }), /usage\.messages/);
        await assert.rejects(c.countContext(/** @type {any} */ (5), edited), /key/);
        await assert.rejects(c.countContext('k', [/** @type {any} */ ('hi')]), /messages\[0\]/);
      } finally {
        await c.close();
      }
    });
  }

  test('hands the plug-in the new messages alone, at 10,000 messages as at 100', async () => {
    /** @param {number} n */
    const history = (n) => Array.from({ length: n }, (_, i) => (i % 2 === 0
      ? { role: 'user', content: `question ${i}: what is the retry budget of module ${i}?` }
      : { role: 'assistant', content: `Module ${i} keeps a retry budget of ${i + 10}, as decided in the notes of the ${i}th.` }));
    const c = await createCompactor({ wasmPath: wasmPath() });
    /** @type {number[]} */
    const handed = [];
    const real = c.callRaw;
    c.callRaw = (name, input) => {
      if (name === 'estimateTokens') handed.push(typeof input === 'string' ? Buffer.byteLength(input) : input.length);
      return real(name, input);
    };
    /** @type {Record<number, number[]>} */
    const perTurn = {};
    try {
      for (const n of [100, 10_000]) {
        let list = history(n);
        await c.countContext(`flat-${n}`, list);
        handed.length = 0;
        for (let i = 0; i < 30; i++) {
          list = [...list, { role: 'user', content: `and module ${i % 10}?` }];
          const got = await c.countContext(`flat-${n}`, list);
          c.callRaw = real; // shouldCompact's own count is not the one observed
          assert.equal(got.tokens, (await c.shouldCompact(list)).tokens, `${n}, ${i}`);
          c.callRaw = (name, input) => {
            if (name === 'estimateTokens') handed.push(typeof input === 'string' ? Buffer.byteLength(input) : input.length);
            return real(name, input);
          };
        }
        perTurn[n] = [...handed];
      }
    } finally {
      c.callRaw = real;
      await c.close();
    }
    assert.equal(perTurn[100].length, 30);
    assert.deepEqual(perTurn[10_000], perTurn[100]);
    assert.ok(Math.max(...perTurn[100]) < 200, `the new message alone, not the history: ${perTurn[100]}`);
  });

  test('compactIfDue on a caller-owned list (every adapter\'s check) counts the new messages only', async () => {
    /** @param {number} n */
    const history = (n) => Array.from({ length: n }, (_, i) => (i % 2 === 0
      ? { role: 'user', content: `question ${i}: what is the retry budget of module ${i}?` }
      : { role: 'assistant', content: `Module ${i} keeps a retry budget of ${i + 10}.` }));
    const c = await createCompactor({ wasmPath: wasmPath(), config: { model_max_tokens: 1_000_000 } });
    /** @type {number[]} */
    const counted = [];
    const real = c.callRaw;
    c.callRaw = (name, input) => {
      if (name === 'estimateTokens') counted.push(typeof input === 'string' ? Buffer.byteLength(input) : input.length);
      return real(name, input);
    };
    /** @type {Record<number, number[]>} */
    const perTurn = {};
    try {
      for (const n of [100, 2_000]) {
        let list = history(n);
        assert.equal(await c.compactIfDue(`due-${n}`, list, { callerOwned: true }), null);
        counted.length = 0;
        for (let i = 0; i < 20; i++) {
          list = [...list, { role: 'user', content: `and module ${i % 10}?` }];
          assert.equal(await c.compactIfDue(`due-${n}`, list, { callerOwned: true }), null, 'not due: nothing to change');
        }
        perTurn[n] = [...counted];
      }
    } finally {
      c.callRaw = real;
      await c.close();
    }
    assert.equal(perTurn[100].length, 20);
    assert.deepEqual(perTurn[2_000], perTurn[100]);
    // Over the limit it compacts as before.
    const d = await createCompactor({ wasmPath: wasmPath(), config: { model_max_tokens: 3000, keep_recent: 4 } });
    try {
      const list = history(200);
      assert.ok((await d.shouldCompact(list)).due);
      const r = await d.compactIfDue('over', list, { callerOwned: true });
      assert.ok(r !== null && !r.failed && r.messages_compressed > 0 && r.history.length < list.length);
    } finally {
      await d.close();
    }
  });
});

describe('compactAhead', () => {
  for (const resend of [false, true]) {
    test(`prepares in the background and applies on a later call (${resend ? 'the whole list resent' : 'the list returned, appended to'})`, async () => {
      const s = await summarizer({ gated: true });
      const { c, store, close } = await compactor(s, join(tmp, `bg-${resend}.db`));
      try {
        /** @type {any[]} */
        let list = [];
        /** @type {any[]} */
        let everything = [];
        let i = 0;
        /** @type {any} */
        let started = null;
        while (started === null) {
          assert.ok(i < 40, 'never over the soft threshold');
          list = list.concat(turn(i));
          everything = everything.concat(turn(i));
          const r = await c.compactAhead('bg', resend ? everything : list, { callerOwned: true });
          assert.equal(r.compaction, null);
          assert.equal(r.waited_ms, 0);
          list = r.history;
          if (r.started) {
            assert.ok(r.prepare_limit < r.tokens && r.tokens <= r.limit, JSON.stringify(r));
            started = r;
          }
          i++;
        }
        const snapshot = list.length;
        for (let k = 0; k < 2; k++) { // turns go on while the summarizer works
          list = list.concat(turn(i));
          everything = everything.concat(turn(i));
          i++;
          const r = await c.compactAhead('bg', resend ? everything : list, { callerOwned: true });
          assert.ok(r.compaction === null && !r.started && r.tokens <= r.limit && r.waited_ms === 0);
          list = r.history;
        }
        assert.equal(s.answered, 0);
        s.release();
        const r = await untilApplied(c, 'bg', resend ? everything : list, { callerOwned: true });
        assert.equal(r.discarded, null);
        assert.ok(r.prepared && r.waited_ms === 0);
        const comp = /** @type {any} */ (r.compaction);
        assert.ok(!comp.failed && comp.messages_compressed > 0, JSON.stringify(comp));
        assert.ok(isClip(r.history[0]));
        const tail = list.slice(snapshot);
        assert.deepEqual(r.history.slice(-tail.length), tail);
        assert.ok(tail.every((m, k) => r.history[r.history.length - tail.length + k] === m), 'the very objects appended');
        assert.ok(r.tokens < started.tokens);
        assert.ok(recalledIds(join(tmp, `bg-${resend}.db`), 'bg').length >= comp.messages_compressed);
        const next = r.history.concat(turn(i));
        everything = everything.concat(turn(i));
        assert.deepEqual((await c.compactAhead('bg', resend ? everything : next, { callerOwned: true })).history, next);
      } finally {
        s.release();
        await close();
        await s.close();
      }
    });
  }

  test('waits only at the limit, for the rest of the work under way, with no more summarizer calls than compactIfDue', async () => {
    const s = await summarizer({ gated: true });
    const { c, close } = await compactor(s);
    /** @type {any} */
    let r;
    let turns = 0;
    try {
      /** @type {any[]} */
      let list = [];
      let started = false;
      for (let i = 0; i < 60; i++) {
        list = list.concat(turn(i));
        turns = i + 1;
        if (started && (await c.countContext('probe', list)).due) setTimeout(() => s.release(), 300);
        r = await c.compactAhead('limit', list, { callerOwned: true });
        started ||= r.started;
        if (r.compaction !== null) break;
        list = r.history;
      }
      assert.ok(started && r.prepared, JSON.stringify(r));
      assert.ok(r.waited_ms >= 250, `waited ${r.waited_ms} ms: the call at the limit waits for the work under way`);
      assert.ok(r.tokens <= r.limit);
      assert.equal(s.calls, r.compaction.llm_calls);
    } finally {
      s.release();
      await close();
      await s.close();
    }
    // The synchronous path over the same turns: as many summarizer calls, or more.
    const s2 = await summarizer();
    const sync = await compactor(s2);
    try {
      /** @type {any[]} */
      let list = [];
      for (let i = 0; i < turns; i++) {
        list = list.concat(turn(i));
        const res = await sync.c.compactIfDue('limit', list, { callerOwned: true });
        if (res !== null) list = res.history;
      }
      assert.ok(s2.calls >= 1 && r.compaction.llm_calls <= s2.calls, `ahead ${r.compaction.llm_calls}, compactIfDue ${s2.calls}`);
    } finally {
      await sync.close();
      await s2.close();
    }
  });

  /**
   * Turns until a compaction starts in the background; then lets the
   * summarizer answer and waits for the dry run to end.
   * @param {any} c @param {any} s @param {string} conv @param {boolean} callerOwned
   */
  async function prepare(c, s, conv, callerOwned) {
    /** @type {any[]} */
    let list = [];
    for (let i = 0; i < 40; i++) {
      list = list.concat(turn(i));
      const r = await c.compactAhead(conv, callerOwned ? list : turn(i), { callerOwned });
      if (callerOwned) list = r.history;
      if (r.started) {
        s.release();
        await c.aheadSettled();
        return list;
      }
    }
    throw new Error('never over the soft threshold');
  }

  test('starts earlier when the history grows fast: over the limit minus twice the growth, before the soft threshold', async () => {
    const s = await summarizer();
    const { c, close } = await compactor(s, ':memory:', { keep_recent: 2, max_summary_tokens: 120, model_max_tokens: 10000 });
    try {
      const { limit, prepare_limit: prepareLimit } = await c.countContext('limits', []);
      let counted = 0;
      /** @param {any[]} list */
      const count = async (list) => (await c.countContext(`count-${counted++}`, list)).tokens;
      /** A user message of about n tokens. @param {number} i @param {number} n */
      const note = (i, n) => {
        let text = '';
        for (let k = 0; text.length < 4 * n; k++) text += `note ${i} line ${k}: the retry budget of module ${k % 7} stays at ${10 + (k % 5)}. `;
        return { role: 'user', content: text };
      };
      /** @param {any[]} list @param {number} step @param {number} to */
      const grow = async (list, step, to) => {
        const out = list.slice();
        while ((await count(out)) < to) out.push(note(out.length, step));
        return out;
      };
      const goal = prepareLimit - Math.floor(limit / 20);
      let r = await c.compactAhead('fast', await grow([], Math.floor(limit / 10), Math.floor((limit * 35) / 100)), { callerOwned: true });
      assert.equal(r.started, false);
      const before = r.tokens;
      r = await c.compactAhead('fast', await grow(r.history, Math.floor(limit / 50), goal), { callerOwned: true });
      assert.ok(r.tokens < prepareLimit, 'under the soft threshold');
      assert.ok(r.tokens > limit - 2 * (r.tokens - before), 'within twice the growth of the limit');
      assert.equal(r.started, true, 'a compaction starts before the soft threshold');

      /** @type {any[]} */
      let slow = [];
      for (;;) {
        const next = await grow(slow, Math.floor(limit / 50), (await count(slow)) + Math.floor(limit / 50));
        if ((await count(next)) >= r.tokens) break;
        const q = await c.compactAhead('slow', next, { callerOwned: true });
        assert.equal(q.started, false, `at ${q.tokens} of ${limit} tokens, growing by 2%`);
        slow = q.history;
      }
      await c.aheadSettled();
    } finally {
      await close();
      await s.close();
    }
  });

  for (const callerOwned of [true, false]) {
    test(`applies from the plan made in the background: the turn runs the store's SQL only (${callerOwned ? 'caller' : 'store'}-owned)`, async () => {
      const s = await summarizer({ gated: true });
      const db = join(tmp, `plan-${callerOwned}.db`);
      const { c, store, close } = await compactor(s, db);
      /** @type {string[]} */
      const planned = [];
      const own = store.planCommit.bind(store);
      store.planCommit = (/** @type {any} */ req) => { planned.push(typeof req === 'string' ? req : JSON.stringify(req)); return own(req); };
      let warmed = 0;
      const warm = /** @type {any} */ (store)[WARM_WRITES].bind(store);
      /** @type {any} */ (store)[WARM_WRITES] = () => { warmed++; return warm(); };
      try {
        const conv = `plan-${callerOwned}`;
        const list = await prepare(c, s, conv, callerOwned);
        assert.ok(warmed >= 1, 'the store\'s writing code was not warmed when the compaction started');
        planned.length = 0; // warming plans its own commit, on a database of its own
        const r = await c.compactAhead(conv, callerOwned ? list : [], { callerOwned });
        assert.equal(r.discarded, null);
        assert.ok(r.prepared && r.compaction !== null && r.compaction.messages_compressed > 0, JSON.stringify(r.compaction));
        assert.deepEqual(planned, [], 'the applying turn planned the commit itself');
        const batches = store.list({ tier: 'archival', label_prefix: `compaction-batch-${conv}-` }).blocks;
        assert.equal(batches.length, r.compaction.batches_created);
        assert.ok(recalledIds(db, conv).length >= r.compaction.messages_compressed);
        assert.deepEqual(recalledIds(db, 'warm'), [], 'warming wrote to the user\'s store');
        assert.deepEqual(store.list({ tier: 'archival', label_prefix: 'compaction-batch-warm-' }).blocks, []);
        assert.ok(isClip(r.history[0]));
        // What was planned in the background is what an ordinary commit writes: the next
        // compaction (planned by the commit itself) finds the archive consistent.
        const more = r.history.concat(turn(90), turn(91));
        const again = await c.compress(conv, callerOwned ? more : turn(92), { callerOwned });
        assert.ok(!again.failed, again.failure_message ?? '');
        const hits = await store.search('retry budget of module 0', { conversationId: conv });
        assert.ok(hits.some((h) => !h.in_context), 'the archived turns are found');
      } finally {
        s.release();
        await close();
        await s.close();
      }
    });
  }

  test('applies through commit when the store cannot commit from a plan (a store of the user\'s own)', async () => {
    const s = await summarizer({ gated: true });
    const inner = new SQLiteStore(':memory:');
    let commits = 0;
    const store = {
      list: (/** @type {any} */ req) => inner.list(req),
      commit: (/** @type {any} */ req) => { commits++; return inner.commit(req); },
    };
    const c = await createCompactor({ wasmPath: wasmPath(), store, llm: openaiCompatible({ baseUrl: s.url, apiKey: 'k', model: 'm' }), config: { ...CONFIG } });
    try {
      const list = await prepare(c, s, 'own', true);
      assert.equal(commits, 0);
      const r = await c.compactAhead('own', list, { callerOwned: true });
      assert.ok(r.prepared && r.compaction !== null && r.compaction.messages_compressed > 0, JSON.stringify(r));
      assert.equal(commits, 1);
      assert.equal(inner.list({ tier: 'archival', label_prefix: 'compaction-batch-own-' }).blocks.length, r.compaction.batches_created);
    } finally {
      s.release();
      await c.close();
      inner.close();
      await s.close();
    }
  });

  test('drops a compaction the history changed under: a message edited', async () => {
    const s = await summarizer({ gated: true });
    const { c, store, close } = await compactor(s);
    try {
      const list = await prepare(c, s, 'edit', true);
      const edited = [...list];
      edited[2] = { role: 'tool', tool_call_id: 'call_0', content: 'notes: module 0 was dropped' };
      const r = await c.compactAhead('edit', edited, { callerOwned: true });
      assert.equal(r.discarded, 'the history changed under it');
      assert.equal(r.compaction, null);
      assert.deepEqual(r.history, edited);
      assert.deepEqual(store.list({ tier: 'archival', label_prefix: 'compaction-batch-edit-' }).blocks, []);
      assert.ok(r.started, 'still over the soft threshold: prepared again on the history as it is');
    } finally {
      s.release();
      await close();
      await s.close();
    }
  });

  /**
   * Runs fn with two compactors on one SQLite file: `a` summarizing through
   * a gated summarizer (s), `other` through one that answers at once.
   * @param {string} name
   * @param {(p: {s: any, a: any, other: any}) => Promise<void>} fn
   */
  async function twoOnOneFile(name, fn) {
    const db = join(tmp, `${name}.db`);
    const s = await summarizer({ gated: true });
    const s2 = await summarizer();
    const a = await compactor(s, db);
    const other = await compactor(s2, db);
    try {
      await fn({ s, a, other });
    } finally {
      s.release();
      await a.close();
      await other.close();
      await s.close();
      await s2.close();
    }
  }

  test('drops a compaction another one committed before (caller-owned)', () => twoOnOneFile('won', async ({ s, a, other }) => {
    const list = await prepare(a.c, s, 'won', true);
    const res = await other.c.compress('won', list, { callerOwned: true });
    assert.ok(!res.failed, res.failure_message ?? '');
    const r = await a.c.compactAhead('won', list, { callerOwned: true });
    assert.equal(r.discarded, 'another compaction committed first');
    assert.equal(a.store.list({ tier: 'archival', label_prefix: 'compaction-batch-won-' }).blocks.length, res.batches_created);
  }));

  test('drops a compaction another one committed before (store-owned: the store\'s conflict check), nothing lost', () => twoOnOneFile('store', async ({ s, a, other }) => {
    await prepare(a.c, s, 'so', false);
    const before = a.store.activeMessages('so').map((/** @type {any} */ m) => m.id);
    const res = await other.c.compress('so');
    assert.ok(!res.failed, res.failure_message ?? '');
    const r = await a.c.compactAhead('so');
    assert.match(String(r.discarded), /^the history changed under it \(/);
    const after = new Set(a.store.activeMessages('so').map((/** @type {any} */ m) => m.id));
    assert.equal(after.size, res.history.length);
    for (const id of before) assert.ok(after.has(id) || a.store.recall(id, 'so') !== null, `${id} lost`);
    assert.deepEqual(r.history, res.history);
  }));

  for (const callerOwned of [false, true]) {
    test(`keeps what was appended meanwhile after the clip-archive; a cleared tool result replaced in place (${callerOwned ? 'caller' : 'store'}-owned)`, async () => {
      const s = await summarizer({ gated: true });
      const { c, store, close } = await compactor(s, join(tmp, `kept-${callerOwned}.db`), { keep_recent: 6, max_summary_tokens: 120, model_max_tokens: 3000 });
      try {
        /** @type {any[]} */
        let list = [];
        /** @type {any[]} */
        const appended = [];
        let started = false;
        for (let i = 0; i < 40; i++) {
          const next = started ? turn(i) : bigTurn(i);
          if (started) appended.push(...next);
          list = list.concat(next);
          const r = await c.compactAhead('kept', callerOwned ? list : next, { callerOwned });
          list = r.history;
          if (started) break;
          started = r.started;
        }
        assert.ok(started);
        s.release();
        const r = await untilApplied(c, 'kept', callerOwned ? list : undefined, { callerOwned });
        assert.equal(r.discarded, null);
        assert.ok(r.prepared);
        const comp = /** @type {any} */ (r.compaction);
        assert.ok(comp.tool_results_cleared > 0, JSON.stringify(comp));
        assert.ok(isClip(r.history[0]));
        assert.deepEqual(r.history.slice(-appended.length), appended);
        if (callerOwned) {
          assert.equal(store.list({ tier: 'archival', label_prefix: 'compaction-replaced-kept-' }).blocks.length, 1);
          assert.equal(store.activeMessages('kept').length, 0, 'a caller-owned history is not stored');
        } else {
          assert.ok(Array.isArray(comp.commit.replace_messages) && comp.commit.replace_messages.length > 0);
          assert.deepEqual(store.activeMessages('kept').map((/** @type {any} */ m) => JSON.parse(m.raw)), r.history);
        }
      } finally {
        s.release();
        await close();
        await s.close();
      }
    });
  }

  test('concurrent conversations on one compactor each get their compactions, none waits for another\'s', async () => {
    const s = await summarizer({ latencyMs: 50 });
    const { c, store, close } = await compactor(s, join(tmp, 'many.db'));
    try {
      /** @param {string} conv @param {boolean} callerOwned */
      const agent = async (conv, callerOwned) => {
        let applied = 0;
        /** @type {any[]} */
        let list = [];
        for (let i = 0; i < 40; i++) {
          list = list.concat(turn(i));
          const r = await c.compactAhead(conv, callerOwned ? list : turn(i), { callerOwned });
          list = r.history;
          if (r.compaction !== null && !r.compaction.failed) applied++;
          assert.ok(r.tokens <= r.limit, `${conv}: ${r.tokens} > ${r.limit}`);
          await sleep(20);
        }
        return { applied, list };
      };
      const got = await Promise.all([agent('t0', true), agent('t1', true), agent('t2', false), agent('t3', false)]);
      got.forEach((g, k) => assert.ok(g.applied >= 1, `t${k}: no compaction applied`));
      const sent = Array.from({ length: 40 }, (_, i) => turn(i)).flat();
      for (const conv of ['t2', 't3']) {
        const active = new Set(store.activeMessages(conv).map((/** @type {any} */ m) => m.id));
        const recalled = new Set(recalledIds(join(tmp, 'many.db'), conv));
        assert.deepEqual([...active].filter((id) => recalled.has(id)), [], 'a message both active and recalled');
        for (const m of (await c.decodeHistory(conv, sent)).messages) assert.ok(active.has(m.id) || recalled.has(m.id), `${conv}: ${m.id} lost`);
      }
    } finally {
      s.release();
      await close();
      await s.close();
    }
  });

  test('names a bad argument', async () => {
    const c = await createCompactor({ wasmPath: wasmPath() });
    try {
      await assert.rejects(c.compactAhead(''), /conversationId/);
      await assert.rejects(c.compactAhead('x', undefined, { callerOwned: true }), (e) => e instanceof ClipfoldError && /history/.test(e.message));
      await assert.rejects(c.compactAhead('x', /** @type {any} */ ('hi')), /history/);
      await assert.rejects(c.compactAhead('x', [], { targetShare: 2 }), /targetShare/);
      await assert.rejects(c.compactAhead('x', [], { callerOwned: /** @type {any} */ ('yes') }), /callerOwned/);
      await assert.rejects(c.compactAhead('x', [], { usage: /** @type {any} */ ({ input_tokens: -1, messages: 0 }) }), /usage\.input_tokens/);
      await assert.rejects(c.compactAhead('x', [], { now: /** @type {any} */ ({}) }), /now/);
    } finally {
      await c.close();
    }
  });
});

// ------------------------------------------------------------------ kill -9
const src = pathToFileURL(join(import.meta.dirname, '..', 'src', 'index.js')).href;
const CHILD = `
  const [db, url, owner] = process.argv.slice(1);
  const callerOwned = owner === 'caller';
  const { createCompactor, SQLiteStore, openaiCompatible } = await import(${JSON.stringify(src)});
  let input = '';
  for await (const chunk of process.stdin) input += chunk;
  const turns = JSON.parse(input);
  const store = new SQLiteStore(db);
  const c = await createCompactor({ store, llm: openaiCompatible({ baseUrl: url, apiKey: 'k', model: 'm' }), config: ${JSON.stringify(CONFIG)} });
  let list = [];
  for (const t of turns) {
    list = list.concat(t);
    const r = await c.compactAhead('chaos', callerOwned ? list : t, { callerOwned });
    if (callerOwned) list = r.history;
    if (r.started) process.stdout.write('started\\n');
    await new Promise((r) => setTimeout(r, 10));
  }
  process.stdout.write('done\\n');`;

describe('compactAhead killed with a compaction under way', () => {
  for (const callerOwned of [false, true]) {
    test(`loses nothing; a new process compacts on (${callerOwned ? 'caller' : 'store'}-owned)`, async () => {
      const db = join(tmp, `chaos-${callerOwned}.db`);
      const s = await summarizer({ latencyMs: 400 });
      /** @type {any[]} */
      const sent = [];
      let seed = 3;
      try {
        for (let round = 0; round < 3; round++) {
          const turns = Array.from({ length: 20 }, (_, k) => turn(20 * round + k));
          sent.push(...turns.flat());
          const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD, '--', db, s.url, callerOwned ? 'caller' : 'store'],
            { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, CLIPFOLD_WASM: wasmPath() } });
          let out = '';
          let err = '';
          child.stderr.on('data', (b) => { err += b; });
          const exited = new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
          const startedLine = new Promise((resolve) => {
            child.stdout.on('data', (b) => { out += b; if (out.includes('started\n') || out.includes('done\n')) resolve(null); });
            child.on('close', () => resolve(null));
          });
          child.stdin.end(JSON.stringify(turns));
          await startedLine;
          assert.ok(out.startsWith('started\n'), `round ${round}: ${out} ${err}`);
          seed = (seed * 1103515245 + 12345) % 2147483648;
          await sleep(seed % 600); // while the summarizer works, or as it answers
          child.kill('SIGKILL');
          const { signal } = /** @type {any} */ (await exited);
          assert.equal(signal, 'SIGKILL', `round ${round}: the child ended before it was killed: ${err}`);
          new SQLiteStore(db).close(); // the next store opens it: a killed process's lock taken over
          const d = new sqlite.Database(db);
          try {
            assert.deepEqual(d.all('PRAGMA integrity_check').map((x) => x.integrity_check), ['ok']);
            const active = d.all("SELECT id FROM messages WHERE conversation_id = 'chaos'").map((x) => String(x.id));
            const recalled = new Set(d.all("SELECT id FROM recall WHERE conversation_id = 'chaos'").map((x) => String(x.id)));
            assert.deepEqual(active.filter((id) => recalled.has(id)), [], 'a message both active and recalled');
            if (!callerOwned) {
              // Each process stores its turns in order until it is killed:
              // of every round's messages, those stored are a prefix.
              const c = await createCompactor({ wasmPath: wasmPath() });
              const ids = (await c.decodeHistory('chaos', sent)).messages.map((m) => m.id);
              await c.close();
              const stored = new Set([...active, ...recalled]);
              for (let k = 0; k <= round; k++) {
                const mine = ids.slice(80 * k, 80 * k + 80);
                const kept = mine.filter((id) => stored.has(id));
                assert.deepEqual(kept, mine.slice(0, kept.length), `round ${k}: the stored messages are a prefix of what was sent`);
                assert.ok(kept.length >= 4, `round ${k}: the call that started a compaction stored its turn`);
              }
            }
          } finally {
            d.close();
          }
        }
      } finally {
        await s.close();
      }
      // A new process completes a compaction on the same file.
      const s2 = await summarizer();
      const { c, close } = await compactor(s2, db);
      try {
        const list = sent.concat(Array.from({ length: 20 }, (_, k) => turn(60 + k)).flat());
        const r = await c.compress('chaos', list, { callerOwned });
        assert.ok(!r.failed, r.failure_message ?? '');
        assert.ok(r.messages_compressed > 0);
      } finally {
        await close();
        await s2.close();
      }
    });
  }
});

describe('chunks with a model summarizing', () => {
  test('compress sizes chunks to what one request holds (max_chunk_tokens "auto") unless chunk_size is set', async () => {
    const msgs = JSON.parse(readFileSync(join(conversationsDir, 'debugging-session.json'), 'utf8'));
    const conv = msgs[0].conversation_id;
    const s = await summarizer();
    try {
      const a = await compactor(s, ':memory:', {});
      const r = await a.c.compress(conv, msgs);
      await a.close();
      assert.ok(!r.failed && r.messages_compressed === msgs.length - 6, JSON.stringify(r.failure_message));
      assert.equal(r.llm_calls, 1, 'the 884-message session in one summarization request');
      assert.equal(s.calls, 1);
      const b = await compactor(s, ':memory:', { chunk_size: 20 });
      const r2 = await b.c.compress(conv, msgs);
      await b.close();
      assert.ok(!r2.failed && r2.llm_calls > 40, `chunk_size 20: ${r2.llm_calls} calls`);
    } finally {
      await s.close();
    }
  });
});
