// The crash and concurrency suite of the Node host, as the Go one
// (internal/chaos): child Node processes compact a growing prefix of the
// bundled debugging session into one SQLite file through the public API
// (createCompactor with a SQLiteStore), killed with SIGKILL at random
// instants, or run eight at once. After every kill and every round the
// archive is checked as a user relies on it: the next store opens it (a
// killed process's lock taken over, its journal played back), the
// database is intact, every message of the conversation is active or
// recalled (never both, never lost), every recalled message is covered by
// an archived batch, and the next compaction and a search work.
// $CHAOS_ROUNDS raises the number of kills and rounds (default: a run fit
// for CI — fewer than Go's: a Node process spends most of a second
// compiling the plug-in before it compacts). The mixed round (Go, Python and Node on one file) is
// bindings/python/tests/test_chaos.py.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import sqlite from 'node-sqlite3-wasm';
import { createCompactor, SQLiteStore } from '../src/index.js';
import { conversationsDir, requireExports, wasmPath } from './helpers/common.js';

const CONV = 'conv-checkout-inc-4471';
const QUESTION = 'what was the root cause of the incident?';
const OUTCOMES = ['compacted', 'nothing to do', 'lost the race'];
const src = pathToFileURL(join(import.meta.dirname, '..', 'src', 'index.js')).href;

const CHILD = `
  const [db, file] = process.argv.slice(1);
  const { createCompactor, SQLiteStore } = await import(${JSON.stringify(src)});
  const { readFileSync } = await import('node:fs');
  const msgs = JSON.parse(readFileSync(file, 'utf8'));
  const store = new SQLiteStore(db);
  const c = await createCompactor({ store, config: { keep_recent: 4 } });
  process.stdout.write('ready\\n');
  const r = await c.compress(msgs[0].conversation_id, msgs);
  await c.close();
  store.close();
  console.log(JSON.stringify({ failed: r.failed, failure_code: r.failure_code, failure_message: r.failure_message,
    messages_compressed: r.messages_compressed }));`;

/** $CHAOS_ROUNDS, else def. @param {number} def */
function rounds(def) {
  const n = Number.parseInt(process.env.CHAOS_ROUNDS ?? '', 10);
  return n > 0 ? n : def;
}

/** @type {string} */
let tmp;
/** @type {any[]} */
let raw;
/** @type {string[]} */
let ids;
before(() => {
  requireExports('compress', 'searchQuery');
  tmp = mkdtempSync(join(tmpdir(), 'clipfold-chaos-'));
  raw = JSON.parse(readFileSync(join(conversationsDir, 'debugging-session.json'), 'utf8'));
  ids = raw.map((m) => String(m.id));
  assert.ok(ids.every(Boolean) && raw.every((m) => m.conversation_id === CONV));
});
after(() => { if (tmp) rmSync(tmp, { recursive: true, force: true }); });

/** The first k messages in a file of their own. @param {number} k */
function prefix(k) {
  const p = join(tmp, `conv-${k}.json`);
  if (!existsSync(p)) writeFileSync(p, JSON.stringify(raw.slice(0, k)));
  return p;
}

/**
 * A child compacting file into db: its exit (signal or code) and output.
 * @param {string} db
 * @param {string} file
 */
function run(db, file) {
  const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD, '--', db, file],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, CLIPFOLD_WASM: wasmPath() } });
  let out = '';
  let err = '';
  child.stdout.on('data', (b) => { out += b; });
  child.stderr.on('data', (b) => { err += b; });
  /** @type {Promise<{signal: string | null, code: number | null, out: string, err: string}>} */
  const done = new Promise((resolve) => { child.on('close', (code, signal) => resolve({ signal, code, out, err })); });
  /** Resolves once the child has opened its store and loaded the plug-in (or ended). @type {Promise<void>} */
  const ready = new Promise((resolve) => {
    child.stdout.on('data', () => { if (out.startsWith('ready\n')) resolve(); });
    child.on('close', () => resolve());
  });
  return { child, done, ready };
}

/**
 * What a run did: compacted, nothing to do, lost the race — or what else it said.
 * @param {{code: number | null, out: string, err: string}} r
 */
function outcome(r) {
  let res;
  try {
    res = JSON.parse(r.out.trim().split('\n').at(-1) ?? '');
  } catch {
    return `error (exit ${r.code}): ${r.err.slice(-2000)}`;
  }
  if (!res.failed) return res.messages_compressed > 0 ? 'compacted' : 'nothing to do';
  if (res.failure_code === 'commit_conflict' && /another compaction/.test(res.failure_message ?? '')) return 'lost the race';
  return `${res.failure_code}: ${res.failure_message}`;
}

/**
 * What a user relies on after any crash; returns how many of the
 * session's messages the archive holds (active or recalled). The next
 * store opens the file first, as the next process would: a killed
 * process's lock is taken over and its journal played back. Appending is
 * all or nothing, so the archive holds one of the prefixes given so far.
 * @param {string} path
 * @param {number[]} prefixes
 */
