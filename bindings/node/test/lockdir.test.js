// A Node process killed while it holds the database never locks users
// out: node-sqlite3-wasm's `<file>.lock` directory carries its owner's
// record (lockdir.js), a lock whose owner is gone is taken over and the
// journal it left is played back, and a live owner's lock is never taken.
// Through real child processes killed with SIGKILL (or stopped with
// SIGSTOP) while they hold the lock mid-write.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import sqlite from 'node-sqlite3-wasm';
import { HostError, SQLiteStore } from '../src/index.js';
import { currentOwner, ownerGone, OWNER_FILE, OWNERLESS_STALE_MS } from '../src/lockdir.js';

const src = pathToFileURL(join(import.meta.dirname, '..', 'src', 'index.js')).href;
const BATCH = 600;
/** The most batches a writer appends (about 100 MB) before it stops on its own: a writer whose test died never fills the disk. */
const MAX_BATCHES = 40;

/** @type {string} */
let tmp;
before(() => { tmp = mkdtempSync(join(tmpdir(), 'clipfold-lockdir-')); });
after(() => { if (tmp) rmSync(tmp, { recursive: true, force: true }); });

/** A writer that appends batches of 600 messages of 4 KB (more than its page cache: pages spill into the file mid-write) until killed, or until it wrote MAX_BATCHES. */
const WRITER = `
  const { SQLiteStore } = await import(${JSON.stringify(src)});
  const s = new SQLiteStore(process.argv[1]);
  process.stdout.write('ready\\n');
  for (let k = 0; k < ${MAX_BATCHES}; k++) {
    s.append('c', Array.from({ length: ${BATCH} }, (_, i) => ({ id: process.pid + '-' + k + '-' + i, role: 'user', content: 'x'.repeat(4000) + i })));
  }`;

/** @param {string} path */
const lockOf = (path) => `${path}.lock`;

/** @param {string} path @returns {any} */
function record(path) {
  try {
    return JSON.parse(readFileSync(join(lockOf(path), OWNER_FILE), 'utf8'));
  } catch {
    return null;
  }
}

/** Whether a write is under way on path: the lock directory and a journal are there. */
const writing = (/** @type {string} */ path) => existsSync(lockOf(path)) && existsSync(`${path}-journal`);

/**
 * Starts the writer on path and, once it is in the middle of a write (the
 * lock directory and a journal next to the file), sends it `signal`.
 * Returns the child (exited when the signal was SIGKILL) still holding
 * the lock; retries when it had just let go.
 * @param {string} path
 * @param {NodeJS.Signals} signal
 */
async function catchWriter(path, signal) {
  for (let attempt = 0; attempt < 20; attempt++) {
    const child = spawn(process.execPath, ['--input-type=module', '-e', WRITER, '--', path], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (b) => { err += b; });
    const exited = new Promise((resolve) => { child.on('exit', (code, sig) => resolve(sig ?? code)); });
    await new Promise((resolve) => { child.stdout.once('data', resolve); });
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline && !writing(path)) await sleep(2);
    child.kill(signal);
    if (signal === 'SIGKILL') {
      assert.equal(await exited, 'SIGKILL', err);
    } else {
      await sleep(50);
    }
    if (writing(path)) {
      assert.equal(record(path)?.pid, child.pid, 'the lock directory names its owner');
      return child;
    }
    if (signal !== 'SIGKILL') {
      child.kill('SIGKILL');
      await exited;
    }
  }
  throw new Error('the writer was never caught in the middle of a write');
}

/** The file's integrity check and message count per conversation, read after every store let go. */
function inspect(/** @type {string} */ path) {
  const db = new sqlite.Database(path);
  try {
    return {
      integrity: db.all('PRAGMA integrity_check').map((r) => r.integrity_check),
      counts: Object.fromEntries(db.all('SELECT conversation_id AS c, count(*) AS n FROM messages GROUP BY 1').map((r) => [r.c, Number(r.n)])),
    };
  } finally {
    db.close();
  }
}

