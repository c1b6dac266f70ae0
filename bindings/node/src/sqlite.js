/**
 * SQLiteStore: clipfold's durable memory for Node.js, on node-sqlite3-wasm
 * (SQLite compiled to WebAssembly, with file access through Node's fs: it
 * installs from the npm registry alone, nothing native).
 *
 * The tables, the SQL and the commit rules are the Go store's
 * (hostfuncs/store/sqlite, described in hostfuncs/store/SCHEMA.md): the
 * migration steps and the shared queries are the very same .sql files
 * (bundled in the package, or read from the checkout; see paths.js), so a
 * database written by the Go, Python or Node store opens in the others.
 *
 * - `messages`: each conversation's active history, ordered by `seq`, the
 *   exact JSON of each message in `raw`;
 * - `recall`: messages a compaction removed, moved here, never destroyed;
 * - `blocks`: archival blocks (batch summaries);
 * - `search_fts`: one FTS5 index over both (kept by the schema's
 *   triggers), so search ranks messages and batches in one list;
 * - `schema_migrations`: the applied schema versions.
 *
 * What a store writes and reads is the plug-in's to say, as for every host
 * (hostfuncs/store/SCHEMA.md): the planCommit export gives the rows a
 * commit writes and the checks to make first, planAppend the row of each
 * appended message, parseBlocks what an archived block's content says of
 * itself. This module only runs the shared SQL with them, calling the
 * exports synchronously (syncplugin.js).
 * @module
 */
