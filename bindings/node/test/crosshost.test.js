// One database file, two hosts: the Go store (the `clipfold` command,
// built here from cmd/clipfold) writes a file that the Node SQLiteStore
// opens, searches and writes to, and the Go store reads what Node wrote.
// Both run the same .sql files and the same query analysis, so their
// search results must be the same hits in the same order.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCompactor, SQLiteStore } from '../src/index.js';
import { repoRoot, wasmPath } from './helpers/common.js';
import { makeConversation } from './helpers/conversation.js';

/** @type {string} */
let tmp;
/** @type {string} */
let cli;
before(() => {
  tmp = mkdtempSync(join(tmpdir(), 'clipfold-crosshost-'));
  cli = join(tmp, 'clipfold');
  const r = spawnSync('go', ['build', '-o', cli, './cmd/clipfold'], { cwd: repoRoot, encoding: 'utf8' });
  assert.equal(r.error, undefined, `go build ./cmd/clipfold: ${r.error} (this test needs the Go toolchain)`);
  assert.equal(r.status, 0, `go build ./cmd/clipfold failed:\n${r.stderr}`);
});
after(() => { if (tmp) rmSync(tmp, { recursive: true, force: true }); });

/**
 * Runs the Go command; returns its stdout (throws on failure).
 * @param {string[]} args
 */
function go(...args) {
  const r = spawnSync(cli, args, { encoding: 'utf8', env: { ...process.env, CLIPFOLD_WASM: wasmPath() }, maxBuffer: 256 << 20 });
  assert.equal(r.status, 0, `clipfold ${args.join(' ')}:\n${r.stderr}`);
  return r.stdout;
}

/**
 * Go's and Node's hits for one query: the same records in the same
 * order, with the same scores, snippets and texts.
 * @param {any[]} goHits
 * @param {any[]} nodeHits
 * @param {string} q
 */
function assertSameHits(goHits, nodeHits, q) {
  assert.deepEqual(nodeHits.map((h) => `${h.kind} ${h.id}`), goHits.map((h) => `${h.kind} ${h.id}`), `query ${JSON.stringify(q)}`);
  nodeHits.forEach((h, i) => {
    const g = goHits[i];
    assert.ok(Math.abs(h.score - g.score) < 1e-9, `query ${q}: hit ${i} scores ${h.score} in Node, ${g.score} in Go`);
    for (const k of ['conversation_id', 'start_time', 'end_time', 'snippet', 'text', 'operation_id']) {
      assert.equal(h[k], g[k] ?? '', `query ${q}: hit ${i} (${h.id}).${k}`);
    }
    if (h.kind === 'batch') {
      assert.deepEqual(h.source_message_ids, g.source_message_ids ?? g.batch?.source_message_ids);
    }
  });
}

