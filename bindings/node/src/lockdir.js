/**
 * Owned lock directories: recovery of the `<file>.lock` directory a
 * killed process leaves behind.
 *
 * node-sqlite3-wasm locks a database by making the directory
 * `<file>.lock` (mkdir is atomic; EEXIST means busy) and unlocks by
 * removing it. A process killed while it holds the lock leaves the
 * directory, and every later process is then told "database is locked"
 * forever. So while the store runs SQLite (synchronously: no other
 * JavaScript runs meanwhile), `withOwnedLock` makes that directory carry
 * its owner. The record — pid, boot id, pid namespace, process start
 * time, hostname, machine id — is written first to a file of its own
 * next to the directory (`<file>.lock.owner-<pid>-<nonce>`, "pending"),
 * then the directory is made, then the record is hard-linked into it as
 * `owner` (exclusively: a link never replaces a file), then the pending
 * name is removed; on unlock the record goes with the directory, a
 * pending record written first and removed last (see release). A
 * process finding the directory there reads the record and takes the
 * lock over only when its owner is certainly gone:
 *
 * - same boot and pid namespace (so the pid means the same process), and
 *   the pid no longer runs, is a zombie, or is a newer process than the
 *   one recorded (its start time differs); or
 * - the host (hostname and machine id) rebooted since (boot ids differ).
 *
 * Anything else — another host on a network file system, another pid
 * namespace, a platform without these identities — counts as alive: a
 * lock is never taken from a live owner, at the price of staying locked
 * where the owner cannot be told dead (then the error names the owner).
 * A directory without a record was made by a process between its mkdir
 * and its link — then its pending record, written just before the
 * directory, says whether it lives — or by a process that records
 * nothing (an older clipfold, node-sqlite3-wasm used alone): that one is
 * taken over once it is older than OWNERLESS_STALE_MS, far beyond any
 * transaction this store runs.
 *
 * Taking over is exclusive between the processes racing to do it: an
 * abandoned record is claimed by renaming it to a name of the claimant's
 * own (only one rename of a file succeeds), a directory without a record
 * by linking the claimant's record into it. Whoever puts the record in
 * owns the lock: a process whose mkdir succeeded but whose link finds a
 * record there backs off (busy) and leaves the directory to it. See
 * RATIONALE.md, "A killed Node process's lock is taken over".
 * @module
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';

/** The record's file name inside the lock directory. */
export const OWNER_FILE = 'owner';
/** How old a lock directory without a record (nor a pending one) must be to be taken over (ms). */
export const OWNERLESS_STALE_MS = 60_000;
/** How much earlier than the directory a pending record may be written and still be its maker's (ms). */
const PENDING_SLACK_MS = 2_000;
/** A link's errors that mean the file system has no hard links: the record is written in place instead. */
const NO_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'EXDEV', 'ENOSYS', 'EMLINK']);

/**
 * @typedef {object} OwnerRecord
 * @property {number} pid
 * @property {string} host hostname
 * @property {string} machine /etc/machine-id ('' when unknown)
 * @property {string} boot the kernel's boot id ('' when unknown)
 * @property {string} pidns the pid namespace ('' when unknown)
 * @property {string} start the process's start time since boot, in clock ticks ('' when unknown)
 * @property {string} since when the lock was taken (RFC 3339)
 * @property {string} nonce random, per acquisition
 */

/** @param {string} path */
function readText(path) {
  try {
    return fs.readFileSync(path, 'utf8').trim();
  } catch {
    return '';
  }
}

/**
 * A process's state and start time from /proc/<pid>/stat, or null where
 * there is no /proc (or no such process).
 * @param {number | 'self'} pid
 * @returns {{state: string, start: string} | null}
 */
function procStat(pid) {
  const text = readText(`/proc/${pid}/stat`);
  // pid (comm) state ppid …: comm may hold spaces and parentheses.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  if (!text || fields.length < 20) return null;
  return { state: fields[0], start: fields[19] };
}

/** @param {number | 'self'} pid */
function pidNamespace(pid) {
  try {
    return fs.readlinkSync(`/proc/${pid}/ns/pid`);
  } catch {
    return '';
  }
}

