// SQLiteStore.appendNew / appendNewRecords: append, in one transaction,
// the messages a conversation holds nowhere yet (neither active nor in
// recall), skipping held ids whatever their content — the Go stores'
// AppendNew (hostfuncs/store/storetest/appendnew.go). Processes on one
// file append the same growing list at once: each message is stored once,
// in order, and no call fails.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { HostError, MemoryStore, SQLiteStore } from '../src/index.js';
import { here } from './helpers/common.js';

/** @type {string} */
let dir;
before(() => { dir = mkdtempSync(join(tmpdir(), 'clipfold-appendnew-')); });
after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

/**
 * @param {number} i
 * @param {Record<string, unknown>} [over]
 */
const msg = (i, over = {}) => ({
  id: `m${i}`, role: i % 2 === 0 ? 'user' : 'assistant', content: `message ${i} about the tokenizer`,
  created_at: new Date(Date.UTC(2026, 1, 28, 10, 0, i)).toISOString(), ...over,
});

/** @param {SQLiteStore} s @param {string} conv */
const activeIds = (s, conv) => s.activeMessages(conv).map((m) => m.id);

/** Moves the conversation's messages `ids` to recall (a compaction's commit). */
function recall(/** @type {SQLiteStore} */ s, /** @type {string} */ conv, /** @type {string[]} */ ids) {
  s.commit({
    conversation_id: conv, operation_id: 'op1', remove_message_ids: ids,
    insert_message: { id: 'ca-op1', conversation_id: conv, role: 'system', content: '[Context Summary]', created_at: '2026-03-01T10:00:00.000Z' },
  });
}

describe('appendNew', () => {
  test('appends what the conversation holds nowhere, skips held ids whatever their content', () => {
    const s = new MemoryStore();
    try {
      const full = Array.from({ length: 6 }, (_, i) => msg(i));
      s.append('c1', full.slice(0, 4));
      recall(s, 'c1', ['m0', 'm1']);
      s.append('c2', full); // another conversation's same ids are not c1's

      const added = s.appendNew('c1', full);
      assert.deepEqual(added.map((m) => m.id), ['m4', 'm5'], 'only what c1 holds nowhere is appended, in order');
      assert.equal(added[0], full[4], 'the messages appended are returned as given');
      assert.deepEqual(activeIds(s, 'c1'), ['ca-op1', 'm2', 'm3', 'm4', 'm5']);

      assert.deepEqual(s.appendNew('c1', full), [], 'a list appended again appends nothing');
      assert.deepEqual(s.appendNew('c1', [msg(0, { content: 'other words, recalled id' }), msg(3, { content: 'other words, active id' })]), [],
        'held ids are skipped whatever their content');
      assert.deepEqual(s.history('c1')[2], msg(3), 'the held message is left as it was');
      assert.deepEqual(JSON.parse(/** @type {any} */ (s.recall('m0', 'c1')).raw), msg(0));
    } finally {
      s.close();
    }
  });

  test('refuses what append refuses, and then appends nothing', () => {
    const s = new MemoryStore();
    try {
      s.append('c1', [msg(0)]);
      assert.throws(() => s.appendNew('c1', [msg(7), msg(7)]), (/** @type {any} */ e) => e instanceof HostError && /m7/.test(e.message));
      assert.throws(() => s.appendNew('c1', [msg(8), msg(9, { role: 'robot' })]), /messages\[1\]\.role: .*"robot"/);
      assert.throws(() => s.appendNew('', [msg(8)]), /conversation_id must be a non-empty string/);
      assert.throws(() => s.appendNewRecords('c1', [{ id: 'm8', role: 'user', content: 'a', raw: '{}' }, { id: 'm8', role: 'user', content: 'b', raw: '{}' }]),
        /repeats records\[0\]/);
      assert.deepEqual(activeIds(s, 'c1'), ['m0'], 'a refused list appends nothing');
      assert.throws(() => s.append('c1', [msg(0)]), /already stored/, 'append still refuses a held id');
    } finally {
      s.close();
    }
  });

  test('records, as compress stores them', () => {
    const s = new MemoryStore();
    try {
      const records = Array.from({ length: 4 }, (_, i) => ({ id: `a${i}`, role: 'user', content: `text ${i}`, created_at: null, raw: JSON.stringify({ role: 'user', content: `text ${i}` }) }));
      assert.deepEqual(s.appendNewRecords('c1', records.slice(0, 2)), records.slice(0, 2));
      assert.deepEqual(s.appendNewRecords('c1', records), records.slice(2));
      assert.deepEqual(s.appendNewRecords('c1', records), []);
      assert.deepEqual(s.historyRaw('c1'), records.map((r) => r.raw));
    } finally {
      s.close();
    }
  });

  test('eight processes append the same growing list to one file at once: each message once, in order, none fails', async () => {
    const file = join(dir, 'procs.db');
    new SQLiteStore(file).close(); // migrated once, before the race
    const rounds = [10, 25, 40, 60];
    const child = `
      const { SQLiteStore } = await import(${JSON.stringify(pathToFileURL(join(here, '..', '..', 'src', 'index.js')).href)});
      const msgs = Array.from({ length: 60 }, (_, i) => ({ id: 'm' + i, role: 'user', content: 'message ' + i }));
      process.stdout.write('ready\\n');
      process.stdin.once('data', () => {
        const s = new SQLiteStore(${JSON.stringify(file)});
        const counts = ${JSON.stringify(rounds)}.map((k) => s.appendNew('race', msgs.slice(0, k)).length);
        s.close();
        process.stdout.write(JSON.stringify(counts) + '\\n');
        process.exit(0);
      });`;
    const procs = Array.from({ length: 8 }, () => spawn(process.execPath, ['--input-type=module', '-e', child], { stdio: ['pipe', 'pipe', 'pipe'] }));
    const outputs = procs.map((p) => {
      let out = '';
      let err = '';
      p.stdout.on('data', (b) => { out += b; });
      p.stderr.on('data', (b) => { err += b; });
      const ready = new Promise((resolve) => { p.stdout.on('data', () => { if (out.startsWith('ready\n')) resolve(undefined); }); });
      const done = new Promise((resolve) => { p.on('close', (code) => resolve({ code, out, err })); });
      return { ready, done };
    });
    await Promise.all(outputs.map((o) => o.ready));
    for (const p of procs) p.stdin.write('go\n'); // every process starts at once
    let appended = 0;
    for (const o of outputs) {
      const { code, out, err } = /** @type {{code: number, out: string, err: string}} */ (await o.done);
      assert.equal(code, 0, err);
      appended += JSON.parse(out.split('\n')[1]).reduce((/** @type {number} */ a, /** @type {number} */ b) => a + b, 0);
    }
    const s = new SQLiteStore(file);
    try {
      assert.deepEqual(activeIds(s, 'race'), Array.from({ length: 60 }, (_, i) => `m${i}`));
      assert.equal(appended, 60, 'what the processes say they appended is what is stored');
    } finally {
      s.close();
    }
  });
});

