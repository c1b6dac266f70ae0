// The store vectors (testdata/store): the appends, commits and reads every
// store must answer alike, with the state it must hold after — run here
// against the Node store, as the Go SQLite and PostgreSQL stores run them
// (hostfuncs/store/storetest) and the Python store does
// (bindings/python/tests/test_store_vectors.py). Each case gets a fresh
// store on a file, made without a compactor (so it loads the shared
// plug-in); its state is read with testdata/store/state.sql once it is
// closed.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sqlite from 'node-sqlite3-wasm';
import { ClipfoldError, DuplicateIDError, HostError } from '../src/errors.js';
import { SQLiteStore } from '../src/index.js';
import { repoRoot, requireExports } from './helpers/common.js';

const dir = join(repoRoot, 'testdata', 'store');
const BLOCK_ID = /^blk_[0-9a-f]{24}$/;
const stateSQL = readFileSync(join(dir, 'state.sql'), 'utf8');
const files = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();

class NotFound extends Error {}

/** @param {unknown} e */
function errorKind(e) {
  if (e instanceof NotFound) return 'not_found';
  if (e instanceof DuplicateIDError) return 'duplicate';
  if (e instanceof HostError && e.code === 'conflict') return 'conflict';
  assert.ok(e instanceof HostError || e instanceof ClipfoldError, `an unexpected error: ${e}`);
  return 'invalid';
}

/**
 * @param {SQLiteStore} s
 * @param {string} label
 */
function blockByLabel(s, label) {
  const b = s.list({ tier: 'archival', label_prefix: label }).blocks.find((x) => x.label === label);
  if (!b) throw new NotFound(`no block labelled ${JSON.stringify(label)}`);
  return /** @type {NonNullable<ReturnType<SQLiteStore['block']>>} */ (s.block(b.id));
}

/**
 * Every key of want is in got, with an equal value.
 * @param {Record<string, unknown>} want
 * @param {Record<string, unknown>} got
 * @param {string} what
 */
function subset(want, got, what) {
  for (const [k, v] of Object.entries(want)) {
    assert.ok(Object.hasOwn(got, k), `${what}: no ${JSON.stringify(k)}`);
    assert.deepEqual(got[k], v, `${what}: ${JSON.stringify(k)}`);
  }
}

/**
 * @param {SQLiteStore} s
 * @param {number} i
 * @param {any} step
 */
async function runStep(s, i, step) {
  const want = step.want;
  const what = `step ${i}`;
  try {
    if (step.append) {
      const a = step.append;
      const msgs = a.messages.map((/** @type {unknown} */ m) => JSON.stringify(m));
      if (a.new_only) {
        const added = s.appendNew(a.conversation_id, msgs);
        if (want.appended) assert.deepEqual(added.map((m) => JSON.parse(m).id), want.appended, what);
      } else {
        s.append(a.conversation_id, msgs);
      }
    } else if (step.commit) {
      const deletes = (step.commit.archive_deletes ?? []).map((/** @type {string} */ d) => (d.startsWith('block:')
        ? blockByLabel(s, d.slice('block:'.length)).id : d));
      const at = new Date(step.now);
      s.now = () => at;
      s.commit({ ...step.commit, archive_deletes: deletes });
    } else if (step.read_block) {
      const b = blockByLabel(s, step.read_block.label);
      assert.match(b.id, BLOCK_ID);
      if (b.malformed !== undefined) assert.ok('malformed' in want.block, `${what}: malformed ${JSON.stringify(b.malformed)}`);
      subset(want.block, /** @type {any} */ (b), what);
    } else if (step.recall) {
      const r = s.recall(step.recall.id, step.recall.conversation_id);
      if (!r) throw new NotFound(`recall ${JSON.stringify(step.recall.id)}: not found`);
      assert.deepEqual(r.message, want.message, what);
    } else if (step.search) {
      const hits = await s.search(step.search.query, { conversationId: step.search.conversation_id });
      assert.equal(hits.length, want.hits.length, `${what}: ${JSON.stringify(hits)}`);
      want.hits.forEach((/** @type {Record<string, unknown>} */ w, /** @type {number} */ k) => subset(w, /** @type {any} */ (hits[k]), `${what}: hit ${k}`));
    } else {
      assert.fail(`${what}: no append, commit, read_block, recall or search`);
    }
  } catch (err) {
    if (!want.error || err instanceof assert.AssertionError) throw err;
    assert.equal(errorKind(err), want.error.kind, `${what}: ${err}`);
    for (const word of want.error.says) assert.ok(String(/** @type {Error} */ (err).message).includes(word), `${what}: ${JSON.stringify(String(err))} does not say ${JSON.stringify(word)}`);
    return;
  }
  assert.ok(!want.error, `${what}: no error, expected ${JSON.stringify(want.error)}`);
}

requireExports('planCommit', 'planAppend', 'parseBlocks', 'searchQuery');
assert.ok(files.length > 0, `no store vectors in ${dir}`);
for (const f of files) {
  const { cases } = JSON.parse(readFileSync(join(dir, f), 'utf8'));
  assert.ok(cases.length > 0, `${f}: no cases`);
  describe(f.replace(/\.json$/, ''), () => {
    for (const c of cases) {
      test(c.name, async () => {
        const tmp = mkdtempSync(join(tmpdir(), 'clipfold-storevectors-'));
        try {
          const path = join(tmp, 'store.db');
          const s = new SQLiteStore(path);
          try {
            for (const [i, step] of c.steps.entries()) await runStep(s, i, step);
          } finally {
            s.close();
          }
          const db = new sqlite.Database(path, { readOnly: true });
          let row;
          try {
            row = db.get(stateSQL);
          } finally {
            db.close();
          }
          const got = JSON.parse(String(Object.values(row ?? {})[0]));
          for (const table of ['messages', 'recall', 'blocks']) assert.deepEqual(got[table], c.state[table], `table ${table}`);
        } finally {
          rmSync(tmp, { recursive: true, force: true });
        }
      });
    }
  });
}