/** @type {Omit<OwnerRecord, 'since' | 'nonce'> | null} */
let self = null;

/**
 * This process's identity (computed once): what its records say.
 * @returns {Omit<OwnerRecord, 'since' | 'nonce'>}
 */
export function currentOwner() {
  return { ...me() };
}

/** This process's identity (computed once). */
function me() {
  if (!self) {
    self = {
      pid: process.pid, host: hostname(), machine: readText('/etc/machine-id'), boot: readText('/proc/sys/kernel/random/boot_id'),
      pidns: pidNamespace('self'), start: procStat('self')?.start ?? '',
    };
  }
  return self;
}

/**
 * Whether the process a record names has certainly ended (see the
 * module's comment); false when that cannot be told.
 * @param {OwnerRecord} r
 */
export function ownerGone(r) {
  const m = me();
  if (!r.boot || !m.boot) return false;
  if (r.boot !== m.boot) return r.host === m.host && r.machine !== '' && r.machine === m.machine; // rebooted since
  if (r.pidns === '' || r.pidns !== m.pidns || !Number.isInteger(r.pid) || r.pid <= 0) return false;
  if (r.pid === m.pid) return r.start !== '' && r.start !== m.start;
  try {
    process.kill(r.pid, 0);
  } catch (err) {
    if (/** @type {NodeJS.ErrnoException} */ (err).code === 'ESRCH') return true;
  }
  const st = procStat(r.pid);
  if (!st) return false;
  return st.state === 'Z' || st.state === 'X' || (r.start !== '' && st.start !== r.start);
}

/**
 * The lock's owner as a line for an error message, or ''.
 * @param {string} dir
 */
export function describeOwner(dir) {
  const r = readRecord(dir);
  if (r === undefined) return '';
  if (r === null) return ` (${dir} is there, without an owner record: a process of an older clipfold, or one killed as it took the lock; it is taken over once ${OWNERLESS_STALE_MS / 1000} s old)`;
  return ` (the lock ${dir} is held by process ${r.pid} on ${r.host} since ${r.since})`;
}

/**
 * A record's JSON text read, or null.
 * @param {string} text
 * @returns {OwnerRecord | null}
 */
function parseRecord(text) {
  try {
    const r = JSON.parse(text);
    return r && typeof r === 'object' ? r : null;
  } catch {
    return null;
  }
}

/**
 * The record in dir: an OwnerRecord, null when the directory has none (or
 * an unreadable one), undefined when the directory is gone.
 * @param {string} dir
 * @returns {OwnerRecord | null | undefined}
 */
function readRecord(dir) {
  let text;
  try {
    text = fs.readFileSync(join(dir, OWNER_FILE), 'utf8');
  } catch (err) {
    const code = /** @type {NodeJS.ErrnoException} */ (err).code;
    if (code === 'ENOENT') return fs.existsSync(dir) ? null : undefined;
    return null;
  }
  return parseRecord(text);
}

/** @param {string} dir */
const busy = (dir) => Object.assign(new Error(`EEXIST: file already exists, mkdir '${dir}'`), { code: 'EEXIST' });

/** A new record of this process (JSON text): its identity, the time, a nonce. */
function newRecord() {
  return `${JSON.stringify({ ...me(), since: new Date().toISOString(), nonce: randomBytes(8).toString('hex') })}\n`;
}

/**
 * Writes the record as pending, next to dir, before the mkdir: its path,
 * or '' when it cannot be written (the lock is then taken without it).
 * @param {string} dir
 * @param {string} text
 */
function writePending(dir, text) {
  const path = `${dir}.owner-${process.pid}-${randomBytes(6).toString('hex')}`;
  try {
    fs.writeFileSync(path, text, { flag: 'wx' });
    return path;
  } catch {
    return '';
  }
}

/**
 * Puts this process's record into dir, exclusively: linked from its
 * pending file, or written in place where there are no hard links.
 * Returns '' when this process now owns the lock, else the error's code
 * (EEXIST: another process's record is there; ENOENT: the directory is
 * gone).
 * @param {string} dir
 * @param {string} pending
 * @param {string} text
 * @returns {string}
 */