function check(path, prefixes) {
  new SQLiteStore(path).close();
  const db = new sqlite.Database(path);
  /** @type {{id: string, role: string, content: string}[][]} */
  let tables;
  try {
    assert.deepEqual(db.all('PRAGMA integrity_check').map((r) => r.integrity_check), ['ok'], 'SQLite integrity check');
    db.run("INSERT INTO search_fts (search_fts) VALUES ('integrity-check')"); // the index matches its tables
    tables = ['SELECT id, role, content FROM messages WHERE conversation_id = ? ORDER BY seq',
      'SELECT id, role, content FROM recall WHERE conversation_id = ? ORDER BY pos',
      'SELECT id, tier AS role, content FROM blocks WHERE conversation_id = ?']
      .map((q) => /** @type {any[]} */ (db.all(q, [CONV])));
  } finally {
    db.close();
  }
  const [active, recalled, blocks] = tables;
  const covered = new Set();
  for (const b of blocks) {
    const meta = JSON.parse(b.content.split('\n')[0]);
    assert.equal(meta.conversation_id, CONV, b.id);
    for (const id of meta.source_message_ids ?? []) covered.add(id);
  }
  const clipArchive = (/** @type {{role: string, content: string}} */ r) => r.role === 'system' && r.content.startsWith('[Context Summary');
  const order = new Map(ids.map((id, i) => [id, i]));
  /** @type {Map<string, string>} */
  const held = new Map();
  let last = -1;
  active.forEach((r, i) => {
    if (clipArchive(r)) {
      assert.equal(i, 0, 'the clip-archive leads the active history');
      return;
    }
    assert.ok(!held.has(r.id), `message ${r.id} is active twice`);
    held.set(r.id, 'active');
    const pos = order.get(r.id);
    assert.ok(pos !== undefined, `active message ${r.id} is not one of the conversation's`);
    assert.ok(pos > last, `active messages keep the conversation's order (${r.id})`);
    last = pos;
  });
  for (const r of recalled) {
    if (clipArchive(r)) continue;
    assert.ok(!held.has(r.id), `message ${r.id} is both ${held.get(r.id)} and recalled`);
    held.set(r.id, 'recall');
    assert.ok(covered.has(r.id), `recalled message ${r.id} is covered by an archived batch`);
  }
  const n = held.size;
  for (const id of ids.slice(0, n)) assert.ok(held.has(id), `message ${id} is lost: the archive holds ${n} messages but not this one`);
  assert.ok(n === 0 || prefixes.includes(n), `the archive holds ${n} messages, not one of the appended prefixes ${prefixes}`);
  return n;
}

/** Search finds the session's root cause (a missing tx.Rollback) in the top five. @param {string} path */
async function rootCauseFound(path) {
  const store = new SQLiteStore(path);
  const c = await createCompactor({ wasmPath: wasmPath(), store });
  try {
    const hits = await c.search(QUESTION, { conversationId: CONV, limit: 5 });
    assert.ok(hits.length > 0, 'search found nothing');
    assert.ok(hits.slice(0, 5).some((h) => h.text.includes('Rollback')),
      `the root cause is not in the top five hits: ${JSON.stringify(hits.map((h) => h.text.slice(0, 80)))}`);
  } finally {
    await c.close();
    store.close();
  }
}

describe('chaos', () => {
  test('children killed at random instants leave the archive whole; the next run completes it', async () => {
    const db = join(tmp, 'killed.db');
    const n = rounds(8);
    /** @type {number[]} */
    const prefixes = [];
    let killed = 0;
    let stored = 0;
    let held = 0;
    /** @type {number | null} */
    let span = null;
    for (let i = 0; i < n; i++) {
      const k = Math.min(raw.length, 120 + Math.floor((i * (raw.length - 120)) / n));
      prefixes.push(k);
      const { child, done, ready } = run(db, prefix(k));
      await ready;
      const started = performance.now();
      // Kill instants are drawn up to a little past how long the last run
      // left alone took to compact, from its store opened and plug-in
      // loaded; every fourth run is left alone to measure it as the
      // prefix grows.
      if (span !== null && i % 4 !== 0) {
        await sleep(Math.random() * span);
        child.kill('SIGKILL');
      }
      const r = await done;
      if (r.signal === 'SIGKILL') {
        killed++;
      } else {
        assert.equal(r.code, 0, `an unkilled run succeeds: ${r.err}`);
        assert.ok(OUTCOMES.slice(0, 2).includes(outcome(r)), outcome(r));
        span = (performance.now() - started) * 1.1;
      }
      const now = check(db, prefixes);
      if (r.signal === 'SIGKILL' && now > held) stored++; // killed after its sync had stored the prefix
      held = now;
    }
    console.log(`node: ${killed} of ${n} runs killed mid-way, ${stored} of them after storing the new messages (kill instants up to ${Math.round(span ?? 0)} ms)`);
    assert.ok(killed > 0, 'no run was killed: the suite tested nothing');
    const r = await run(db, prefix(raw.length)).done;
    assert.ok(OUTCOMES.slice(0, 2).includes(outcome(r)), outcome(r));
    assert.equal(check(db, [...prefixes, raw.length]), raw.length, 'every message is held');
    await rootCauseFound(db);
  });

  test('eight processes at once: each compacts, finds nothing to do, or loses the race — nothing else', async () => {
    const db = join(tmp, 'concurrent.db');
    const n = rounds(2);
    /** @type {number[]} */
    const prefixes = [];
    /** @type {Record<string, number>} */
    const outcomes = {};
    for (let i = 0; i < n; i++) {
      const k = Math.min(raw.length, 200 + Math.floor(((i + 1) * (raw.length - 200)) / n));
      prefixes.push(k);
      const file = prefix(k);
      const results = (await Promise.all(Array.from({ length: 8 }, () => run(db, file).done))).map(outcome);
      for (const r of results) outcomes[r] = (outcomes[r] ?? 0) + 1;
      assert.ok(results.every((r) => OUTCOMES.includes(r)), JSON.stringify(results));
      assert.equal(check(db, prefixes), k, `round ${i}: every message is held`);
    }
    console.log(`node: 8 processes x ${n} rounds: ${JSON.stringify(outcomes)}`);
    assert.ok((outcomes.compacted ?? 0) > 0, 'some process compacted');
    await rootCauseFound(db);
  });
});