describe('a file shared by the Go and Node stores', () => {
  test('Go writes; Node reads, searches (same hits as Go), reads by id and compacts more; Go reads what Node wrote', async () => {
    const db = join(tmp, 'go-first.db');
    const file = join(repoRoot, 'testdata', 'conversations', 'debugging-session.json');
    go('compact', file, '--db', db, '--quiet');
    assert.ok(!existsSync(`${db}-shm`), 'the Go store closed the file');
    const conv = 'conv-checkout-inc-4471';
    const facts = JSON.parse(readFileSync(file.replace(/\.json$/, '.facts.json'), 'utf8'));
    const questions = [...facts.map((/** @type {any} */ f) => f.query), 'Why did checkouts fail after the deploy?', 'what was the fix?'];

    const store = new SQLiteStore(db);
    const c = await createCompactor({ wasmPath: wasmPath(), store });
    let platypus = '';
    try {
      assert.deepEqual(store.history(conv), JSON.parse(go('show', conv, '--db', db, '--json')));
      for (const q of questions) {
        const goHits = JSON.parse(go('search', q, '--db', db, '--json', '--limit', '15', '--conversation', conv)).hits;
        const nodeHits = await c.search(q, { conversationId: conv, limit: 15 });
        assert.ok(nodeHits.length > 0, `query ${q} finds nothing`);
        assertSameHits(goHits, nodeHits, q);
      }
      // Read by id: a recalled message byte for byte, a batch in full.
      const [msgHit] = await c.search(questions[0], { conversationId: conv });
      const read = store.read(msgHit.id);
      assert.equal(read?.kind, 'message');
      assert.equal(/** @type {any} */ (read).raw, go('recall', msgHit.id, '--db', db).trimEnd());
      const [block] = store.list({ tier: 'archival', label_prefix: `compaction-batch-${conv}-` }).blocks;
      const goBlock = JSON.parse(go('recall', block.id, '--db', db, '--json'));
      const nodeBlock = store.read(block.id);
      assert.equal(nodeBlock?.kind, 'batch');
      const b = /** @type {any} */ (nodeBlock).block;
      for (const k of ['id', 'label', 'conversation_id', 'created_at', 'operation_id', 'reason']) assert.equal(b[k], goBlock[k], `block.${k}`);
      for (const k of ['depth', 'start_time', 'end_time', 'message_count', 'source_message_ids', 'method']) assert.deepEqual(b.batch[k], goBlock.batch[k], `block.batch.${k}`);

      // Node writes: more conversation, compacted into the same file.
      const more = makeConversation('more', 60).map((m, i) => ({ ...m, id: `node-${i}`, conversation_id: conv,
        created_at: new Date(Date.parse('2026-03-04T09:00:00.000Z') + i * 60_000).toISOString() }));
      more[7] = { ...more[7], role: 'user', content: 'The quarterly platypus audit is due on Friday.' };
      platypus = JSON.stringify(more[7]);
      store.append(conv, more);
      const r = await c.compress(conv, undefined, { config: { keep_recent: 5 } });
      assert.equal(r.failed, false, `${r.failure_code}: ${r.failure_message}`);
      assert.deepEqual(store.history(conv), r.history);
    } finally {
      await c.close();
      store.close();
    }
    assert.ok(!existsSync(`${db}.lock`), 'the Node store released the file');

    // Go reads what Node wrote.
    const reopened = new SQLiteStore(db);
    assert.deepEqual(JSON.parse(go('show', conv, '--db', db, '--json')), reopened.history(conv));
    reopened.close();
    const goHits = JSON.parse(go('search', 'when is the platypus audit due?', '--db', db, '--json', '--conversation', conv)).hits;
    assert.ok(goHits.some((/** @type {any} */ h) => h.id === 'node-7' || (h.source_message_ids ?? []).includes('node-7')),
      `Go finds what Node archived: ${goHits.map((/** @type {any} */ h) => h.id)}`);
    assert.equal(go('recall', 'node-7', '--db', db).trimEnd(), platypus, 'Go recalls the message Node stored, byte for byte');
  });

  test('Node creates the file; Go opens it without migrating and finds the same hits', async () => {
    const db = join(tmp, 'node-first.db');
    const conv = 'node-conv';
    const store = new SQLiteStore(db);
    const c = await createCompactor({ wasmPath: wasmPath(), store });
    const history = makeConversation(conv, 80);
    /** @type {Record<string, any[]>} */
    const nodeHits = {};
    const questions = ['Why did the staging migration fail?', 'which decision about the email hash?', 'run_sql invoices count'];
    try {
      store.append(conv, history);
      const r = await c.compress(conv, undefined, { config: { keep_recent: 6, chunk_size: 15 } });
      assert.equal(r.failed, false, `${r.failure_code}: ${r.failure_message}`);
      for (const q of questions) nodeHits[q] = await c.search(q, { limit: 10 });
    } finally {
      await c.close();
      store.close();
    }
    const versions = new SQLiteStore(db).schemaVersions();
    for (const q of questions) {
      assert.ok(nodeHits[q].length > 0, `query ${q}`);
      assertSameHits(JSON.parse(go('search', q, '--db', db, '--json', '--limit', '10')).hits, nodeHits[q], q);
    }
    const removed = history.find((m) => !JSON.parse(go('show', conv, '--db', db, '--json')).some((/** @type {any} */ k) => k.id === m.id));
    assert.ok(removed);
    assert.equal(go('recall', removed.id, '--db', db).trimEnd(), JSON.stringify(removed), 'Go prints the exact JSON Node stored');
    const again = new SQLiteStore(db);
    assert.deepEqual(again.schemaVersions(), versions, 'the Go store found nothing to migrate');
    again.close();
  });
});