import fs, {
  accessSync, constants, existsSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import sqlite from 'node-sqlite3-wasm';
import { describe, invalidArgument, requireString, stringifyJSON } from './args.js';
import { ClipfoldError, DuplicateIDError, HostError } from './errors.js';
import { ARCHIVE_IDS, COMMIT_JSON, COMMIT_PLANNED, PLAN_INPUT, WARM_WRITES } from './hostfns.js';
import { describeOwner, withOwnedLock } from './lockdir.js';
import { loadMigrations, loadQuery, sqlDir } from './paths.js';
import { sharedPlugin } from './shared.js';
import { sharedSyncPlugin, WARM_COMMIT } from './syncplugin.js';

const { Database } = sqlite;

/**
 * node-sqlite3-wasm passes a string to SQLite as a C string (its length
 * -1), and reads one back the same way: a text stops at its first NUL
 * character. "\u0000" is valid JSON and stored exactly by the Go and
 * Python stores, so this store would keep, index and return less than it
 * was given. Its statements are made exact here, once: a string holding a
 * NUL is bound with its byte length, and a text column whose bytes
 * outnumber the string read is read again in full. The library exposes
 * no memory view, only SQLite's functions: the bytes go in and out
 * through a private statement `SELECT ?1`, as a BLOB (which it passes
 * whole, with its length) — in: bound as a blob, stepped, and the row's
 * bytes bound as text to the real statement; out: the column's bytes
 * bound as a blob and read back. Strings without a NUL, and texts read
 * whole, take the library's own path. See RATIONALE.md.
 */
(() => {
  /** @type {any} */
  const M = sqlite;
  const SQLITE_ROW = 100;
  const SQLITE_TRANSIENT = -1;
  const dec = new TextDecoder();
  /** @type {{db: InstanceType<typeof Database>, put: any, get: any} | null} */
  let scratch = null;
  const own = () => {
    if (!scratch) {
      const db = new Database(':memory:');
      scratch = { db, put: db.prepare('SELECT ?1'), get: db.prepare('SELECT ?1') };
    }
    return scratch;
  };
  const probe = new Database(':memory:');
  /** @type {any} */
  let proto;
  try {
    const st = probe.prepare('SELECT 1');
    proto = Object.getPrototypeOf(st);
    st.finalize();
  } finally {
    probe.close();
  }
  const bindValue = proto._bindValue;
  const getRow = proto._getRow;
  if (typeof bindValue !== 'function' || typeof getRow !== 'function' || typeof M._sqlite3_bind_text !== 'function') {
    throw new Error('clipfold: node-sqlite3-wasm changed: Statement._bindValue/_getRow are gone (pin the version in package.json)');
  }
  /**
   * @param {unknown} value
   * @param {number} position
   */
  proto._bindValue = function bindExact(value, position) {
    if (typeof value !== 'string' || !value.includes('\0')) return bindValue.call(this, value, position);
    const { put } = own();
    put._bind([Buffer.from(value, 'utf8')]);
    try {
      if (M._sqlite3_step(put._ptr) !== SQLITE_ROW) throw new Error('clipfold: binding a text with a NUL: no row');
      const rc = M._sqlite3_bind_text(this._ptr, position, M._sqlite3_column_blob(put._ptr, 0), M._sqlite3_column_bytes(put._ptr, 0),
        SQLITE_TRANSIENT);
      if (rc !== 0) this._db._handleError(rc);
    } finally {
      M._sqlite3_reset(put._ptr);
    }
  };
  /**
   * @param {string[]} columns
   * @param {boolean} expand
   */
  proto._getRow = function getRowExact(columns, expand) {
    const row = getRow.call(this, columns, expand);
    if (expand) return row;
    for (let i = 0; i < columns.length; i++) {
      const v = row[columns[i]];
      if (typeof v !== 'string') continue;
      const n = M._sqlite3_column_bytes(this._ptr, i);
      // Each character is at least one byte: as many characters as bytes is whole.
      if (v.length === n || Buffer.byteLength(v, 'utf8') === n) continue;
      const { get } = own();
      get._reset();
      const rc = M._sqlite3_bind_blob(get._ptr, 1, M._sqlite3_column_text(this._ptr, i), n, SQLITE_TRANSIENT);
      if (rc !== 0) get._db._handleError(rc);
      try {
        if (M._sqlite3_step(get._ptr) !== SQLITE_ROW) throw new Error('clipfold: reading a text with a NUL: no row');
        row[columns[i]] = dec.decode(getRow.call(get, ['v'], false).v);
      } finally {
        M._sqlite3_reset(get._ptr);
      }
    }
    return row;
  };
})();

/** The path that opens a private in-memory database. */
export const MEMORY_PATH = ':memory:';
/** How long a write waits for another connection's lock (ms). */
export const BUSY_TIMEOUT_MS = 30_000;
/** Hits a search returns when no limit is given. */
export const DEFAULT_SEARCH_LIMIT = 20;
/** The most hits one search may ask for. */
export const MAX_SEARCH_LIMIT = 1000;

/** Whether a store's [WARM_WRITES] has run in this process. */
let writesWarmed = false;

const ROLES = new Set(['user', 'assistant', 'system', 'tool']);

/**
 * @typedef {import('./types.js').Message} Message
 * @typedef {import('./types.js').CommitInput} CommitInput
 * @typedef {import('./types.js').ArchiveBlock} ArchiveBlock
 * @typedef {import('./types.js').SearchHit} SearchHit
 * @typedef {import('./types.js').SearchOptions} SearchOptions
 * @typedef {import('./types.js').BatchMeta} BatchMeta
 * @typedef {import('./types.js').StoredBlock} StoredBlock
 * @typedef {import('./types.js').RecalledMessage} RecalledMessage
 * @typedef {import('./types.js').ReadRecord} ReadRecord
 * @typedef {import('./types.js').QueryAnalyzer} QueryAnalyzer
 * @typedef {import('./types.js').DecodedRecord} DecodedRecord
 */

/**
 * A string as SQLite may store it: lone UTF-16 surrogates (which the
 * Wasm build would write as invalid UTF-8) become U+FFFD, as Go does.
 * @param {string} s
 */
const wf = (s) => s.toWellFormed();

/** Thrown to end a transaction by rolling it back (a search with inContext messages). */
const ROLL_BACK = Symbol('roll back');

/**
 * Checks a search's inContext messages and returns the rows
 * queries/search_in_context.sql reads: [id, role, content, created_at,
 * search_text]; errors name the argument.
 * @param {string} conversationId
 * @param {unknown} inContext
 * @returns {unknown[][]}
 */
function inContextRows(conversationId, inContext) {
  if (!conversationId) throw invalidArgument('conversationId', 'a search with inContext messages needs the conversation they are the context of');
  if (!Array.isArray(inContext)) throw invalidArgument('inContext', `must be an array of messages as decodeHistory gives them, got ${describe(inContext)}`);
  return inContext.map((v, i) => {
    const f = `inContext[${i}]`;
    if (v === null || typeof v !== 'object' || Array.isArray(v)) throw invalidArgument(f, `must be an object (id, role, content, created_at, search_text), got ${describe(v)}`);
    const m = /** @type {Record<string, unknown>} */ (v);
    const id = requireString(m.id, `${f}.id`);
    if (!id) throw invalidArgument(`${f}.id`, 'is empty');
    const role = requireString(m.role, `${f}.role`);
    if (!['user', 'assistant', 'system', 'tool'].includes(role)) throw invalidArgument(`${f}.role`, `must be user, assistant, system or tool, got ${describe(role)}`);
    const created = m.created_at === undefined || m.created_at === null ? '' : requireString(m.created_at, `${f}.created_at`);
    const st = m.search_text === undefined || m.search_text === null ? null : requireString(m.search_text, `${f}.search_text`);
    return [wf(id), role, wf(requireString(m.content ?? '', `${f}.content`)), created, st ? wf(st) : null];
  });
}

/** The shared queries (queries/*.sql) the store runs, by file name. */
const QUERIES = /** @type {const} */ (['search', 'search_in_context', 'index_active', 'held_ids', 'append_message', 'commit_check',
  'insert_clip_archive', 'move_to_recall', 'remove_messages', 'replace_message', 'write_recall', 'delete_blocks', 'write_block']);

/** @typedef {{migrations: import('./paths.js').Migration[], q: Record<typeof QUERIES[number], string>}} SQLFiles */
/** @type {Map<string, SQLFiles>} */
const sqlCache = new Map();

/**
 * The migrations and the shared queries of the SQL directory.
 * @param {string | undefined} override
 * @returns {SQLFiles}
 */
function sqlFiles(override) {
  const dir = sqlDir(override);
  let s = sqlCache.get(dir);
  if (!s) {
    s = {
      migrations: loadMigrations(dir),
      q: /** @type {SQLFiles['q']} */ (Object.fromEntries(QUERIES.map((n) => [n, loadQuery(dir, n)]))),
    };
    sqlCache.set(dir, s);
  }
  return s;
}

/**
 * What lends a store the plug-in's store exports: an export called
 * synchronously with its JSON input text, answering its output text
 * (syncplugin.js).
 * @typedef {{call(name: string, input: string): string, warm?(): void}} SyncCaller
 */

/**
 * A commit's error when queries/commit_check.sql answered rows (field,
 * must, id) of the plan's first failed check: ids that must be new are
 * already stored (DuplicateIDError); any other check failing is a conflict.
 * @param {string} conv
 * @param {string} op
 * @param {Record<string, unknown>[]} failed
 */
function checkFailed(conv, op, failed) {
  const field = String(failed[0].field);
  const ids = failed.map((r) => String(r.id));
  if (failed[0].must === 'new') return new DuplicateIDError(ids, `compaction_commit ${JSON.stringify(op)} to ${JSON.stringify(conv)}: ${field}: `);
  const where = failed[0].must === 'active' ? 'no longer in the active history' : 'no longer exist';
  return new HostError('conflict', `compaction_commit: conversation ${JSON.stringify(conv)}: ${field} ${where}: ${JSON.stringify(ids)} `
    + '(another compaction may have removed them)');
}

/**
 * The planCommit export's answer (api/store.go): the checks to make
 * first, then the rows to write; times are clipfold's, every `raw` a
 * message's exact JSON.
 * @typedef {object} CommitPlan
 * @property {string} conversation_id
 * @property {string} operation_id
 * @property {string} now
 * @property {'store'|'caller'} history_owner
 * @property {{field: string, must: 'active'|'block'|'new', ids: string[]}[]} checks
 * @property {string[]} remove_ids
 * @property {string[]} move_ids
 * @property {Record<string, string>} search_text
 * @property {{id: string, new_id: string, role: string, content: string, raw: string}[]} replace
 * @property {string[]} delete_ids
 * @property {{tier: string, label: string, content: string, reason: string}[]} archive_writes
 * @property {{id: string, role: string, content: string, created_at: string, raw: string} | null} insert
 * @property {{id: string, role: string, content: string, created_at: string, raw: string, search_text: string}[]} recall_writes
 */

/** Closes the databases of stores that were dropped without close() (and removes a read-only store's own directory). */
const finalizer = new FinalizationRegistry((/** @type {{db: {close(): void, isOpen: boolean}, dir: string}} */ h) => {
  try { if (h.db.isOpen) h.db.close(); } catch { /* already gone */ }
  if (h.dir) rmSync(h.dir, { recursive: true, force: true });
});

/**
 * The oldest schema version a read-only store reads (SCHEMA.md, "Opening
 * for reading"): the queries run on it unchanged.
 */
export const READ_MIN_VERSION = 4;

/**
 * @typedef {object} SQLiteStoreOptions
 * @property {QueryAnalyzer} [queryAnalyzer] analyses search queries: the plug-in's searchQuery export. By default a
 *   compactor using this store lends its plug-in, else one is loaded (findWasm) on the first search.
 * @property {string} [sqlDir] the directory of migrations/ and queries/ (default: bundled, $CLIPFOLD_SQL_DIR, the checkout)
 * @property {number} [busyTimeoutMs] how long a write waits for another connection's lock (default 30 s)
 * @property {boolean} [readOnly] open an existing database for reading only (search, read, recall, the active
 *   history of an archive the user may not be able to write): nothing is migrated or written, and every write throws
 *   a HostError saying the store is read-only. Schema versions READ_MIN_VERSION (4) up to the newest this package
 *   knows are read; an older one is refused with an error saying to open it writable once.
 */

/**
 * The embedded store: a file or `":memory:"`.
 *
 * Every write is one `BEGIN IMMEDIATE` transaction; `commit` is
 * compaction_commit (docs/spec.md#compaction_commit; all or nothing; `conflict` when an id to remove or
 * delete no longer exists). All methods are synchronous except `search`,
 * which asks the plug-in to analyse the query.
 *
 * Files: node-sqlite3-wasm locks a database with a `<file>.lock`
 * directory, not with the POSIX locks the Go and Python stores (and every
 * native SQLite) use, and it has no shared memory, hence no WAL. The Node
 * store therefore opens files in rollback-journal mode, converting a file
 * the Go or Python store left in WAL mode; Node processes may share a
 * file, but a file must not be open in a Go or Python process and a Node
 * process at the same time (hand it over: close one, open the other). See
 * RATIONALE.md. The lock directory records its owner (lockdir.js): the
 * lock of a process killed while it held it is taken over, and the write
 * it left half-done rolled back, by the next process.
 */
export class SQLiteStore {
  /** @type {InstanceType<typeof Database>} */
  #db;
  /** @type {SQLFiles} */
  #sql;
  /** the plug-in a compactor lent for the store exports (bindPlugin), or null: the shared one */
  /** @type {SyncCaller | null} */
  #plugin = null;
  /** @type {QueryAnalyzer | null} */
  #analyzer;
  /** @type {QueryAnalyzer | null} */
  #lent = null;
  /** a schema version this code does not know, when the file has one */
  #unknownVersion = 0;
  /**
   * How a read-only store reaches the file: '' (not read-only), 'locked'
   * (at its path, with the lock directory next to it, as writers use), or
   * 'private' (through a link in a directory of its own: its lock is its
   * own, for a file it cannot lock where it is or a WAL file).
   * @type {'' | 'locked' | 'private'}
   */
  #readMode = '';
  /** a read-only store's own directory (the link to the file, its lock), or '' */
  #privateDir = '';
  /** the lock directory node-sqlite3-wasm makes next to the file it opened (absolute), or '' (in memory) */
  #lockDir = '';
  /** @type {() => Date} */
  now = () => new Date();

  /**
   * Opens (creating when needed) the database at `path`, a file or
   * `":memory:"` (the default), and applies pending migrations.
   * @param {string} [path]
   * @param {SQLiteStoreOptions} [opts]
   */
  constructor(path = MEMORY_PATH, opts = {}) {
    if (typeof path !== 'string' || path === '') throw invalidArgument('path', `must be a file path or ":memory:", got ${describe(path)}`);
    if (opts.readOnly !== undefined && typeof opts.readOnly !== 'boolean') {
      throw invalidArgument('readOnly', `must be true or false, got ${describe(opts.readOnly)}`);
    }
    this.path = path;
    /** Whether the store was opened read-only. */
    this.readOnly = opts.readOnly === true;
    this.#analyzer = opts.queryAnalyzer ?? null;
    this.#sql = sqlFiles(opts.sqlDir);
    this.#busyTimeoutMs = Math.max(0, Math.floor(opts.busyTimeoutMs ?? BUSY_TIMEOUT_MS));
    this.#db = this.readOnly ? this.#connectReadOnly() : this.#connect();
    try {
      if (this.readOnly) this.#checkReadable();
      else this.migrate();
    } catch (err) {
      this.close();
      throw err;
    }
  }

  /**
   * Opens an existing file for reading only (SCHEMA.md, "Opening for
   * reading"), never writing it. A file in rollback-journal mode in a
   * directory this process can write is opened where it is, read-only,
   * sharing the lock directory with writers. Otherwise node-sqlite3-wasm
   * could not lock it there (its lock is a directory made next to the
   * file) or read it (a WAL file, which it reads only in exclusive locking
   * mode, making a -wal file): it is opened through a link in a directory
   * of the store's own, whose lock is its own — as the Go store reads such
   * a file with immutable=1, it must not be written meanwhile: a -journal
   * or -shm next to it (a writer at work) fails the operation. A WAL file
   * whose -wal holds commits not yet in the file is refused: only a
   * writer can apply them.
   * @returns {InstanceType<typeof Database>}
   */
  #connectReadOnly() {
    const path = this.path;
    if (path === MEMORY_PATH) throw new HostError('invalid_request', `SQLiteStore: readOnly needs a database file, not ${MEMORY_PATH}`);
    if (!existsSync(path) || !statSync(path).isFile()) {
      throw new HostError('invalid_request', `SQLiteStore: ${path}: no such database file (readOnly opens an existing one)`);
    }
    if (existsSync(`${path}-shm`)) throw shmError(path);
    const wal = isWal(path);
    if (wal && existsSync(`${path}-wal`) && statSync(`${path}-wal`).size > 0) {
      throw new HostError('other', `SQLiteStore: ${path}: its write-ahead log ${path}-wal holds commits not yet in the database `
        + 'file, and only a writer can apply them: open it writable once (with any clipfold store) and read it again');
    }
    let target = path;
    if (wal || !canWrite(dirname(resolve(path)))) {
      this.#privateDir = mkdtempSync(join(tmpdir(), 'clipfold-read-'));
      target = join(this.#privateDir, basename(path));
      symlinkSync(resolve(path), target);
      this.#readMode = 'private';
    } else {
      this.#readMode = 'locked';
    }
    this.#lockDir = `${resolve(target)}.lock`;
    const db = this.#owned(() => {
      /** @type {InstanceType<typeof Database> | null} */
      let d = null;
      try {
        d = new Database(target, { readOnly: true, fileMustExist: true });
        d.exec(`PRAGMA busy_timeout = ${this.#busyTimeoutMs}`);
        // Without shared memory SQLite reads a WAL file only in exclusive
        // locking mode; the lock is the store's own.
        if (wal) d.exec('PRAGMA locking_mode = EXCLUSIVE');
        return d;
      } catch (err) {
        try { d?.close(); } catch { /* reporting the open's error */ }
        if (this.#privateDir) rmSync(this.#privateDir, { recursive: true, force: true });
        throw err;
      }
    });
    finalizer.unregister(this);
    finalizer.register(this, { db, dir: this.#privateDir }, this);
    return db;
  }

  /**
   * A read-only store reads schema versions READ_MIN_VERSION up to the
   * newest it knows; anything else is refused, naming what to do.
   */
  #checkReadable() {
    /** @type {number[]} */
    let versions;
    try {
      versions = this.#use((db) => db.all('SELECT version FROM schema_migrations').map((r) => Number(r.version)));
    } catch (err) {
      if (!/no such table/.test(errText(err))) throw err;
      throw new HostError('other', `SQLiteStore: ${this.path}: not a clipfold database (it has no schema_migrations table)`);
    }
    const version = Math.max(0, ...versions);
    const known = this.#sql.migrations.length;
    if (version > known) {
      throw new HostError('other', `SQLiteStore: ${this.path}: schema version ${version} is newer than this clipfold knows `
        + `(up to ${known}): upgrade clipfold`);
    }
    if (version < READ_MIN_VERSION) {
      throw new HostError('other', `SQLiteStore: ${this.path}: schema version ${version} is older than reading needs `
        + `(${READ_MIN_VERSION}): open it writable once (new SQLiteStore(path), or any writing clipfold command) to migrate it`);
    }
  }

  /** @type {number} */
  #busyTimeoutMs;

  /**
   * Opens the connection: pragmas, and a file the Go or Python store left
   * in WAL mode back to a rollback journal.
   * @returns {InstanceType<typeof Database>}
   */
  #connect() {
    const path = this.path;
    const memory = path === MEMORY_PATH;
    if (!memory && existsSync(`${path}-shm`)) throw shmError(path);
    if (!memory) this.#lockDir = `${resolve(path)}.lock`;
    const db = this.#owned(() => {
      const d = new Database(path);
      try {
        d.exec(`PRAGMA busy_timeout = ${this.#busyTimeoutMs}`);
        d.exec('PRAGMA foreign_keys = ON');
        if (!memory && isWal(path)) {
          // Without shared memory SQLite reads a WAL database only in
          // exclusive locking mode; leave WAL (the log is checkpointed into
          // the file) and go back to normal locking for the rollback journal.
          d.exec('PRAGMA locking_mode = EXCLUSIVE');
          d.all('PRAGMA journal_mode = DELETE');
          d.exec('PRAGMA locking_mode = NORMAL');
          d.all('SELECT 1 FROM sqlite_master LIMIT 1'); // releases the exclusive lock
        }
        if (!memory) rollBackHotJournal(d, path);
      } catch (err) {
        d.close();
        throw err;
      }
      return d;
    });
    finalizer.unregister(this);
    finalizer.register(this, { db, dir: '' }, this);
    return db;
  }

  /**
   * Runs fn on the connection. A Go or Python store that opened the file
   * meanwhile (and has closed it) leaves it in WAL mode, which this
   * connection cannot read: then it reconnects (converting the file back)
   * and runs fn once more — fn failed before changing anything, as it
   * could not read the file. If that store still has the file open, a
   * clear error says so.
   * @template T
   * @param {(db: InstanceType<typeof Database>) => T} fn
   * @returns {T}
   */
  #use(fn) {
    return this.#owned(() => {
      if (this.readOnly) return this.#read(fn);
      if (this.path !== MEMORY_PATH && this.#db.isOpen) rollBackHotJournal(this.#db, this.path);
      try {
        return fn(this.#db);
      } catch (err) {
        if (err instanceof HostError || this.path === MEMORY_PATH || !this.#db.isOpen || !isWal(this.path)) throw err;
        if (existsSync(`${this.path}-shm`)) throw shmError(this.path);
        try { this.#db.close(); } catch { /* reconnecting anyway */ }
        this.#db = this.#connect();
        return fn(this.#db);
      }
    });
  }

  /**
   * Runs fn (synchronous SQLite work) with the file's lock directory
   * carrying this process's record, so a process killed while it holds
   * the lock can be told from a live one and its lock taken over
   * (lockdir.js; RATIONALE.md, "A killed Node process's lock is taken
   * over"). "database is locked" becomes a retryable HostError naming the
   * lock's owner.
   * @template T
   * @param {() => T} fn
   * @returns {T}
   */
  #owned(fn) {
    if (!this.#lockDir) return fn();
    try {
      return withOwnedLock(this.#lockDir, fn);
    } catch (err) {
      throw busyError(this.path, err, this.#lockDir);
    }
  }

  /**
   * #use for a read-only store: fn runs unless the file is being written
   * or a write to it was interrupted, which a reader can neither wait for
   * (through its own lock) nor undo.
   * @template T
   * @param {(db: InstanceType<typeof Database>) => T} fn
   * @returns {T}
   */
  #read(fn) {
    const path = this.path;
    const journal = `${path}-journal`;
    if (this.#readMode === 'private') {
      if (existsSync(`${path}-shm`)) throw shmError(path);
      if (existsSync(journal)) {
        throw new HostError('unavailable', `SQLiteStore: ${path} is being written, or a write to it was interrupted (${journal} `
          + 'is there): retry, or open it writable once to roll the write back', true);
      }
    } else if (existsSync(journal)) {
      // Under the lock a journal is hot; SQLite, read-only, cannot play it back.
      try {
        rollBackHotJournal(this.#db, path);
      } catch (err) {
        throw new HostError('other', `SQLiteStore: ${path}: a write to it was interrupted (${journal} is there) and only a `
          + `writer can roll it back: open it writable once (${errText(err)})`);
      }
    }
    return fn(this.#db);
  }

  /** Closes the database. */
  close() {
    finalizer.unregister(this);
    if (this.#db.isOpen) this.#owned(() => this.#db.close());
    if (this.#privateDir) rmSync(this.#privateDir, { recursive: true, force: true });
  }

  /** Whether the database is open. */
  get isOpen() {
    return this.#db.isOpen;
  }

  /**
   * Runs fn in one BEGIN IMMEDIATE transaction; rolls back when it throws.
   * @template T
   * @param {() => T} fn
   * @returns {T}
   */
  #tx(fn) {
    this.#refuseReadOnly();
    return this.#use((db) => {
      try {
        db.exec('BEGIN IMMEDIATE');
      } catch (err) {
        throw busyError('begin', err, this.#lockDir);
      }
      try {
        const out = fn();
        db.exec('COMMIT');
        return out;
      } catch (err) {
        // The error raised is the failure itself: neither the ROLLBACK (SQLite
        // rolls back on its own after an I/O error) nor putting the file
        // back may replace it. Putting it back is retried by the next call.
        try {
          if (db.inTransaction) db.exec('ROLLBACK');
          if (this.path !== MEMORY_PATH) rollBackHotJournal(db, this.path);
        } catch { /* reported by the next call, if it lasts */ }
        throw busyError('commit', err, this.#lockDir);
      }
    });
  }

  #refuseReadOnly() {
    if (this.readOnly) {
      throw new HostError('invalid_request', `SQLiteStore: ${this.path} was opened read-only (readOnly: true): nothing can be written`);
    }
  }

  #refuseWriteIfNewer() {
    this.#refuseReadOnly();
    if (this.#unknownVersion) {
      const known = this.#sql.migrations.length;
      throw new HostError('other', `${this.path}: schema version ${this.#unknownVersion} is newer than this clipfold knows `
        + `(up to ${known}): refusing to write (upgrade clipfold)`);
    }
  }

  /**
   * Applies the migration steps not yet recorded in schema_migrations, in
   * one IMMEDIATE transaction; returns how many it applied (0 on an
   * up-to-date database). The steps are the shared migrations/*.sql.
   * @returns {number}
   */
  migrate() {
    return this.#tx(() => {
      const db = this.#db;
      db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
	version    INTEGER PRIMARY KEY,
	name       TEXT NOT NULL,
	applied_at TEXT NOT NULL
)`);
      const applied = new Set(db.all('SELECT version FROM schema_migrations').map((r) => Number(r.version)));
      let n = 0;
      for (const m of this.#sql.migrations) {
        if (applied.has(m.version)) continue;
        try {
          db.exec(m.sql);
        } catch (err) {
          throw new Error(`clipfold: migrate: applying version ${m.version} (${m.name}): ${errText(err)}`, { cause: err });
        }
        db.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [m.version, m.name, this.now().toISOString()]);
        n++;
      }
      const known = this.#sql.migrations.length;
      this.#unknownVersion = Math.max(0, ...[...applied].filter((v) => v > known));
      return n;
    });
  }

  /**
   * The schema versions recorded in the database, in order.
   * @returns {number[]}
   */
  schemaVersions() {
    return this.#use((db) => db.all('SELECT version FROM schema_migrations ORDER BY version').map((r) => Number(r.version)));
  }

  // ------------------------------------------------------------ messages

  /**
   * Adds messages, in order, after the conversation's active history.
   * Each message is an object (stored as JSON.stringify gives it) or the
   * exact JSON text to store, in any shape of docs/spec.md#message-shapes;
   * the plug-in's planAppend export reads its row (role as clipfold reads
   * it, text, time in clipfold's format) and refuses what a store must
   * not take, naming the field. Ids are the messages' own and unique
   * within the conversation (active and recall): a missing or repeated
   * id, or one the conversation holds already (a DuplicateIDError), is an
   * error naming it, and nothing is added; another conversation's message
   * of the same id is another message.
   * @param {string} conversationId
   * @param {(Message | string)[]} messages
   */
  append(conversationId, messages) {
    this.#insertRows(conversationId, this.#messageRows(conversationId, messages));
  }

  /**
   * Appends, in order and in one transaction, the messages whose id the
   * conversation holds nowhere yet (neither active nor in recall), and
   * returns them (as given); a message whose id it holds is skipped,
   * whatever its content. This is how a list the caller sends again and
   * again is stored: processes appending the same list at once store each
   * message once, and none of them fails. `messages` is checked as for
   * append (a repeated id within it is an error, and nothing is added).
   * @template {Message | string} M
   * @param {string} conversationId
   * @param {M[]} messages
   * @returns {M[]}
   */
  appendNew(conversationId, messages) {
    return this.#insertRows(conversationId, this.#messageRows(conversationId, messages), true).map((i) => messages[i]);
  }

  /**
   * append's rows [id, role, content, created_at, raw]: raw the exact JSON
   * given (an object as JSON.stringify gives it), the rest as the
   * plug-in's planAppend export reads it.
   * @param {string} conversationId
   * @param {(Message | string)[]} messages
   * @returns {[string, string, string, string, string][]}
   */
  #messageRows(conversationId, messages) {
    if (typeof conversationId !== 'string' || conversationId === '') {
      throw new HostError('invalid_request', `append: conversation_id must be a non-empty string, got ${describe(conversationId)}`);
    }
    if (!Array.isArray(messages)) throw new HostError('invalid_request', `append: messages must be an array, got ${describe(messages)}`);
    this.#refuseWriteIfNewer();
    const raws = messages.map((m, i) => {
      if (typeof m !== 'string') {
        try {
          return wf(stringifyJSON(m, `messages[${i}]`) ?? 'null');
        } catch (err) {
          throw new HostError('invalid_request', `append: ${err instanceof ClipfoldError ? err.detail : `messages[${i}]: ${errText(err)}`}`);
        }
      }
      try { JSON.parse(m); } catch (err) { throw new HostError('invalid_request', `append: messages[${i}]: not valid JSON: ${errText(err)}`); }
      return wf(m);
    });
    if (raws.length === 0) return [];
    const plan = this.#export('planAppend', `{"conversation_id":${JSON.stringify(wf(conversationId))},"messages":[${raws.join(',')}]}`,
      `append to ${JSON.stringify(conversationId)}`);
    return plan.messages.map((/** @type {{id: string, role: string, content: string, created_at: string}} */ r, /** @type {number} */ i) => (
      /** @type {[string, string, string, string, string]} */ ([r.id, r.role, r.content, r.created_at, raws[i]])));
  }

  /**
   * The plug-in's answer to a store export, parsed: on the plug-in the
   * compactor lent (bindPlugin), else on the shared one (loaded on first
   * use). Its refusal is a HostError `invalid_request` saying what was
   * refused (`what`) and why, naming the field.
   * @param {string} name
   * @param {string} input
   * @param {string} what
   * @returns {any}
   */
  #export(name, input, what) {
    const lent = this.#plugin;
    try {
      if (lent) {
        try {
          return JSON.parse(lent.call(name, input));
        } catch (err) {
          // The lending compactor was closed: the shared plug-in answers.
          if (!(err instanceof ClipfoldError && err.code === 'internal' && /closed/.test(err.message))) throw err;
          if (this.#plugin === lent) this.#plugin = null;
        }
      }
      return JSON.parse(sharedSyncPlugin().call(name, input));
    } catch (err) {
      if (err instanceof ClipfoldError && err.code !== 'internal') throw new HostError('invalid_request', `${what}: ${err.detail}`);
      throw err;
    }
  }

  /**
   * Appends rows [id, role, content, created_at, raw] after the
   * conversation's active history in one IMMEDIATE transaction
   * (queries/held_ids.sql, append_message.sql), so the check of the ids it
   * holds and the insert see the same database. A held id refuses them
   * all (DuplicateIDError), or with skipHeld is left out. Returns the
   * indexes of the rows appended.
   * @param {string} conversationId
   * @param {[string, string, string, string, string][]} rows
   * @param {boolean} [skipHeld]
   * @returns {number[]}
   */
  #insertRows(conversationId, rows, skipHeld = false) {
    if (rows.length === 0) return [];
    const conv = wf(conversationId);
    const ids = JSON.stringify(rows.map((r) => r[0]));
    return this.#tx(() => {
      const db = this.#db;
      const held = db.all(this.#sql.q.held_ids, [ids, conv]).map((r) => String(r.id));
      if (held.length > 0 && !skipHeld) throw new DuplicateIDError(held, `append to ${JSON.stringify(conversationId)}: `);
      const skip = new Set(held);
      const kept = rows.flatMap((r, i) => (skip.has(r[0]) ? [] : [i]));
      if (kept.length === 0) return kept;
      const stmt = db.prepare(this.#sql.q.append_message);
      try {
        for (const k of kept) {
          const [id, role, content, created, raw] = rows[k];
          stmt.run([id, conv, role, content, created, raw]);
        }
      } finally {
        stmt.finalize();
      }
      return kept;
    });
  }

  /**
   * Adds messages already read — each one's id, role, text and time as
   * the plug-in's decodeHistory export gives them, and its exact JSON
   * text `raw` — in order, after the conversation's active history: how
   * compress stores a list in any message shape (docs/spec.md#message-shapes), under the ids
   * compress derives. Same rules as append (ids unique within the
   * conversation, nothing added when one is refused).
   * @param {string} conversationId
   * @param {DecodedRecord[]} records
   */
  appendRecords(conversationId, records) {
    this.#insertRows(conversationId, this.#recordRows(conversationId, records));
  }

  /**
   * appendNew for records as appendRecords takes them: how compress stores
   * the list it is given (one transaction; the records whose id the
   * conversation holds are skipped). Returns the records appended.
   * @template {DecodedRecord} R
   * @param {string} conversationId
   * @param {R[]} records
   * @returns {R[]}
   */
  appendNewRecords(conversationId, records) {
    return this.#insertRows(conversationId, this.#recordRows(conversationId, records), true).map((i) => records[i]);
  }

  /**
   * appendRecords' rows [id, role, content, created_at, raw], checked.
   * @param {string} conversationId
   * @param {DecodedRecord[]} records
   * @returns {[string, string, string, string, string][]}
   */
  #recordRows(conversationId, records) {
    if (typeof conversationId !== 'string' || conversationId === '') throw new HostError('invalid_request', 'append: conversation id is empty');
    if (!Array.isArray(records)) throw new HostError('invalid_request', 'append: records must be an array');
    this.#refuseWriteIfNewer();
    /** @type {Map<string, number>} */
    const seen = new Map();
    return records.map((r, i) => {
      const bad = (/** @type {string} */ what) => { throw new HostError('invalid_request', `append: records[${i}]${what}`); };
      if (!r || typeof r !== 'object') bad(' is not an object');
      if (typeof r.id !== 'string' || r.id === '') bad('.id is empty');
      const key = wf(r.id);
      if (seen.has(key)) bad(`.id ${JSON.stringify(r.id)} repeats records[${seen.get(key)}]`);
      seen.set(key, i);
      if (!ROLES.has(r.role)) bad(` (${JSON.stringify(r.id)}): role ${JSON.stringify(r.role)} is not user, assistant, system or tool`);
      if (typeof r.raw !== 'string') bad(` (${JSON.stringify(r.id)}).raw: must be the message's JSON text`);
      if (r.created_at !== undefined && r.created_at !== null && typeof r.created_at !== 'string') {
        bad(` (${JSON.stringify(r.id)}).created_at: must be the time decodeHistory gives (a string) or null`);
      }
      return /** @type {[string, string, string, string, string]} */ ([key, r.role, wf(String(r.content ?? '')), r.created_at ?? '', wf(r.raw)]);
    });
  }

  /**
   * Which of ids the conversation holds, in its active history or in its
   * recall storage (ids are unique within a conversation only).
   * @param {string} conversationId
   * @param {string[]} ids
   * @returns {Set<string>}
   */
  knownIds(conversationId, ids) {
    if (typeof conversationId !== 'string' || conversationId === '') {
      throw new TypeError(`knownIds(conversationId, ids): conversationId must be a non-empty string, got ${typeof conversationId === 'string' ? '""' : typeof conversationId}`);
    }
    if (!Array.isArray(ids) || ids.some((x) => typeof x !== 'string')) throw new TypeError('knownIds(conversationId, ids): ids must be an array of strings');
    const j = JSON.stringify(ids.map(wf));
    return new Set(this.#use((db) => db.all(`SELECT id FROM messages WHERE conversation_id = ?2 AND id IN (SELECT value FROM json_each(?1))
UNION SELECT id FROM recall WHERE conversation_id = ?2 AND id IN (SELECT value FROM json_each(?1))`, [j, wf(conversationId)])).map((r) => String(r.id)));
  }

  /**
   * The conversation's active history as stored: each message's id (given
   * or derived) and exact JSON text, in order.
   * @param {string} conversationId
   * @returns {{id: string, raw: string}[]}
   */
  activeMessages(conversationId) {
    return this.#use((db) => db.all('SELECT id, raw FROM messages WHERE conversation_id = ? ORDER BY seq', [wf(String(conversationId))]))
      .map((r) => ({ id: String(r.id), raw: String(r.raw) }));
  }

  /**
   * The conversation's active history, in order, each message as it was
   * given (parsed from its stored JSON).
   * @param {string} conversationId
   * @returns {Message[]}
   */
  history(conversationId) {
    return this.historyRaw(conversationId).map((r) => JSON.parse(r));
  }

  /**
   * The conversation's active history, each message's exact JSON text.
   * @param {string} conversationId
   * @returns {string[]}
   */
  historyRaw(conversationId) {
    return this.#use((db) => db.all('SELECT raw FROM messages WHERE conversation_id = ? ORDER BY seq', [wf(String(conversationId))])).map((r) => String(r.raw));
  }

  /**
   * A message a compaction removed: the conversation's message of this id,
   * or null. Without a conversation (''): the message of the only
   * conversation whose recall holds the id, and when several do a
   * HostError listing them (SCHEMA.md, "Reading by id").
   * @param {string} messageId
   * @param {string} [conversationId]
   * @returns {RecalledMessage | null}
   */
  recall(messageId, conversationId = '') {
    requireString(messageId, 'messageId');
    requireString(conversationId, 'conversationId');
    const rows = this.#use((db) => db.all(`SELECT id, conversation_id, role, content, created_at, raw, removed_at, operation_id,
	COALESCE(search_text, content) AS text FROM recall WHERE id = ?1 AND (?2 = '' OR conversation_id = ?2)
ORDER BY conversation_id LIMIT 11`, [wf(messageId), wf(conversationId)]));
    if (rows.length > 1) {
      const convs = rows.slice(0, 10).map((x) => JSON.stringify(String(x.conversation_id))).join(', ');
      throw new HostError('invalid_request', `recall ${JSON.stringify(messageId)}: the id is in more than one conversation (${convs}): `
        + 'name the conversation');
    }
    const r = rows[0];
    if (!r) return null;
    return {
      message: JSON.parse(String(r.raw)), raw: String(r.raw), id: String(r.id), conversation_id: String(r.conversation_id),
      role: String(r.role), created_at: String(r.created_at), removed_at: String(r.removed_at), operation_id: String(r.operation_id),
      text: String(r.text),
    };
  }

  // ------------------------------------------------------------ blocks

  /**
   * memory_list (docs/spec.md#host-functions): the blocks of `tier` whose label starts with
   * `label_prefix` (taken literally), oldest first.
   * @param {{tier?: string, label_prefix?: string}} req
   * @returns {{blocks: ArchiveBlock[]}}
   */
  list(req) {
    if (!req || typeof req !== 'object') throw new HostError('invalid_request', 'memory_list: input must be an object');
    const tier = req.tier ?? 'archival';
    const prefix = req.label_prefix ?? '';
    if (typeof tier !== 'string' || typeof prefix !== 'string') {
      throw new HostError('invalid_request', 'memory_list: tier and label_prefix must be strings');
    }
    const rows = this.#blocks('id, label, content', tier, prefix);
    return { blocks: rows.map((r) => ({ id: String(r.id), label: String(r.label), content: String(r.content) })) };
  }

  /**
   * The ids of the blocks `list` answers, oldest first, without reading
   * their content (compactAhead compares them before and after).
   * @param {string} tier
   * @param {string} labelPrefix
   * @returns {string[]}
   */
  [ARCHIVE_IDS](tier, labelPrefix) {
    return this.#blocks('id', tier, labelPrefix).map((r) => String(r.id));
  }

  /**
   * `columns` of the blocks of `tier` whose label starts with
   * `labelPrefix` (taken literally), oldest first.
   * @param {string} columns
   * @param {string} tier
   * @param {string} labelPrefix
   */
  #blocks(columns, tier, labelPrefix) {
    return this.#use((db) => db.all(`SELECT ${columns} FROM blocks
WHERE tier = ?1 AND label >= ?2 AND substr(label, 1, length(?2)) = ?2 ORDER BY pos`, [wf(tier), wf(labelPrefix)]));
  }

  /**
   * What each archived block's content says of itself, as every host
   * reads it (the plug-in's parseBlocks export): `{batch: {…}}` for a
   * batch (operation_id, depth, start_time, end_time, message_count,
   * source_message_ids, method, summary), `{batch: null}` for free text,
   * and `{batch: null, malformed: "…"}` when the first line is meant as
   * batch metadata but cannot be read (the block is then a plain one,
   * whole).
   * @param {string[]} contents
   * @returns {{batch: BatchMeta | null, malformed?: string}[]}
   */
  parseBlocks(contents) {
    if (contents.length === 0) return [];
    return this.#export('parseBlocks', JSON.stringify({ contents: contents.map(wf) }), 'reading archived blocks').blocks;
  }

  /**
   * An archival block in full, or null: its content as written (metadata
   * line included) and, for a batch, the parsed metadata — with
   * `malformed` saying what is wrong when the first line is meant as
   * metadata but cannot be read (parseBlocks).
   * @param {string} blockId
   * @returns {StoredBlock | null}
   */
  block(blockId) {
    const r = this.#use((db) => db.get(`SELECT id, tier, label, content, COALESCE(conversation_id, '') AS conversation_id, reason,
	COALESCE(operation_id, '') AS operation_id, created_at FROM blocks WHERE id = ?`, [wf(requireString(blockId, 'blockId'))]));
    if (!r) return null;
    const content = String(r.content);
    const [meta] = this.parseBlocks([content]);
    /** @type {StoredBlock} */
    const b = {
      id: String(r.id), tier: String(r.tier), label: String(r.label), content, conversation_id: String(r.conversation_id),
      reason: String(r.reason), operation_id: String(r.operation_id), created_at: String(r.created_at), batch: meta.batch,
    };
    if (meta.malformed !== undefined) b.malformed = meta.malformed;
    return b;
  }

  /**
   * A recalled message or an archived block by id — what a search hit's
   * `id` names: `{kind: "message", message, …}` (the conversation's, or
   * without one as recall finds it) or `{kind: "batch", block}`; null
   * when neither has this id (a message wins a clash).
   * @param {string} id
   * @param {string} [conversationId]
   * @returns {ReadRecord | null}
   */
  read(id, conversationId = '') {
    const m = this.recall(id, conversationId);
    if (m) return { kind: 'message', ...m };
    const b = this.block(id);
    if (b) return { kind: 'batch', block: b };
    return null;
  }

  // ------------------------------------------------------------ commit

  /**
   * compaction_commit (docs/spec.md#compaction_commit), in one transaction
   * or nothing (hostfuncs/store/SCHEMA.md, "The commit"): the rows and
   * checks of the plug-in's planCommit export, written with the shared
   * queries. `req` is the commit, or its exact JSON text (what the
   * plug-in sent: the host functions pass it so).
   *
   * Store-owned (`history_owner` "store" or absent): the removed messages
   * move from the active history to recall (indexed by the commit's
   * `search_text`) and the clip-archive is inserted before what stays (as
   * the commit's `insert_raw`, the message in the history's shape, when it
   * has one; none when `insert_message` is null); each of
   * `replace_messages` moves to recall (an original recall holds already
   * stays) and its row takes the replacement, same position.
   * Caller-owned (`history_owner: "caller"`, docs/spec.md#who-owns-the-history):
   * the active history is not touched; each of `recall_writes` is written
   * to recall once (another conversation's message of the same id is
   * another message); only `archive_deletes` can conflict.
   *
   * Throws a HostError: `conflict` when an id to remove, replace or delete
   * no longer exists (another compaction won), `invalid_request` for a
   * malformed commit, naming the field, or a DuplicateIDError when an id
   * it adds is held already.
   * @param {CommitInput | string} req
   * @returns {{ok: true}}
   */
  commit(req) {
    let text;
    if (typeof req === 'string') text = req;
    else if (req && typeof req === 'object' && !Array.isArray(req)) {
      try {
        text = /** @type {string} */ (stringifyJSON(req, ''));
      } catch (err) {
        throw new HostError('invalid_request', `compaction_commit: ${err instanceof ClipfoldError ? err.detail : errText(err)}`);
      }
    } else throw new HostError('invalid_request', `compaction_commit: input must be an object, got ${describe(req)}`);
    this.#refuseWriteIfNewer();
    this.#write(this.planCommit(text));
    return { ok: true };
  }

  /**
   * compaction_commit from a plan the planCommit export made (for
   * `[PLAN_INPUT]`'s input) earlier, on another instance: the SQL only.
   * @param {CommitPlan} plan
   * @returns {{ok: true}}
   */
  [COMMIT_PLANNED](plan) {
    this.#refuseWriteIfNewer();
    this.#write(plan);
    return { ok: true };
  }

  /**
   * Commits a small compaction of its own (a caller-owned one: recall
   * writes and an archived batch, indexed for search) on a `:memory:`
   * store, once per process: node-sqlite3-wasm compiles SQLite's code
   * lazily, function by function, on first use, and the first commit that
   * indexes text for search paid for it (about 15–20 ms, as much as the
   * rest of the commit). The database is in this process's one instance
   * of SQLite's module, so what is compiled serves every store. A failure
   * is ignored: the commit it stands for reports its own.
   */
  [WARM_WRITES]() {
    if (writesWarmed) return;
    writesWarmed = true;
    let mem;
    try {
      const plan = this.planCommit(WARM_COMMIT); // on this store's plug-in, warm when a compactor lent it
      mem = new SQLiteStore(MEMORY_PATH);
      mem[COMMIT_PLANNED](plan);
    } catch {
      // not warmed: the real commit says what is wrong, if anything is
    } finally {
      mem?.close();
    }
  }

  /**
   * The planCommit export's input for a commit's exact JSON text, at the
   * store's clock.
   * @param {string} text
   * @returns {string}
   */
  [PLAN_INPUT](text) {
    return `{"now":${this.now().getTime()},"commit":${text}}`;
  }

  /**
   * Writes a commit's plan in one transaction: its checks first (a
   * failed one is a conflict and changes nothing), then its rows.
   * @param {CommitPlan} plan
   */
  #write(plan) {
    const { conversation_id: conv, operation_id: op, now } = plan;
    const q = this.#sql.q;
    this.#tx(() => {
      const db = this.#db;
      if (plan.checks.length > 0) {
        const failed = db.all(q.commit_check, [conv, JSON.stringify(plan.checks)]);
        if (failed.length > 0) throw checkFailed(conv, op, failed);
      }
      const ins = plan.insert;
      if (ins) db.run(q.insert_clip_archive, [ins.id, conv, ins.role, ins.content, ins.created_at, ins.raw]);
      if (plan.move_ids.length > 0) db.run(q.move_to_recall, [conv, JSON.stringify(plan.move_ids), now, op, JSON.stringify(plan.search_text)]);
      if (plan.remove_ids.length > 0) db.run(q.remove_messages, [conv, JSON.stringify(plan.remove_ids)]);
      for (const r of plan.replace) db.run(q.replace_message, [conv, r.id, r.new_id, r.role, r.content, r.raw]);
      if (plan.recall_writes.length > 0) {
        const stmt = db.prepare(q.write_recall);
        try {
          for (const w of plan.recall_writes) stmt.run([w.id, conv, w.role, w.content, w.created_at, w.raw, now, op, w.search_text]);
        } finally {
          stmt.finalize();
        }
      }
      if (plan.delete_ids.length > 0) db.run(q.delete_blocks, [JSON.stringify(plan.delete_ids)]);
      for (const w of plan.archive_writes) db.run(q.write_block, [w.tier, w.label, w.content, now, conv, w.reason, op]);
    });
  }

  /**
   * The host functions' compaction_commit with the exact JSON the plug-in
   * sent (hostfns.js), so every message's JSON is stored as it was.
   * @param {string} text
   * @returns {{ok: true}}
   */
  [COMMIT_JSON](text) {
    return this.commit(text);
  }

  /**
   * What a commit writes: the plug-in's planCommit export for `req` (the
   * commit, or its exact JSON text) at the store's clock (`now`).
   * A HostError `invalid_request` names what is wrong with a malformed
   * commit.
   * @param {CommitInput | string} req
   * @returns {CommitPlan}
   */
  planCommit(req) {
    const text = typeof req === 'string' ? req : stringifyJSON(req, 'commit');
    return this.#export('planCommit', this[PLAN_INPUT](text), 'compaction_commit');
  }

  // ------------------------------------------------------------ search

  /**
   * Lends the store a plug-in (createCompactor does): its searchQuery
   * export, used when no queryAnalyzer was given, and its store exports
   * (planCommit, planAppend, parseBlocks) called synchronously, `sync`,
   * instead of the shared plug-in.
   * @param {{has(name: string): boolean, callJSON(name: string, input: unknown): Promise<any>, sync?: SyncCaller}} plugin
   */
  bindPlugin(plugin) {
    if (plugin.has('searchQuery')) this.#lent = (q) => plugin.callJSON('searchQuery', { query: q });
    if (plugin.sync && plugin.has('planCommit') && this.#plugin === null) {
      this.#plugin = plugin.sync;
      plugin.sync.warm?.(); // the first append or commit finds it loaded
    }
  }

  /**
   * Sets what the search index holds for active messages of the
   * conversation (SCHEMA.md, "messages"): `texts` maps a message id to its
   * search text as the plug-in renders it over the stored active history
   * (the decodeHistory export with `search_text`). Appended messages are
   * indexed by their content until then; an id the active history does not
   * hold is ignored. Runs queries/index_active.sql.
   * @param {string} conversationId
   * @param {Record<string, string>} texts
   */
  indexActive(conversationId, texts) {
    requireString(conversationId, 'conversationId');
    if (texts === null || typeof texts !== 'object' || Array.isArray(texts)) {
      throw invalidArgument('texts', `must be an object of message id to search text, got ${describe(texts)}`);
    }
    /** @type {Record<string, string>} */
    const clean = {};
    for (const [k, v] of Object.entries(texts)) clean[wf(k)] = wf(requireString(v, `texts[${JSON.stringify(k)}]`));
    if (Object.keys(clean).length === 0) return;
    this.#tx(() => this.#db.run(this.#sql.q.index_active, [wf(conversationId), JSON.stringify(clean)]));
  }

  /**
   * Ranked search (memory_read, docs/spec.md#search) over the active history, archived
   * batches and recalled messages in one list, best first, ties to the
   * more recent. `query` is a question as a person asks it, analysed by
   * the plug-in's searchQuery export (any of its words matches; no
   * character is search syntax; the store never splits words itself).
   * Clip-archives are never hits; a message still in the context is a hit
   * with `in_context` true. `opts.inContext`: the messages in the context
   * of a conversation whose caller keeps them (caller-owned;
   * `conversationId` required), as the decodeHistory export with
   * `search_text` gives them, ranked with everything else for this search
   * only (nothing of them is stored; one the conversation's recall holds
   * is its recalled hit).
   * @param {string} query
   * @param {SearchOptions} [opts]
   * @returns {Promise<SearchHit[]>}
   */
  async search(query, opts = {}) {
    const text = requireString(query, 'query');
    const lent = this.#lent;
    let analysis;
    if (this.#analyzer) analysis = await this.#analyzer(text);
    else if (lent) {
      try {
        analysis = await lent(text);
      } catch (err) {
        // The lending compactor was closed: fall back to the shared plug-in.
        if (this.#lent === lent && /closed/.test(errText(err))) this.#lent = null;
        else throw err;
      }
    }
    analysis ??= await (await defaultAnalyzer())(text);
    return this.searchFts5(String(analysis?.fts5 ?? ''), opts);
  }

  /**
   * `search` with the query already analysed: `match` is the searchQuery
   * export's `fts5` ("" finds nothing). Runs queries/search.sql.
   * @param {string} match
   * @param {SearchOptions} [opts]
   * @returns {SearchHit[]}
   */
  searchFts5(match, { conversationId = '', limit = DEFAULT_SEARCH_LIMIT, inContext } = {}) {
    requireString(match, 'match');
    requireString(conversationId, 'conversationId');
    if (!Number.isInteger(limit)) throw invalidArgument('limit', `must be a whole number, got ${describe(limit)}`);
    const rowsIn = inContext === undefined || inContext === null ? null : inContextRows(conversationId, inContext);
    if (!match) return [];
    const n = limit <= 0 ? DEFAULT_SEARCH_LIMIT : Math.min(Math.floor(limit), MAX_SEARCH_LIMIT);
    const args = [wf(match), wf(conversationId), n];
    const rows = rowsIn?.length ? this.#searchInContext(wf(conversationId), rowsIn, args)
      : this.#use((db) => db.all(this.#sql.q.search, args));
    const metas = this.parseBlocks(rows.filter((r) => r.kind === 'batch').map((r) => String(r.text)));
    let nb = 0;
    return rows.map((r) => {
      const created = String(r.created_at);
      /** @type {SearchHit} */
      const hit = {
        kind: r.kind === 'batch' ? 'batch' : 'message', id: String(r.id), conversation_id: String(r.conversation_id),
        start_time: created, end_time: created, score: Number(r.score), snippet: String(r.snippet), text: String(r.text),
        role: String(r.role), label: String(r.label), created_at: created, operation_id: String(r.operation_id),
        in_context: Boolean(r.in_context), depth: null, method: null, message_count: null, source_message_ids: null,
      };
      if (hit.kind === 'batch') {
        const meta = metas[nb++].batch;
        if (meta) {
          hit.text = meta.summary;
          hit.start_time = meta.start_time;
          hit.end_time = meta.end_time;
          hit.depth = meta.depth;
          hit.method = meta.method;
          hit.message_count = meta.message_count;
          hit.source_message_ids = meta.source_message_ids;
        }
      }
      return hit;
    });
  }

  /**
   * search.sql with a caller's messages indexed in a transaction that is
   * rolled back (queries/search_in_context.sql): nothing of them stays.
   * @param {string} conversationId
   * @param {unknown[][]} rowsIn
   * @param {unknown[]} args
   * @returns {Record<string, unknown>[]}
   */
  #searchInContext(conversationId, rowsIn, args) {
    if (this.readOnly) {
      throw new HostError('invalid_request', `SQLiteStore: ${this.path} was opened read-only (readOnly: true): a search with `
        + 'inContext messages indexes them for the search, which needs a writable store');
    }
    /** @type {Record<string, unknown>[]} */
    let rows = [];
    try {
      this.#tx(() => {
        this.#db.run(this.#sql.q.search_in_context, [conversationId, JSON.stringify(rowsIn)]);
        rows = this.#db.all(this.#sql.q.search, args);
        throw ROLL_BACK; // the transaction's end: nothing of them stays
      });
    } catch (err) {
      if (err !== ROLL_BACK) throw err;
    }
    return rows;
  }

  // ------------------------------------------------------------ dump

  /**
   * Every table (schema, data and the full-text index's own tables) as
   * sorted lines: two dumps are equal exactly when the stored data is.
   * @returns {string}
   */
  dump() {
    return this.#use((db) => this.#dump(db));
  }

  /** @param {InstanceType<typeof Database>} db */
  #dump(db) {
    /** @type {string[]} */
    const lines = [];
    for (const o of db.all("SELECT type, name, COALESCE(sql, '') AS sql FROM sqlite_master ORDER BY type, name")) {
      lines.push(`${o.type} ${o.name}: ${o.sql}`);
      if (o.type !== 'table') continue;
      const rows = db.all(`SELECT * FROM "${String(o.name).replace(/"/g, '""')}"`)
        .map((r) => `  ${JSON.stringify(r, (_, v) => (typeof v === 'bigint' ? String(v) : v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v))}`);
      lines.push(...rows.sort());
    }
    return `${lines.join('\n')}\n`;
  }

  /** The same as dump() (the name tests have used). */
  snapshot() {
    return this.dump();
  }
}

