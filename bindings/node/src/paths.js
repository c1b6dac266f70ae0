/**
 * Where the files clipfold needs live: the plug-in (clipfold.wasm) and the
 * SQLite schema and queries shared with the Go and Python stores
 * (migrations/*.sql, queries/*.sql). A published package carries copies of
 * both (put there by `npm pack`'s prepack step); a checkout of the
 * repository finds them where they are built and kept.
 * @module
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package's root directory (the one holding package.json). */
export const PACKAGE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The environment variable naming another directory of .sql files. */
export const SQL_DIR_ENV = 'CLIPFOLD_SQL_DIR';

const REPO_SQL = join('hostfuncs', 'store', 'sqlite');

/**
 * `start` and each of its parents, nearest first.
 * @param {string} start
 */
function* upwards(start) {
  let dir = resolve(start);
  for (;;) {
    yield dir;
    const parent = dirname(dir);
    if (parent === dir) return;
    dir = parent;
  }
}

/**
 * Locates the plug-in: $CLIPFOLD_WASM, else the clipfold.wasm bundled in
 * the package, else build/clipfold.wasm in the working directory or a
 * parent, else in the repository this package lives in.
 * @returns {string}
 */
export function findWasm() {
  if (process.env.CLIPFOLD_WASM) return process.env.CLIPFOLD_WASM;
  const bundled = join(PACKAGE_DIR, 'clipfold.wasm');
  if (existsSync(bundled)) return bundled;
  for (const start of [process.cwd(), PACKAGE_DIR]) {
    for (const dir of upwards(start)) {
      const p = join(dir, 'build', 'clipfold.wasm');
      if (existsSync(p)) return p;
    }
  }
  throw new Error('clipfold: clipfold.wasm not found: not bundled in the package, no build/clipfold.wasm here or above; '
    + 'run `make build` in a clipfold checkout (or set CLIPFOLD_WASM)');
}

/**
 * The directory holding the shared `migrations/` and `queries/`: the
 * package's `sql/` (bundled), else $CLIPFOLD_SQL_DIR, else
 * hostfuncs/store/sqlite of the clipfold checkout above this package or
 * the working directory — the Python store looks in the same places.
 * @param {string} [override] a directory to use instead (tests)
 * @returns {string}
 */
export function sqlDir(override) {
  const ok = (/** @type {string} */ d) => existsSync(join(d, 'migrations', '0001.sql')) && existsSync(join(d, 'queries'));
  if (override) {
    if (!ok(override)) throw new Error(`clipfold: ${override} holds no migrations/0001.sql and queries/`);
    return resolve(override);
  }
  /** @type {string[]} */
  const candidates = [join(PACKAGE_DIR, 'sql')];
  if (process.env[SQL_DIR_ENV]) candidates.push(/** @type {string} */ (process.env[SQL_DIR_ENV]));
  for (const start of [PACKAGE_DIR, process.cwd()]) {
    for (const dir of upwards(start)) candidates.push(join(dir, REPO_SQL));
  }
  for (const c of candidates) if (ok(c)) return resolve(c);
  throw new Error(`clipfold: the SQLite schema files (migrations/*.sql, queries/*.sql) were not found: not in the package (sql/), `
    + `not in $${SQL_DIR_ENV}, not in a clipfold checkout above ${PACKAGE_DIR} or ${process.cwd()}. `
    + `Set ${SQL_DIR_ENV} to hostfuncs/store/sqlite of a clipfold checkout.`);
}

/**
 * @typedef {object} Migration
 * @property {number} version
 * @property {string} name
 * @property {string} sql
 */

/**
 * Every schema step in `dir` (migrations/NNNN.sql: the first line is "-- "
 * and the step's name, the rest its SQL), in version order 1, 2, 3, ….
 * @param {string} dir
 * @returns {Migration[]}
 */
export function loadMigrations(dir) {
  const mdir = join(dir, 'migrations');
  /** @type {Migration[]} */
  const out = [];
  for (const f of readdirSync(mdir).filter((n) => n.endsWith('.sql')).sort()) {
    const stem = f.slice(0, -4);
    const version = /^\d+$/.test(stem) ? Number(stem) : NaN;
    if (!(version >= 1)) throw new Error(`clipfold: migration ${join(mdir, f)}: the file name must be the version number, e.g. 0003.sql`);
    const text = readFileSync(join(mdir, f), 'utf8');
    const nl = text.indexOf('\n');
    if (nl < 0 || !text.startsWith('-- ')) throw new Error(`clipfold: migration ${join(mdir, f)}: the first line must be "-- " and the step's name`);
    out.push({ version, name: text.slice(3, nl).replace(/\r$/, ''), sql: text.slice(nl + 1) });
  }
  out.sort((a, b) => a.version - b.version);
  out.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`clipfold: migration versions in ${mdir} must be 1, 2, 3, …: found ${m.version} where ${i + 1} belongs`);
  });
  return out;
}

/**
 * A shared query's SQL (queries/NAME.sql).
 * @param {string} dir
 * @param {string} name
 */
export function loadQuery(dir, name) {
  return readFileSync(join(dir, 'queries', `${name}.sql`), 'utf8');
}