function placeRecord(dir, pending, text) {
  const target = join(dir, OWNER_FILE);
  if (pending) {
    try {
      fs.linkSync(pending, target);
      return '';
    } catch (err) {
      const code = /** @type {NodeJS.ErrnoException} */ (err).code ?? 'EIO';
      if (!NO_LINKS.has(code)) return code;
    }
  }
  try {
    fs.writeFileSync(target, text, { flag: 'wx' });
    return '';
  } catch (err) {
    return /** @type {NodeJS.ErrnoException} */ (err).code ?? 'EIO';
  }
}

/**
 * The pending records next to dir (acquisitions under way, or abandoned
 * by a process killed in one): path, record (null when unreadable), time.
 * @param {string} dir
 * @returns {{path: string, record: OwnerRecord | null, mtimeMs: number}[]}
 */
function pendings(dir) {
  const parent = dirname(dir);
  const prefix = `${basename(dir)}.owner-`;
  let names;
  try {
    names = fs.readdirSync(parent);
  } catch {
    return [];
  }
  return names.filter((n) => n.startsWith(prefix)).flatMap((n) => {
    const path = join(parent, n);
    try {
      return [{ path, record: parseRecord(fs.readFileSync(path, 'utf8')), mtimeMs: fs.statSync(path).mtimeMs }];
    } catch {
      return []; // removed meanwhile
    }
  });
}

/**
 * Takes over the lock directory dir when its owner is gone: true when this
 * process owns it now (its record, pending at `pending`, put in).
 * @param {string} dir
 * @param {string} pending
 * @param {string} text
 */
function takeOver(dir, pending, text) {
  const record = readRecord(dir);
  if (record === undefined) return false; // gone: the next mkdir may succeed
  if (record === null) return takeOwnerless(dir, pending, text);
  if (!ownerGone(record)) return false;
  const ownerFile = join(dir, OWNER_FILE);
  const claimed = join(dir, `${OWNER_FILE}.taken-${process.pid}-${randomBytes(6).toString('hex')}`);
  try {
    fs.renameSync(ownerFile, claimed); // only one claimant renames this record
  } catch {
    return false;
  }
  if (parseRecord(readText(claimed))?.nonce !== record.nonce) {
    // Another owner's record, made after the abandoned one was taken over
    // meanwhile: put it back.
    try { fs.renameSync(claimed, ownerFile); } catch { /* its owner has unlocked and emptied the directory */ }
    return false;
  }
  const mine = placeRecord(dir, pending, text) === '';
  try { fs.unlinkSync(claimed); } catch { /* gone with the directory */ }
  return mine;
}

/**
 * takeOver for a directory without a record. Its maker may be between
 * its mkdir and its link: a pending record written before the directory
 * was made says whether it lives (alive: wait; dead: take it now). With
 * no such record the directory was made by a process that records
 * nothing, and is taken once older than OWNERLESS_STALE_MS.
 * @param {string} dir
 * @param {string} pending
 * @param {string} text
 */
function takeOwnerless(dir, pending, text) {
  let made;
  try {
    made = fs.statSync(dir).mtimeMs;
  } catch {
    return false;
  }
  let abandoned = Date.now() - made > OWNERLESS_STALE_MS;
  /** @type {string[]} */
  const dead = [];
  for (const p of pendings(dir)) {
    if (p.path === pending) continue;
    const before = p.mtimeMs <= made && made - p.mtimeMs <= PENDING_SLACK_MS; // written just before the directory was made
    const gone = p.record ? ownerGone(p.record) : Date.now() - p.mtimeMs > OWNERLESS_STALE_MS;
    if (!gone) {
      if (p.mtimeMs <= made + PENDING_SLACK_MS) return false; // perhaps its maker, about to put its record in
      continue;
    }
    dead.push(p.path);
    if (before) abandoned = true; // its maker died before its record was in
  }
  if (!abandoned || placeRecord(dir, pending, text) !== '') return false;
  for (const p of dead) {
    try { fs.unlinkSync(p); } catch { /* removed meanwhile */ }
  }
  return true;
}