/**
 * MemoryStore: the SQLite store on a private in-memory database — the same
 * schema, commit and search as a file, gone when closed. (Earlier versions
 * kept plain JavaScript maps; one implementation of search now serves
 * both.)
 */
export class MemoryStore extends SQLiteStore {
  /** @param {Omit<SQLiteStoreOptions, 'busyTimeoutMs'>} [opts] */
  constructor(opts = {}) {
    super(MEMORY_PATH, opts);
  }
}

/**
 * Whether the database file at path is in WAL mode (its header's read and
 * write versions are 2).
 * @param {string} path
 */
function isWal(path) {
  if (!existsSync(path)) return false;
  try {
    const b = readFileSync(path).subarray(0, 20);
    return b.length >= 20 && b.subarray(0, 16).toString('latin1') === 'SQLite format 3\0' && (b[18] === 2 || b[19] === 2);
  } catch {
    return false;
  }
}

/**
 * Puts the database back as it was before a write transaction that failed
 * half-way (an I/O error, a full disk, a file-size limit, a process that
 * died) — when its rollback journal is still there — and deletes the
 * journal: what SQLite does on the first read of a file with a "hot"
 * journal, except that node-sqlite3-wasm never finds one hot. SQLite
 * plays a journal back only when no connection holds a RESERVED lock,
 * which it asks the VFS (xCheckReservedLock) while holding its own SHARED
 * lock; node-sqlite3-wasm's locks are one `<file>.lock` directory for
 * every level, and its answer is whether that directory exists — always,
 * since the asking connection made it. The answer is wrong exactly then:
 * the directory is a mutex, so while this connection holds it no other
 * one holds any lock. So for one read, run here, the directory's
 * existence check for this file answers "no": SQLite then plays the
 * journal back itself (its checksums, its format), under the lock.
 * Without it the journal stayed, every later read saw the half-written
 * file ("database disk image is malformed"), and the next write deleted
 * the journal: the file was corrupt for good. The read is synchronous,
 * so no other code sees the check changed. See RATIONALE.md.
 * @param {InstanceType<typeof Database>} db an open connection to path, in no transaction
 * @param {string} path
 */