describe('a killed process\'s lock', () => {
  test('is taken over at once and its journal played back: the next process opens, reads and writes', async () => {
    const path = join(tmp, 'killed.db');
    new SQLiteStore(path).close();
    const dead = await catchWriter(path, 'SIGKILL');
    assert.equal(record(path).pid, dead.pid, 'the killed writer left its lock');
    const started = Date.now();
    const s = new SQLiteStore(path, { busyTimeoutMs: 5000 });
    try {
      assert.ok(Date.now() - started < 4000, 'opened without waiting out the busy timeout');
      assert.equal(s.history('c').length % BATCH, 0, 'a write is all or nothing: the killed one is rolled back');
      s.append('after', [{ id: 'a1', role: 'user', content: 'written after the crash' }]);
      assert.equal(existsSync(`${path}-journal`), false, 'the journal was played back');
    } finally {
      s.close();
    }
    assert.equal(existsSync(lockOf(path)), false, 'the lock is gone once the store let go');
    const { integrity, counts } = inspect(path);
    assert.deepEqual(integrity, ['ok']);
    assert.equal(counts.after, 1);
  });

  test('eight processes starting at once after the crash all write, one at a time', async () => {
    const path = join(tmp, 'many.db');
    new SQLiteStore(path).close();
    await catchWriter(path, 'SIGKILL');
    const code = `
      const { SQLiteStore } = await import(${JSON.stringify(src)});
      const s = new SQLiteStore(process.argv[1]);
      s.append('p', Array.from({ length: 50 }, (_, i) => ({ id: process.pid + '-' + i, role: 'user', content: 'after the crash ' + i })));
      s.close();`;
    const runs = Array.from({ length: 8 }, () => new Promise((resolve) => {
      const c = spawn(process.execPath, ['--input-type=module', '-e', code, '--', path], { stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      c.stderr.on('data', (b) => { err += b; });
      c.on('exit', (status) => resolve({ status, err }));
    }));
    for (const r of /** @type {{status: number, err: string}[]} */ (await Promise.all(runs))) assert.equal(r.status, 0, r.err);
    const { integrity, counts } = inspect(path);
    assert.deepEqual(integrity, ['ok']);
    assert.equal(counts.p, 8 * 50);
    assert.equal((counts.c ?? 0) % BATCH, 0, 'the killed write is rolled back');
    assert.equal(existsSync(lockOf(path)), false);
  });
});

describe('a live owner\'s lock', () => {
  test('is never taken: a stopped writer keeps it, the waiting store says who holds it, and goes on once it is released', async () => {
    const path = join(tmp, 'stopped.db');
    new SQLiteStore(path).close();
    const stopped = await catchWriter(path, 'SIGSTOP');
    const exited = new Promise((resolve) => { stopped.on('exit', resolve); });
    try {
      assert.throws(() => new SQLiteStore(path, { busyTimeoutMs: 500 }),
        (/** @type {any} */ e) => e instanceof HostError && e.code === 'unavailable' && /database is locked/.test(e.message)
          && e.message.includes(`held by process ${stopped.pid}`));
      assert.equal(record(path).pid, stopped.pid, 'the lock is still the stopped writer\'s');
    } finally {
      stopped.kill('SIGKILL');
      await exited;
    }
    const s = new SQLiteStore(path, { busyTimeoutMs: 5000 }); // the owner is gone now
    s.close();
    assert.deepEqual(inspect(path).integrity, ['ok']);
  });

  test('an owner that cannot be told dead (another host, boot or pid namespace) keeps its lock; a dead or rebooted one loses it', async () => {
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const deadPid = Number(gone.stdout);
    const me = currentOwner();
    assert.ok(me.boot && me.pidns && me.start, 'this platform gives a boot id, a pid namespace and a start time');
    const rec = (/** @type {object} */ over) => ({ ...me, pid: deadPid, start: '1', since: '', nonce: 'n', ...over });
    assert.equal(ownerGone(rec({})), true, 'same boot and namespace, the pid is gone');
    assert.equal(ownerGone(rec({ pid: process.pid, start: me.start })), false, 'this very process');
    assert.equal(ownerGone(rec({ pid: process.pid })), true, 'this pid, but an earlier process (another start time)');
    assert.equal(ownerGone(rec({ pidns: 'pid:[1]' })), false, 'another pid namespace: the pid may run there');
    assert.equal(ownerGone(rec({ boot: 'another-boot', host: 'another-host' })), false, 'another host');
    assert.equal(ownerGone(rec({ boot: 'another-boot', machine: '' })), false, 'another boot of a host that cannot be told the same');
    assert.equal(ownerGone(rec({ boot: 'another-boot' })), true, 'this host (hostname and machine id), rebooted since');
    assert.equal(ownerGone(rec({ boot: '' })), false, 'no boot id: cannot tell');

    const path = join(tmp, 'records.db');
    new SQLiteStore(path).close();
    mkdirSync(lockOf(path));
    writeFileSync(join(lockOf(path), OWNER_FILE), JSON.stringify(rec({ boot: 'another-boot', host: 'another-host', since: 'then' })));
    assert.throws(() => new SQLiteStore(path, { busyTimeoutMs: 300 }), /held by process \d+ on another-host since then/);
    writeFileSync(join(lockOf(path), OWNER_FILE), JSON.stringify(rec({})));
    new SQLiteStore(path, { busyTimeoutMs: 300 }).close();
    assert.equal(existsSync(lockOf(path)), false);
  });

  test('a process killed between its mkdir and its record: the pending record it wrote first says it is gone, and its lock is taken at once', async () => {
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const path = join(tmp, 'pending.db');
    new SQLiteStore(path).close();
    const pending = (/** @type {number} */ pid, /** @type {string} */ start) => {
      const p = `${lockOf(path)}.owner-${pid}-0123456789ab`;
      writeFileSync(p, JSON.stringify({ ...currentOwner(), pid, start, since: '', nonce: 'n' }));
      return p;
    };
    // A live process's (this one's) pending record, the directory made just
    // after it: the maker is about to put its record in — wait.
    const live = pending(process.pid, currentOwner().start);
    await sleep(5);
    mkdirSync(lockOf(path));
    assert.throws(() => new SQLiteStore(path, { busyTimeoutMs: 300 }), /database is locked/);
    rmSync(live);
    // A dead process's: taken at once, and its pending record cleaned up.
    const dead = pending(Number(gone.stdout), '1');
    const before = (statSync(lockOf(path)).mtimeMs - 500) / 1000; // written just before the directory
    utimesSync(dead, before, before);
    const s = new SQLiteStore(path, { busyTimeoutMs: 300 });
    s.close();
    assert.equal(existsSync(dead), false);
    assert.equal(existsSync(lockOf(path)), false);
  });

  test('a process killed as it released its lock (its record removed, the directory not yet): taken over at once', () => {
    const path = join(tmp, 'released.db');
    new SQLiteStore(path).close();
    // In the child, the unlock's rmdir of the lock directory, once its record is out, kills the process.
    const hook = join(tmp, 'kill-in-release.mjs');
    writeFileSync(hook, `import fs from 'node:fs';
const rmdir = fs.rmdirSync;
fs.rmdirSync = function (p, o) {
  if (typeof p === 'string' && p.endsWith('.lock') && !fs.existsSync(p + '/${OWNER_FILE}')) process.kill(process.pid, 'SIGKILL');
  return rmdir.call(fs, p, o);
};
`);
    const child = spawnSync(process.execPath, ['--import', pathToFileURL(hook).href, '--input-type=module', '-e',
      `import { SQLiteStore } from ${JSON.stringify(src)}; new SQLiteStore(${JSON.stringify(path)}).append('c', [{ id: 'm0', role: 'user', content: 'before' }]);`],
    { encoding: 'utf8' });
    assert.equal(child.signal, 'SIGKILL', `the child was not killed in its unlock: ${child.stderr}`);
    assert.ok(existsSync(lockOf(path)) && !existsSync(join(lockOf(path), OWNER_FILE)), 'the case is not set up: no ownerless lock directory left');
    const s = new SQLiteStore(path, { busyTimeoutMs: 300 });
    s.append('c', [{ id: 'm1', role: 'user', content: 'after' }]);
    s.close();
    assert.equal(existsSync(lockOf(path)), false);
  });

  test('a lock without a record (an older clipfold, or a process killed as it took it) is taken over only once a minute old', () => {
    const path = join(tmp, 'ownerless.db');
    new SQLiteStore(path).close();
    mkdirSync(lockOf(path));
    assert.throws(() => new SQLiteStore(path, { busyTimeoutMs: 300 }), /without an owner record/);
    const old = (Date.now() - OWNERLESS_STALE_MS - 5000) / 1000;
    utimesSync(lockOf(path), old, old);
    const s = new SQLiteStore(path, { busyTimeoutMs: 300 });
    s.append('c', [{ id: 'm1', role: 'user', content: 'written' }]);
    s.close();
    assert.equal(existsSync(lockOf(path)), false);
  });
});
