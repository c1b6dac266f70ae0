// Text after a NUL character ("\u0000", valid JSON) is stored, indexed and
// read back whole: node-sqlite3-wasm passes strings as C strings, which
// end at the first NUL, unless the store binds and reads them exactly.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sqlite from 'node-sqlite3-wasm';
import { createCompactor, SQLiteStore } from '../src/index.js';
import { wasmPath } from './helpers/common.js';
import { makeConversation } from './helpers/conversation.js';

/** @type {string} */
let tmp;
before(() => { tmp = mkdtempSync(join(tmpdir(), 'clipfold-nul-')); });
after(() => { if (tmp) rmSync(tmp, { recursive: true, force: true }); });

/**
 * A column's bytes as stored, read by a connection of its own (hex: no
 * string of the binding in between).
 * @param {string} path
 * @param {string} sql a query whose only column is the hex of a text
 * @param {unknown[]} params
 */
function storedText(path, sql, params) {
  const db = new sqlite.Database(path);
  try {
    return db.all(sql, params).map((r) => Buffer.from(String(Object.values(r)[0]), 'hex').toString('utf8'));
  } finally {
    db.close();
  }
}

describe('text after a NUL character', () => {
  test('a message and a batch summary are found by a word after the NUL, and read back whole', async () => {
    const path = join(tmp, 'nul.db');
    const store = new SQLiteStore(path);
    const c = await createCompactor({ wasmPath: wasmPath(), store, config: { keep_recent: 6, chunk_size: 10 } });
    try {
      // Store-owned: appended, compacted, moved to recall with its search text.
      const history = makeConversation('c1', 30);
      const text = 'the log line ends here\u0000then zanzibar walrus, after the NUL';
      history[3] = { ...history[3], content: text };
      const r = await c.compress('c1', history);
      assert.equal(r.failed, false, r.failure_message ?? '');
      const id = String(history[3].id);
      assert.deepEqual(storedText(path, "SELECT hex(content) FROM recall WHERE conversation_id = 'c1' AND id = ?", [id]), [text]);
      assert.match(storedText(path, "SELECT hex(search_text) FROM recall WHERE conversation_id = 'c1' AND id = ?", [id])[0],
        /then zanzibar walrus, after the NUL/);
      const hits = await c.search('zanzibar', { conversationId: 'c1' });
      assert.ok(hits.some((h) => h.id === id && h.text.includes('zanzibar walrus')), JSON.stringify(hits));
      assert.equal(store.recall(id, 'c1')?.message.content, text);

      // A batch summary and a caller-owned recall write.
      const summary = '{"conversation_id":"c2","depth":0,"start":"2026-02-28T10:00:00Z","end":"2026-02-28T10:00:00Z",'
        + '"count":1}\nsummary before\u0000after the NUL: quokka';
      const said = 'a\u0000b kangaroo';
      store.commit({
        conversation_id: 'c2', operation_id: 'op1', history_owner: 'caller',
        archive_writes: [{ label: 'compaction-batch-c2-x', tier: 'archival', content: summary }],
        insert_message: { id: 'clip', role: 'system', content: 'x' },
        recall_writes: [{ id: 'r1', role: 'user', content: said, search_text: said, message: { id: 'r1', role: 'user', content: said } }],
      });
      assert.deepEqual(storedText(path, "SELECT hex(content) FROM blocks WHERE label = 'compaction-batch-c2-x'", []), [summary]);
      assert.deepEqual(storedText(path, "SELECT hex(content) FROM recall WHERE id = 'r1'", []), [said]);
      const found = await c.search('quokka kangaroo', { conversationId: 'c2' });
      assert.deepEqual(found.map((h) => [h.kind, h.text]).sort(), [['batch', 'summary before\u0000after the NUL: quokka'], ['message', said]]);
      // What memory_list gives the plug-in (re-summarizing it) is whole too.
      assert.deepEqual(store.list({ tier: 'archival', label_prefix: 'compaction-batch-c2-' }).blocks.map((b) => b.content), [summary]);

      // Appended as given: content (indexed when it is removed) and raw.
      store.append('c3', [{ id: 'm1', role: 'user', content: 'x\u0000y' }]);
      assert.deepEqual(storedText(path, "SELECT hex(content) FROM messages WHERE conversation_id = 'c3'", []), ['x\u0000y']);
      assert.deepEqual(store.history('c3'), [{ id: 'm1', role: 'user', content: 'x\u0000y' }]);
    } finally {
      await c.close();
      store.close();
    }
  });
});