function rollBackHotJournal(db, path) {
  if (db.inTransaction || !existsSync(`${path}-journal`)) return;
  const lockDir = `${resolve(path)}.lock`;
  const f = /** @type {{accessSync: typeof fs.accessSync}} */ (fs);
  const accessSync = f.accessSync;
  f.accessSync = function accessLockFree(/** @type {import('node:fs').PathLike} */ p, /** @type {number | undefined} */ mode) {
    if (p === lockDir) throw Object.assign(new Error(`ENOENT: no such file or directory, access '${lockDir}'`), { code: 'ENOENT' });
    return accessSync.call(fs, p, mode);
  };
  try {
    db.all('SELECT 1 FROM sqlite_master LIMIT 1');
  } finally {
    f.accessSync = accessSync;
  }
}

/**
 * Whether this process may create files in the directory.
 * @param {string} dir
 */
function canWrite(dir) {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** @param {string} path */
function shmError(path) {
  return new HostError('unavailable', `SQLiteStore: ${path}-shm exists: a Go or Python clipfold store (or another SQLite program) `
    + 'has this database open in WAL mode, or ended without closing it. The Node store cannot use a file at the same time as '
    + 'them (its locks are a lock directory, not POSIX locks): close them (or open and close the file once with the Go or '
    + 'Python store), then retry.', true);
}

/** @param {unknown} err */
function errText(err) {
  return err instanceof Error ? err.message : String(err);
}

/**
 * A SQLite "database is locked" failure as a retryable `unavailable`
 * (naming the lock's owner); anything else unchanged.
 * @param {string} what
 * @param {unknown} err
 * @param {string} lockDir
 */
function busyError(what, err, lockDir) {
  if (err instanceof HostError) return err;
  const text = errText(err);
  if (/database is locked|database is busy|SQLITE_BUSY/i.test(text)) {
    return new HostError('unavailable', `sqlite: ${what}: ${text} (another connection held the lock for the whole busy timeout)`
      + `${lockDir ? describeOwner(lockDir) : ''}`, true);
  }
  return err;
}

/**
 * The plug-in's searchQuery export on the shared main-thread instance
 * (shared.js): what a store used without a compactor analyses queries
 * with.
 * @returns {Promise<QueryAnalyzer>}
 */
async function defaultAnalyzer() {
  const p = await sharedPlugin();
  return (q) => p.callJSON('searchQuery', { query: q });
}
