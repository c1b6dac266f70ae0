// Compactions racing each other: concurrent calls on one compactor, and
// two compactors (as two processes would) on one SQLite file. A lost race
// is not a failure of summarizing: on one compactor the compactions of a
// conversation take turns and never conflict; across compactors the loser
// gets commit_conflict, which never opens the circuit breaker. Nothing is
// lost either way.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCompactor, MemoryStore, SQLiteStore } from '../src/index.js';
import { requireExports, wasmPath } from './helpers/common.js';
import { makeConversation } from './helpers/conversation.js';

// Small windows so that a compaction is due every few messages; the
// breaker would open after 3 counted failures in a row. Counted as the
// seeds count (chars4): conservatively, a clip-archive alone would fill
// such a window.
const CONFIG = { keep_recent: 4, chunk_size: 40, max_summary_tokens: 60, model_max_tokens: 1200, context_budget: 0.5,
  max_consecutive_failures: 3, backoff_base_ms: 1, token_estimator: 'chars4' };
const WORKERS = 8;
const ROUNDS = 4;
/** How much of the conversation worker i sends in round k: each a little ahead or behind the others. */
const prefix = (/** @type {number} */ i, /** @type {number} */ k) => 14 + 8 * k + (i % 3);

const dir = mkdtempSync(join(tmpdir(), 'clipfold-race-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/**
 * The rows of a table in a store's dump, parsed.
 * @param {{dump(): string}} store
 * @param {string} table
 * @returns {any[]}
 */
function rows(store, table) {
  const out = [];
  let inside = false;
  for (const line of store.dump().split('\n')) {
    if (/^(table|index|trigger|view) \S+: /.test(line)) inside = line.startsWith(`table ${table}: `);
    else if (inside && line.startsWith('  {')) out.push(JSON.parse(line.slice(2)));
  }
  return out;
}

/**
 * The store holds every message of sent once (active or in recall), and
 * no other (clip-archives aside).
 * @param {{dump(): string}} store
 * @param {string} conv
 * @param {any[]} sent
 */
function assertNothingLost(store, conv, sent) {
  const ids = [...rows(store, 'messages'), ...rows(store, 'recall')]
    .filter((r) => r.conversation_id === conv && !String(r.id).startsWith('clip_')).map((r) => String(r.id)).sort();
  assert.deepEqual(ids, sent.map((m) => m.id).sort());
}

/**
 * store, with some methods replaced (the others still called on store).
 * @template {object} S
 * @param {S} store
 * @param {Record<string, Function>} over
 * @returns {S}
 */
function withMethods(store, over) {
  return new Proxy(store, {
    get(target, prop) {
      if (typeof prop === 'string' && Object.hasOwn(over, prop)) return over[prop];
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

/** @param {any[]} results */
function assertTurnsTaken(results) {
  assert.equal(results.length, WORKERS * ROUNDS);
  for (const r of results) {
    assert.equal(r.failed, false, `${r.failure_code}: ${r.failure_message}`);
    assert.equal(r.consecutive_failures, 0);
  }
  assert.ok(results.some((r) => r.messages_compressed > 0), 'no compaction ever ran');
}

describe('racing compactions', () => {
  requireExports('compress');

  for (const callerOwned of [false, true]) {
    test(`calls at once on one compactor take turns (${callerOwned ? 'caller' : 'store'}-owned)`, async () => {
      const store = new MemoryStore();
      const c = await createCompactor({ wasmPath: wasmPath(), store, config: CONFIG });
      try {
        const full = makeConversation('c1', prefix(2, ROUNDS - 1));
        /** @type {any[]} */
        const results = [];
        await Promise.all(Array.from({ length: WORKERS }, async (_, i) => {
          for (let k = 0; k < ROUNDS; k++) {
            results.push(await c.compress('c1', full.slice(0, prefix(i, k)), { onlyIfDue: true, callerOwned }));
          }
        }));
        assertTurnsTaken(results);
        if (!callerOwned) assertNothingLost(store, 'c1', full);
      } finally {
        await c.close();
      }
    });
  }

  test('other conversations go on beside a compaction', async () => {
    /** @type {() => void} */
    let c2Read = () => {};
    const read = new Promise((/** @type {(v: void) => void} */ resolve) => { c2Read = resolve; });
    const inner = new MemoryStore();
    const store = withMethods(inner, {
      activeMessages: (/** @type {string} */ conv) => {
        const out = inner.activeMessages(conv);
        if (conv === 'c2') c2Read();
        return out;
      },
    });
    /** @type {() => void} */
    let inLLM = () => {};
    const entered = new Promise((/** @type {(v: void) => void} */ resolve) => { inLLM = resolve; });
    const llm = async () => {
      inLLM();
      const timeout = new Promise((_, reject) => { setTimeout(() => reject(new Error("c2's compaction waited for c1's to read its history")), 20_000).unref(); });
      await Promise.race([read, timeout]);
      return { content: [{ type: 'text', text: 'Summary: the billing migration moved to Postgres.' }], stop_reason: 'end_turn' };
    };
    const c = await createCompactor({ wasmPath: wasmPath(), store, llm, config: CONFIG });
    try {
      const first = c.compress('c1', makeConversation('c1', 40));
      await entered;
      const second = c.compress('c2', makeConversation('c2', 40));
      for (const r of await Promise.all([first, second])) {
        assert.equal(r.failed, false, `${r.failure_code}: ${r.failure_message}`);
        assert.ok(r.messages_compressed > 0);
      }
    } finally {
      await c.close();
    }
  });

  test('a lost race between compactors on one file is commit_conflict, and never opens the breaker', async () => {
    const db = join(dir, 'lost.db');
    const aStore = new SQLiteStore(db);
    const a = await createCompactor({ wasmPath: wasmPath(), store: aStore, config: CONFIG });
    /** @type {(() => Promise<void>) | null} */
    let before = null;
    const bInner = new SQLiteStore(db);
    const bStore = withMethods(bInner, {
      // memory_list: b has summarized and is about to commit; a commits first.
      list: async (/** @type {any} */ req) => {
        const f = before;
        before = null;
        if (f) await f();
        return bInner.list(req);
      },
    });
    const b = await createCompactor({ wasmPath: wasmPath(), store: bStore, config: CONFIG });
    try {
      const full = makeConversation('c1', 40 + 12 * 10);
      let sent = full;
      for (let k = 0; k < 10; k++) {
        sent = full.slice(0, 40 + 12 * k);
        const mine = sent;
        before = async () => {
          const won = await a.compress('c1', mine);
          assert.equal(won.failed, false, `${won.failure_code}: ${won.failure_message}`);
          assert.ok(won.messages_compressed > 0);
        };
        const r = await b.compress('c1', sent);
        assert.equal(before, null, "b's compaction reached memory_list");
        assert.equal(r.failed, true);
        assert.equal(r.failure_code, 'commit_conflict', `round ${k}: ${r.failure_message}`);
        assert.match(String(r.failure_message), /^another compaction of this conversation won/);
        assert.doesNotMatch(String(r.failure_message), /already stored/);
        assert.equal(r.consecutive_failures, 0, `round ${k}`);
      }
      assertNothingLost(aStore, 'c1', sent);
      // The breaker stayed closed: b compacts as soon as it wins.
      const r = await b.compress('c1', full);
      assert.equal(r.failed, false, `${r.failure_code}: ${r.failure_message}`);
      assertNothingLost(aStore, 'c1', full);
    } finally {
      await Promise.all([a.close(), b.close()]);
      aStore.close();
      bInner.close();
    }
  });

  test('two compactors on one file appending the same new messages at once', async () => {
    const db = join(dir, 'append.db');
    const aStore = new SQLiteStore(db);
    const sent = makeConversation('c1', 40);
    let raced = false;
    const bInner = new SQLiteStore(db);
    const bStore = withMethods(bInner, {
      // a appends most of them just before b's sync appends: the sync is one
      // transaction that skips what the conversation holds (appendNewRecords).
      appendNewRecords: (/** @type {string} */ conv, /** @type {any[]} */ records) => {
        if (!raced) {
          raced = true;
          aStore.append(conv, sent.slice(0, 30));
        }
        const added = bInner.appendNewRecords(conv, records);
        assert.deepEqual(added.map((r) => r.id), sent.slice(30).map((m) => m.id), 'b appends only the rest');
        return added;
      },
    });
    const b = await createCompactor({ wasmPath: wasmPath(), store: bStore, config: CONFIG });
    try {
      const r = await b.compress('c1', sent);
      assert.ok(raced);
      assert.equal(r.failed, false, `${r.failure_code}: ${r.failure_message}`);
      assertNothingLost(aStore, 'c1', sent);
    } finally {
      await b.close();
      aStore.close();
      bInner.close();
    }
  });
});
