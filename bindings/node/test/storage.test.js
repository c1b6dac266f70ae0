// The store's file under real storage conditions: an I/O error (a
// file-size limit, as a full disk gives) reaches the caller as what it is,
// leaves no hot journal behind, and the next call works once the cause is
// gone; a journal left by a process that died mid-write is rolled back on
// open; an archive the user cannot write is read (readOnly) without
// migrating or writing anything.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import {
  chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import sqlite from 'node-sqlite3-wasm';
import { createCompactor, HostError, SQLiteStore, sqlDir } from '../src/index.js';
import { loadMigrations } from '../src/paths.js';
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
 * `cannotWrite`: the child is held to file modes (root runs it without
 * the capabilities that let it write any file: setpriv).
 * @param {{code: string, args: string[], signal?: NodeJS.Signals, cannotWrite?: boolean}} o
 */
function child({ code, args, signal, cannotWrite }) {
  const node = [process.execPath, '--input-type=module', '-e', code, '--', ...args];
  const argv = cannotWrite && process.getuid?.() === 0 ? ['setpriv', '--bounding-set=-dac_override,-dac_read_search', ...node] : node;
  const r = spawnSync(argv[0], argv.slice(1), { encoding: 'utf8', timeout: 300_000, env: { ...process.env, CLIPFOLD_WASM: wasmPath() } });
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

/**
 * A writer with a small page cache spills changed pages into the file
 * before it commits, then dies: the file is half-written, its journal
 * holds the pages as they were.
 * @param {string} path
 */
function dieMidWrite(path) {
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
  // node-sqlite3-wasm used alone leaves its lock directory without the
  // owner record the store writes (test/lockdir.test.js), which the store
  // takes over only once it is a minute old: removed here.
  rmSync(`${path}.lock`, { recursive: true });
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
      import sqlite from ${JSON.stringify(import.meta.resolve('node-sqlite3-wasm'))};
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
      // The pages the search index's merges freed would hold the commit (the
      // messages it moves to recall are indexed again where they were
      // active): vacuumed, the file has none, and the commit must grow it.
      { const d = new sqlite.Database(path); d.exec('VACUUM'); d.close(); }
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
    dieMidWrite(path);
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

/**
 * Each file of the directory and its content's hash.
 * @param {string} dir
 */
function snapshot(dir) {
  return Object.fromEntries(readdirSync(dir).sort().map((f) => [f, createHash('sha256').update(readFileSync(join(dir, f))).digest('hex')]));
}

/**
 * The directory and its files made read-only by their modes.
 * @param {string} dir
 */
function makeReadOnly(dir) {
  for (const f of readdirSync(dir)) chmodSync(join(dir, f), 0o444);
  chmodSync(dir, 0o555);
}

// Reads the archive in a process that cannot write its file or directory.
const READER = `
  import { writeFileSync } from 'node:fs';
  import { dirname, join } from 'node:path';
  import { SQLiteStore } from ${JSON.stringify(src)};
  const [path, want] = [process.argv[1], JSON.parse(process.argv[2])];
  const attempt = (fn) => { try { return fn() ?? 'ok'; } catch (err) { return 'error: ' + String(err?.message ?? err); } };
  const out = {};
  out.probe = attempt(() => writeFileSync(join(dirname(path), 'probe'), 'x'));
  out.writableOpen = attempt(() => new SQLiteStore(path).close());
  try {
    const s = new SQLiteStore(path, { readOnly: true });
    out.hits = s.searchFts5(want.fts5, { conversationId: want.conversation }).map((h) => h.id);
    out.recalled = s.recall(want.recalled)?.raw;
    out.read = s.read(want.recalled)?.kind;
    out.block = s.read(want.block)?.block?.id;
    out.history = s.historyRaw(want.conversation);
    out.write = attempt(() => s.append(want.conversation, [{ id: 'new', role: 'user', content: 'x' }]));
    s.close();
  } catch (err) {
    out.readOnlyOpen = String(err?.message ?? err);
  }
  console.log(JSON.stringify(out));
`;

describe('read-only archives', () => {
  /** @type {Awaited<ReturnType<typeof createCompactor>>} */
  let c;
  before(async () => { c = await createCompactor({ wasmPath: wasmPath() }); });
  after(async () => { await c?.close(); });

  /**
   * An archive: a compacted conversation, and what a reader must find in it.
   * @param {string} path
   * @param {(db: InstanceType<typeof sqlite.Database>) => void} [then] run on the file once the store is closed
   */
  async function archive(path, then) {
    const store = new SQLiteStore(path);
    const cc = await createCompactor({ wasmPath: wasmPath(), store, config: { keep_recent: 6, chunk_size: 10 } });
    try {
      const r = await cc.compress('c1', makeConversation('c1', 40));
      assert.equal(r.failed, false, r.failure_message ?? '');
      const fts5 = (await c.searchQuery('billing migration Postgres')).fts5;
      const hits = store.searchFts5(fts5, { conversationId: 'c1' });
      const recalled = hits.find((h) => h.kind === 'message')?.id ?? '';
      const block = hits.find((h) => h.kind === 'batch')?.id ?? '';
      assert.ok(recalled && block, 'the archive has no message or batch hit: the case is not set up');
      return {
        want: { fts5, conversation: 'c1', recalled, block },
        hits: hits.map((h) => h.id), recalled: store.recall(recalled)?.raw, history: store.historyRaw('c1'),
      };
    } finally {
      await cc.close();
      store.close();
      if (then) {
        const db = new sqlite.Database(path);
        try { then(db); } finally { db.close(); }
      }
    }
  }

  /**
   * @param {string} dir
   * @param {any} want
   */
  function readAsReader(dir, want) {
    const out = child({ code: READER, args: [join(dir, 'archive.db'), JSON.stringify(want)], cannotWrite: true });
    assert.match(out.probe, /^error: EACCES/, 'the reader can write the directory: the case proves nothing');
    return out;
  }

  for (const [name, wal] of [['in rollback-journal mode (a Node file)', false], ['in WAL mode (as the Go and Python stores leave it)', true]]) {
    test(`an archive ${name} is read by a process that cannot write it`, async () => {
      const dir = mkdtempSync(join(tmp, 'ro-'));
      const expected = await archive(join(dir, 'archive.db'), wal ? (db) => {
        // SQLite writes a WAL file without shared memory in exclusive locking mode.
        db.exec('PRAGMA locking_mode = EXCLUSIVE');
        assert.equal(db.get('PRAGMA journal_mode = WAL')?.journal_mode, 'wal');
      } : undefined);
      assert.deepEqual(readdirSync(dir), ['archive.db']);
      assert.equal(readFileSync(join(dir, 'archive.db'))[18], wal ? 2 : 1);
      makeReadOnly(dir);
      const before = snapshot(dir);
      const out = readAsReader(dir, expected.want);
      // Opening it to write fails (the case is real) …
      assert.match(out.writableOpen, /^error: /);
      // … and reading it works: search, recall and read by id, the active history.
      assert.equal(out.readOnlyOpen, undefined, out.readOnlyOpen);
      assert.deepEqual(out.hits, expected.hits);
      assert.equal(out.recalled, expected.recalled);
      assert.equal(out.read, 'message');
      assert.equal(out.block, expected.want.block);
      assert.deepEqual(out.history, expected.history);
      assert.match(out.write, /read-only/);
      assert.deepEqual(snapshot(dir), before);
      chmodSync(dir, 0o755);
    });
  }

  test('a read-only store on a writable directory shares the writers\' lock and writes nothing', async () => {
    const dir = mkdtempSync(join(tmp, 'ro-'));
    const path = join(dir, 'archive.db');
    const expected = await archive(path);
    const before = snapshot(dir);
    const s = new SQLiteStore(path, { readOnly: true });
    try {
      assert.deepEqual(s.searchFts5(expected.want.fts5, { conversationId: 'c1' }).map((h) => h.id), expected.hits);
      assert.deepEqual(s.historyRaw('c1'), expected.history);
      assert.throws(() => s.migrate(), (e) => e instanceof HostError && /read-only/.test(e.message));
      assert.throws(() => s.commit({ conversation_id: 'c1', insert_message: { id: 'x', role: 'system', content: '' } }), /read-only/);
      // A writer holding the lock makes the reader wait, as any reader.
      const waiting = new SQLiteStore(path, { readOnly: true, busyTimeoutMs: 50 });
      mkdirSync(`${path}.lock`);
      try {
        assert.throws(() => waiting.historyRaw('c1'), /locked/);
      } finally {
        rmSync(`${path}.lock`, { recursive: true });
      }
      assert.deepEqual(waiting.historyRaw('c1'), expected.history);
      waiting.close();
    } finally {
      s.close();
    }
    assert.deepEqual(snapshot(dir), before);
  });

  /**
   * A database migrated up to `version` only, as an older clipfold left it.
   * @param {string} path
   * @param {number} version
   */
  function schemaAt(path, version) {
    const db = new sqlite.Database(path);
    db.exec('BEGIN');
    db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
    for (const m of loadMigrations(sqlDir()).slice(0, version)) {
      db.exec(m.sql);
      db.run("INSERT INTO schema_migrations VALUES (?, ?, '2026-01-01T00:00:00.000Z')", [m.version, m.name]);
    }
    db.exec('COMMIT');
    return db;
  }

  test('a version-4 database is read and never migrated', async () => {
    const dir = mkdtempSync(join(tmp, 'v4-'));
    const path = join(dir, 'v4.db');
    const db = schemaAt(path, 4);
    db.run(`INSERT INTO messages (id, conversation_id, seq, role, content, created_at, raw)
VALUES ('m2', 'c1', 2, 'user', 'still active', '', '{"id":"m2"}')`);
    db.run(`INSERT INTO recall (id, conversation_id, seq, role, content, created_at, raw, removed_at, operation_id)
VALUES ('m1', 'c1', 1, 'user', 'the walrus escaped', '', '{"id":"m1"}', '2026-01-01T00:00:00.000Z', 'op1')`);
    db.close();
    const before = snapshot(dir);
    const s = new SQLiteStore(path, { readOnly: true });
    try {
      assert.deepEqual(s.searchFts5((await c.searchQuery('where is the walrus?')).fts5).map((h) => h.id), ['m1']);
      assert.equal(s.recall('m1')?.raw, '{"id":"m1"}');
      assert.deepEqual(s.historyRaw('c1'), ['{"id":"m2"}']);
      assert.deepEqual(s.schemaVersions(), [1, 2, 3, 4]);
    } finally {
      s.close();
    }
    assert.deepEqual(snapshot(dir), before);
  });

  test('what a read-only store cannot read is refused, saying what to do, and left as it is', () => {
    const dir = mkdtempSync(join(tmp, 'refused-'));
    const known = loadMigrations(sqlDir()).length;
    schemaAt(join(dir, 'v3.db'), 3).close();
    const future = schemaAt(join(dir, 'future.db'), known);
    future.run("INSERT INTO schema_migrations VALUES (99, 'from the future', '2026-01-01T00:00:00.000Z')");
    future.close();
    const before = snapshot(dir);
    assert.throws(() => new SQLiteStore(join(dir, 'v3.db'), { readOnly: true }),
      /schema version 3 is older than reading needs \(4\): open it writable once/);
    assert.throws(() => new SQLiteStore(join(dir, 'future.db'), { readOnly: true }), /schema version 99 is newer than this clipfold knows/);
    assert.throws(() => new SQLiteStore(join(dir, 'missing.db'), { readOnly: true }), /no such database file/);
    assert.throws(() => new SQLiteStore(':memory:', { readOnly: true }), /needs a database file/);
    assert.throws(() => new SQLiteStore(join(dir, 'v3.db'), { readOnly: /** @type {any} */ ('yes') }), /readOnly: must be true or false, got "yes"/);
    assert.deepEqual(snapshot(dir), before);
  });

  test('an interrupted write is not read past: the reader says to open the file writable once', () => {
    const dir = mkdtempSync(join(tmp, 'torn-'));
    const path = join(dir, 'archive.db');
    const store = new SQLiteStore(path);
    store.append('c1', makeConversation('c1', 200));
    store.close();
    dieMidWrite(path);
    const before = snapshot(dir);
    assert.throws(() => new SQLiteStore(path, { readOnly: true }), /a write to it was interrupted .* open it writable once/);
    assert.deepEqual(snapshot(dir), before);
    // Opened writable once, the write is rolled back and the file reads whole.
    new SQLiteStore(path).close();
    const again = new SQLiteStore(path, { readOnly: true });
    try {
      assert.equal(again.historyRaw('c1').length, 200);
      assert.ok(!again.historyRaw('c1').includes('{}'));
    } finally {
      again.close();
    }
  });
});