/**
 * The owner's unlock: removes its record and the directory (emptied of
 * anything else first: a record another process is putting back). A
 * pending record of this process is written next to the directory first
 * and removed last: killed between emptying the directory and removing
 * it, the process leaves a directory without a record, and that pending
 * record, written just before the directory last changed, says its maker
 * is gone (as when killed between its mkdir and its link), so the lock is
 * taken over at once instead of after OWNERLESS_STALE_MS.
 * @param {string} dir
 * @param {typeof fs.rmdirSync} rmdirSync the original
 */
function release(dir, rmdirSync) {
  const pending = writePending(dir, newRecord());
  try {
    try { fs.unlinkSync(join(dir, OWNER_FILE)); } catch { /* taken over, or never written */ }
    for (let i = 0; ; i++) {
      try {
        rmdirSync.call(fs, dir);
        return;
      } catch (err) {
        const code = /** @type {NodeJS.ErrnoException} */ (err).code;
        if (code === 'ENOENT') return;
        if (code !== 'ENOTEMPTY' || i >= 100) throw err;
      }
      for (const name of fs.readdirSync(dir)) {
        try { fs.unlinkSync(join(dir, name)); } catch { /* removed meanwhile */ }
      }
    }
  } finally {
    if (pending) {
      try { fs.unlinkSync(pending); } catch { /* removed meanwhile */ }
    }
  }
}

/** The lock directories owned while SQLite runs (see withOwnedLock). */
const owned = new Set();

/**
 * Runs fn (synchronous SQLite work on the database whose lock directory
 * is lockDir) with that directory owned: made with this process's record,
 * removed with it, and taken over when its owner is gone. Other paths are
 * left to fs as they are; fs is restored before this returns.
 * @template T
 * @param {string} lockDir the absolute path node-sqlite3-wasm locks (`<resolved file>.lock`)
 * @param {() => T} fn
 * @returns {T}
 */
export function withOwnedLock(lockDir, fn) {
  if (owned.has(lockDir)) return fn();
  const f = /** @type {{mkdirSync: Function, rmdirSync: Function}} */ (/** @type {unknown} */ (fs));
  const mkdirSync = fs.mkdirSync;
  const rmdirSync = fs.rmdirSync;
  const outer = owned.size === 0;
  if (outer) {
    f.mkdirSync = function mkdirOwned(/** @type {import('node:fs').PathLike} */ p, /** @type {any} */ opts) {
      if (typeof p !== 'string' || !owned.has(p)) return mkdirSync.call(fs, p, opts);
      const text = newRecord();
      const pending = writePending(p, text);
      try {
        try {
          mkdirSync.call(fs, p, opts);
        } catch (err) {
          if (/** @type {NodeJS.ErrnoException} */ (err).code !== 'EEXIST') throw err;
          if (takeOver(p, pending, text)) return undefined;
          throw err;
        }
        // The directory is this process's only once its record is in: a
        // process taking over an abandoned directory may have put its own.
        const failed = placeRecord(p, pending, text);
        if (failed === '') return undefined;
        if (failed !== 'EEXIST' && failed !== 'ENOENT') {
          try { rmdirSync.call(fs, p); } catch { /* reporting the record's failure */ }
          throw Object.assign(new Error(`clipfold: putting the lock's owner record in ${p}: ${failed}`), { code: failed });
        }
        throw busy(p);
      } finally {
        if (pending) {
          try { fs.unlinkSync(pending); } catch { /* reported by nothing: a stray pending record is read as dead */ }
        }
      }
    };
    f.rmdirSync = function rmdirOwned(/** @type {import('node:fs').PathLike} */ p, /** @type {any} */ opts) {
      if (typeof p !== 'string' || !owned.has(p)) return rmdirSync.call(fs, p, opts);
      return release(p, rmdirSync);
    };
  }
  owned.add(lockDir);
  try {
    return fn();
  } finally {
    owned.delete(lockDir);
    if (outer) {
      f.mkdirSync = mkdirSync;
      f.rmdirSync = rmdirSync;
    }
  }
}
