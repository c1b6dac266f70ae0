// The store's file under real storage failures: an I/O error (a file-size
// limit, as a full disk gives) reaches the caller as what it is, leaves no
// hot journal behind, and the next call works once the cause is gone; a
// journal left by a process that died mid-write is rolled back on open.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import sqlite from 'node-sqlite3-wasm';
import { SQLiteStore } from '../src/index.js';
import { wasmPath } from './helpers/common.js';
import { makeConversation } from './helpers/conversation.js';

const src = pathToFileURL(join(import.meta.dirname, '..', 'src', 'index.js')).href;

/** @type {string} */
let tmp;
before(() => { tmp = mkdtempSync(join(tmpdir(), 'clipfold-storage-')); });
after(() => { if (tmp) rmSync(tmp, { recursive: true, force: true }); });

/**
 * Runs an ES module in a child Node process; returns the JSON it prints
 * last. The child must exit with status 0, or die of `signal` when given.
 * @param {{code: string, args: string[], signal?: NodeJS.Signals}} o
 */
function child({ code, args, signal }) {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', code, '--', ...args],
    { encoding: 'utf8', timeout: 300_000, env: { ...process.env, CLIPFOLD_WASM: wasmPath() } });
  if (signal) assert.equal(r.signal, signal, `child process: ${r.error ?? ''}\n${r.stderr}`);
  else assert.equal(r.status, 0, `child process: ${r.error ?? ''}\n${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '');
}

/**
 * The file's integrity check and the given query's rows, read by a
 * connection of its own.
 * @param {string} path
 * @param {string} sql
 */
function inspect(path, sql) {
  const db = new sqlite.Database(path);
  try {
    return { integrity: db.all('PRAGMA integrity_check').map((r) => r.integrity_check), rows: db.all(sql) };
  } finally {
    db.close();
  }
}

describe('storage failures', () => {
  test('an I/O error reaches the caller, no journal stays, and the next call works once the cause is gone', () => {
    const path = join(tmp, 'limited.db');
    const history = makeConversation('c1', 40);
    // RLIMIT_FSIZE is per process: the child sets it on itself (prlimit),
    // with SIGXFSZ handled so that a write past it fails with EFBIG (the
    // disk I/O error SQLite reports) instead of killing the process.
    const out = child({
      code: `
      import { execFileSync } from 'node:child_process';
      import { existsSync, statSync } from 'node:fs';
      import { createCompactor, SQLiteStore } from ${JSON.stringify(src)};
      process.on('SIGXFSZ', () => {});
      const [path, history] = [process.argv[1], JSON.parse(process.argv[2])];
      const limit = (n) => execFileSync('prlimit', ['--pid', String(process.pid), '--fsize=' + n + ':']);
      const lift = () => limit('unlimited');
      const attempt = (fn) => { try { fn(); return 'ok'; } catch (err) { return String(err?.message ?? err); } };
      const out = {};
      const store = new SQLiteStore(path);
      store.append('small', [{ id: 's0', role: 'user', content: 'kept before the failure' }]);
      const big = Array.from({ length: 1500 }, (_, i) => ({ id: 'b' + i, role: 'user', content: 'x'.repeat(2000) + i }));
      const size = statSync(path).size;
      limit(size + 65536);
      out.appendFirst = attempt(() => store.append('big', big));
      out.journalAfter = existsSync(path + '-journal');
      out.sizeAfter = statSync(path).size === size;
      out.readAfter = attempt(() => { out.small = store.historyRaw('small').length; });
      lift();
      out.appendSecond = attempt(() => store.append('big', big));
      out.big = store.historyRaw('big').length;

      const c = await createCompactor({ store, config: { keep_recent: 6, chunk_size: 10 } });
      store.append('c1', history);
      limit(statSync(path).size);
      let r = await c.compress('c1');
      out.compressFirst = [r.failed, r.failure_code, r.failure_message];
      out.journalAfterCommit = existsSync(path + '-journal');
      lift();
      r = await c.compress('c1');
      out.compressSecond = [r.failed, r.messages_compressed];
      out.active = store.activeMessages('c1').map((m) => m.id);
      out.recalled = history.map((m) => m.id).filter((id) => store.recall(id) !== null);
      await c.close();
      store.close();
      console.log(JSON.stringify(out));
    `,
      args: [path, JSON.stringify(history)],
    });
    // The append past the limit: SQLite's error; the file is put back at
    // once (no journal, the same size), and reads work.
    assert.equal(out.appendFirst, 'disk I/O error', JSON.stringify(out));
    assert.equal(out.journalAfter, false, 'a hot journal was left behind');
    assert.equal(out.sizeAfter, true);
    assert.equal(out.readAfter, 'ok');
    assert.equal(out.small, 1);
    assert.equal(out.appendSecond, 'ok');
    assert.equal(out.big, 1500);
    // The commit past the limit: a failed compaction naming the I/O error.
    const [failed, code, message] = out.compressFirst;
    assert.equal(failed, true, JSON.stringify(out));
    assert.ok(code, JSON.stringify(out));
    assert.match(message, /disk I\/O error/);
    assert.equal(out.journalAfterCommit, false);
    // Once the limit is lifted: compacted, every message active or in recall.
    assert.deepEqual(out.compressSecond.map((x) => (typeof x === 'number' ? x > 0 : x)), [false, true], JSON.stringify(out));
    const ids = history.map((m) => m.id);
    assert.deepEqual([...new Set([...out.active.filter((id) => ids.includes(id)), ...out.recalled])].sort(), [...ids].sort());
    assert.equal(out.active.filter((id) => out.recalled.includes(id)).length, 0);
    const { integrity, rows } = inspect(path, "SELECT content FROM messages WHERE id = 's0'");
    assert.deepEqual(integrity, ['ok']);
    assert.deepEqual(rows, [{ content: 'kept before the failure' }]);
  });

  test('a journal left by a process that died in the middle of a write is rolled back on open', () => {
    const path = join(tmp, 'died.db');
    const store = new SQLiteStore(path);
    const history = makeConversation('c1', 200);
    store.append('c1', history);
    const before = store.historyRaw('c1');
    store.close();
    const file = readFileSync(path);
    // A writer with a small page cache spills changed pages into the file
    // before it commits, then dies: the file is half-written, its journal
    // holds the pages as they were.
    child({
      code: `
      import sqlite from 'node-sqlite3-wasm';
      const db = new sqlite.Database(process.argv[1]);
      db.exec('PRAGMA cache_size = 10');
      db.exec('BEGIN IMMEDIATE');
      db.run("UPDATE messages SET content = 'overwritten', raw = '{}'");
      console.log(JSON.stringify({ ok: true }));
      process.kill(process.pid, 'SIGKILL');
    `,
      args: [path],
      signal: 'SIGKILL',
    });
    assert.ok(existsSync(`${path}-journal`), 'the writer left no journal: the case is not set up');
    // node-sqlite3-wasm's lock, a directory, outlives a killed process (a
    // POSIX lock would not): removing the stale one is the operator's part.
    rmSync(`${path}.lock`, { recursive: true });
    assert.notDeepEqual(readFileSync(path), file, 'the writer changed nothing in the file: the case is not set up');
    const again = new SQLiteStore(path);
    try {
      assert.deepEqual(again.historyRaw('c1'), before);
      assert.equal(existsSync(`${path}-journal`), false);
      again.append('c1', [{ id: 'after', role: 'user', content: 'written after the recovery' }]);
    } finally {
      again.close();
    }
    const { integrity, rows } = inspect(path, "SELECT count(*) AS n FROM messages WHERE content = 'overwritten'");
    assert.deepEqual(integrity, ['ok']);
    assert.deepEqual(rows, [{ n: 0 }]);
  });
});
