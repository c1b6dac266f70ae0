// SQLiteStore (and MemoryStore, the same store on ":memory:"): the intent
// of the Go conformance suite hostfuncs/store/storetest, on real SQLite
// (node-sqlite3-wasm), with queries analysed by the real plug-in.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createCompactor, HostError, hostFunctions, MemoryStore, SQLiteStore, sqlDir,
} from '../src/index.js';
import { repoRoot, requireExports, wasmPath } from './helpers/common.js';

/** @type {Awaited<ReturnType<typeof createCompactor>>} */
let c;
/** @type {(q: string) => Promise<any>} */
let analyzer;
/** @type {string} */
let tmp;
before(async () => {
  requireExports('searchQuery');
  c = await createCompactor({ wasmPath: wasmPath() });
  analyzer = (q) => c.searchQuery(q);
  tmp = mkdtempSync(join(tmpdir(), 'clipfold-store-'));
});
after(async () => {
  await c?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/** Both kinds of store every case runs on. */
const kinds = [
  ['MemoryStore', () => new MemoryStore({ queryAnalyzer: analyzer })],
  ['SQLiteStore on a file', () => new SQLiteStore(join(tmp, `${Math.random().toString(36).slice(2)}.db`), { queryAnalyzer: analyzer })],
];

const BASE = Date.parse('2026-02-28T10:00:00.000Z');
const at = (/** @type {number} */ minute) => new Date(BASE + minute * 60_000).toISOString();

/**
 * A message as exact JSON text with an unusual layout and an unknown
 * field, so a store that re-encodes instead of keeping the bytes is caught.
 */
function msg(/** @type {string} */ conv, /** @type {string} */ id, /** @type {string} */ role, /** @type {string} */ content, minute = 0) {
  return `{ "id":${JSON.stringify(id)},"conversation_id":${JSON.stringify(conv)}, "role":${JSON.stringify(role)},"content":${JSON.stringify(content)},"created_at":${JSON.stringify(at(minute))},"x_extra":{"n":[1, 2]} }`;
}

/** Appends n user messages <conv>-m1..<conv>-mn. */
function seed(/** @type {SQLiteStore} */ s, /** @type {string} */ conv, /** @type {number} */ n) {
  const msgs = Array.from({ length: n }, (_, i) => msg(conv, `${conv}-m${i + 1}`, 'user', `message number ${i + 1} of ${conv}`, i));
  s.append(conv, msgs);
  return msgs;
}

const prefix = (/** @type {string} */ conv) => `compaction-batch-${conv}-`;

/** A batch block's content: the JSON metadata line (core.FormatBatchBlock's field order), "\n", the summary. */
function batchContent(conv, op, summary, start = at(0), end = at(60), sources = [], method = 'llm', depth = 0) {
  return `${JSON.stringify({ conversation_id: conv, operation_id: op, depth, start, end, count: sources.length, source_message_ids: sources, method })}\n${summary}`;
}

function batchWrite(conv, op, summary, start, end, ...sources) {
  return { label: prefix(conv) + end, content: batchContent(conv, op, summary, start, end, sources, 'extractive'), tier: 'archival', reason: 'test' };
}

const clipArchive = (/** @type {string} */ conv, /** @type {string} */ id) => ({
  id, conversation_id: conv, role: 'system', content: '[Context Summary — 2 messages compressed across 1 compaction cycle(s)]', created_at: '2026-03-01T10:00:00.000Z',
});

/** Commits archive writes with the given labels into conv, removing nothing. */
function writeBlocks(/** @type {SQLiteStore} */ s, /** @type {string} */ conv, /** @type {string[]} */ ...labels) {
  const op = `op-${labels[0]}`;
  s.commit({
    conversation_id: conv, operation_id: op, insert_message: clipArchive(conv, `ca-${labels[0]}`),
    archive_writes: labels.map((l) => ({ label: l, content: batchContent(conv, op, `summary of ${l}`), tier: 'archival', reason: 'test' })),
  });
}

/** Appends msgs to conv and commits them all away into recall. */
function recallAs(/** @type {SQLiteStore} */ s, conv, op, msgs, searchText, ...writes) {
  s.append(conv, msgs);
  s.commit({
    conversation_id: conv, operation_id: op, insert_message: clipArchive(conv, `ca-${op}`), archive_writes: writes,
    remove_message_ids: msgs.map((m) => JSON.parse(m).id), ...(searchText ? { search_text: searchText } : {}),
  });
}

const ids = (/** @type {{id?: string}[]} */ xs) => xs.map((x) => x.id);

/**
 * @param {() => unknown} fn
 * @param {string} code
 * @param {string} mention
 */
function assertHostError(fn, code, mention) {
  assert.throws(fn, (/** @type {any} */ e) => {
    assert.ok(e instanceof HostError, `want a HostError, got ${e}`);
    assert.equal(e.code, code, e.message);
    assert.ok(e.message.includes(mention), `${JSON.stringify(e.message)} does not mention ${JSON.stringify(mention)}`);
    return true;
  });
}

for (const [kind, open] of kinds) {
  describe(`${kind}: conformance`, () => {
    test('append keeps order and the exact JSON; history and historyRaw read it back', () => {
      const s = open();
      const first = seed(s, 'c1', 3);
      const more = [msg('c1', 'c1-m4', 'assistant', 'four', 3), msg('c1', 'c1-m5', 'tool', 'five', 4)];
      s.append('c1', more);
      seed(s, 'c2', 2);
      assert.deepEqual(s.historyRaw('c1'), [...first, ...more]);
      assert.deepEqual(s.history('c1').map((m) => m.id), ['c1-m1', 'c1-m2', 'c1-m3', 'c1-m4', 'c1-m5']);
      // An object is stored as JSON.stringify gives it.
      s.append('c3', [{ id: 'c3-m1', role: 'user', content: 'a <b> & c', created_at: '2026-02-28T12:00:00+02:00' }]);
      assert.deepEqual(s.historyRaw('c3'), ['{"id":"c3-m1","role":"user","content":"a <b> & c","created_at":"2026-02-28T12:00:00+02:00"}']);
      assert.deepEqual(s.history('nobody'), []);
      s.close();
    });

    test('times are kept as the Go store keeps them: UTC, milliseconds (finer fractions truncated), Z', () => {
      const s = open();
      const cases = [['2026-02-28T12:00:00.123456789+02:00', '2026-02-28T10:00:00.123Z'], ['2024-02-29T23:59:59.9999-01:30', '2024-03-01T01:29:59.999Z'],
        ['0050-01-01T00:00:00Z', '0050-01-01T00:00:00.000Z'], [undefined, '']];
      s.append('t', cases.map(([t], i) => ({ id: `t${i}`, role: 'user', content: 'x', ...(t ? { created_at: t } : {}) })));
      s.commit({ conversation_id: 't', operation_id: 'o', remove_message_ids: cases.map((_, i) => `t${i}`), insert_message: clipArchive('t', 'ca') });
      cases.forEach(([, want], i) => assert.equal(s.recall(`t${i}`)?.created_at, want));
      for (const bad of ['2026-02-30T00:00:00Z', '2026-02-28T24:00:00Z', '2026-02-28T10:00:00', 'March 1st']) {
        assertHostError(() => s.append('t', [{ id: 'bad', role: 'user', content: 'x', created_at: bad }]), 'invalid_request', 'created_at');
      }
      s.close();
    });

    test('append refuses bad input, naming it, and changes nothing', () => {
      const s = open();
      seed(s, 'c1', 2);
      seed(s, 'c2', 1);
      const cases = [
        ['duplicate of a stored id', [msg('c1', 'c1-new', 'user', 'x'), msg('c1', 'c1-m2', 'user', 'x')], 'c1-m2'],
        ['duplicate within the call', [msg('c1', 'dup', 'user', 'x'), msg('c1', 'dup', 'user', 'y')], 'dup'],
        ['invalid role', [msg('c1', 'bad-role', 'robot', 'x')], 'messages[0].role'],
        ['empty id', [{ role: 'user', content: 'x' }], 'id'],
        ['raw not JSON', ['{nope'], 'messages[0]'],
        ['other conversation', [msg('c2', 'c2-x', 'user', 'x')], 'messages[0].conversation_id'],
        ['bad created_at', [{ id: 'bad-time', role: 'user', content: 'x', created_at: 'yesterday' }], 'messages[0].created_at'],
      ];
      for (const [what, msgs, mention] of cases) {
        const before = s.dump();
        assertHostError(() => s.append('c1', /** @type {any} */ (msgs)), 'invalid_request', /** @type {string} */ (mention));
        assert.equal(s.dump(), before, `${what}: a rejected append changed the store`);
      }
      // A removed message's id stays taken: it lives on in recall.
      s.commit({ conversation_id: 'c1', operation_id: 'op1', remove_message_ids: ['c1-m1'], insert_message: clipArchive('c1', 'ca1') });
      assertHostError(() => s.append('c1', [msg('c1', 'c1-m1', 'user', 'again')]), 'invalid_request', 'c1-m1');
      s.close();
    });

    test('message ids are per conversation: another conversation\'s id is another message', () => {
      const s = open();
      // Callers number each conversation alike.
      for (const conv of ['c1', 'c2']) s.append(conv, [0, 1, 2, 3].map((i) => msg(conv, `m${i}`, 'user', `${conv} says ${i}`)));
      for (const conv of ['c1', 'c2']) {
        s.commit({ conversation_id: conv, operation_id: `op-${conv}`, remove_message_ids: ['m0', 'm1'], insert_message: clipArchive(conv, 'ca1') });
      }
      for (const conv of ['c1', 'c2']) {
        assert.deepEqual(s.activeMessages(conv).map((m) => m.id), ['ca1', 'm2', 'm3']);
        assert.equal(s.recall('m1', conv)?.message.content, `${conv} says 1`);
        assert.equal(s.read('m1', conv)?.kind, 'message');
        assert.deepEqual([...s.knownIds(conv, ['m0', 'm3', 'm9'])].sort(), ['m0', 'm3']);
      }
      assert.deepEqual([...s.knownIds('c3', ['m0'])], []);
      // Without a conversation: the only one holding the id, else an error naming them.
      assertHostError(() => s.recall('m1'), 'invalid_request', '"c1", "c2"');
      s.append('c3', [msg('c3', 'only3', 'user', 'x')]);
      s.commit({ conversation_id: 'c3', operation_id: 'op-c3', remove_message_ids: ['only3'], insert_message: clipArchive('c3', 'ca3') });
      assert.equal(s.recall('only3')?.conversation_id, 'c3');
      assert.equal(s.recall('only3', 'c1'), null);
      // A repeat within one conversation is still refused.
      const before = s.dump();
      for (const [conv, id] of [['c1', 'm3'], ['c2', 'm0'], ['c1', 'ca1']]) {
        assertHostError(() => s.append(conv, [msg(conv, id, 'user', 'again')]), 'invalid_request', 'already stored in this conversation');
      }
      assert.equal(s.dump(), before);
      assert.throws(() => s.knownIds(/** @type {any} */ (['m0'])), /knownIds\(conversationId, ids\)/);
      s.close();
    });

    test('commit applies writes, deletes, removals and the insert together', () => {
      const s = open();
      const orig = seed(s, 'c1', 5);
      seed(s, 'c2', 2);
      const label1 = `${prefix('c1')}2026-02-28T10:01:00.000Z`;
      const content1 = batchContent('c1', 'op1', 'alpha summary', at(0), at(1), ['c1-m1', 'c1-m2']);
      assert.deepEqual(s.commit({
        conversation_id: 'c1', operation_id: 'op1',
        archive_writes: [{ label: label1, content: content1, tier: 'archival', reason: 'compaction' }],
        remove_message_ids: ['c1-m1', 'c1-m2'], insert_message: clipArchive('c1', 'ca1'),
      }), { ok: true });
      assert.deepEqual(ids(s.history('c1')), ['ca1', 'c1-m3', 'c1-m4', 'c1-m5']);
      const ca = s.historyRaw('c1')[0];
      assert.equal(ca, '{"id":"ca1","conversation_id":"c1","role":"system","content":"[Context Summary — 2 messages compressed across 1 compaction cycle(s)]","created_at":"2026-03-01T10:00:00.000Z"}',
        "the clip-archive's raw JSON is built from its fields, as the Go store builds it");
      for (const raw of orig.slice(0, 2)) {
        const r = s.recall(JSON.parse(raw).id);
        assert.ok(r, 'removed message is in recall');
        assert.equal(r.raw, raw);
        assert.equal(r.operation_id, 'op1');
      }
      let blocks = s.list({ tier: 'archival', label_prefix: prefix('c1') }).blocks;
      assert.equal(blocks.length, 1);
      assert.equal(blocks[0].label, label1);
      assert.equal(blocks[0].content, content1);
      assert.match(blocks[0].id, /^blk_[0-9a-f]{24}$/);

      // Second compaction: replaces the clip-archive, re-summarizes the old
      // batch (deleting it) and adds another; a repeated id is no conflict.
      const label2 = `${prefix('c1')}2026-02-28T10:02:00.000Z`;
      const label3 = `${prefix('c1')}2026-02-28T10:03:00.000Z`;
      s.commit({
        conversation_id: 'c1', operation_id: 'op2',
        archive_writes: [
          { label: label3, content: batchContent('c1', 'op2', 'gamma', at(2), at(3), ['c1-m3']), tier: 'archival' },
          { label: label2, content: batchContent('c1', 'op2', 'beta resummary', at(0), at(2), ['c1-m1', 'c1-m2']), tier: 'archival' },
        ],
        archive_deletes: [blocks[0].id], remove_message_ids: ['ca1', 'c1-m3', 'ca1'], insert_message: clipArchive('c1', 'ca2'),
      });
      assert.deepEqual(ids(s.history('c1')), ['ca2', 'c1-m4', 'c1-m5']);
      assert.equal(s.recall('ca1')?.raw, ca, 'the old clip-archive is kept in recall too');
      blocks = s.list({ tier: 'archival', label_prefix: prefix('c1') }).blocks;
      assert.deepEqual(blocks.map((b) => b.label), [label3, label2], 'blocks come in creation order');
      s.append('c1', [msg('c1', 'c1-m6', 'user', 'six', 6)]);
      assert.deepEqual(ids(s.history('c1')), ['ca2', 'c1-m4', 'c1-m5', 'c1-m6']);
      assert.deepEqual(ids(s.history('c2')), ['c2-m1', 'c2-m2'], 'the other conversation was not touched');
      s.commit({ conversation_id: 'c2', operation_id: 'op3', remove_message_ids: ['c2-m1', 'c2-m2'], insert_message: clipArchive('c2', 'ca3') });
      assert.deepEqual(ids(s.history('c2')), ['ca3'], 'a commit that removes everything still leaves the clip-archive');
      s.close();
    });

    test('a conflicting commit changes nothing and names the missing id', () => {
      const s = open();
      seed(s, 'c1', 4);
      seed(s, 'c2', 1);
      writeBlocks(s, 'c1', `${prefix('c1')}2026-02-28T10:00:00.000Z`);
      const [block] = s.list({ tier: 'archival', label_prefix: prefix('c1') }).blocks;
      s.commit({ conversation_id: 'c1', operation_id: 'op0', remove_message_ids: ['c1-m1'], insert_message: clipArchive('c1', 'ca0') });
      const write = [{ label: `${prefix('c1')}2026-02-28T11:00:00.000Z`, content: batchContent('c1', 'opX', 'never'), tier: 'archival' }];
      const cases = [
        ['unknown remove id', ['c1-m2', 'nope'], [], 'nope'],
        ['already removed id', ['c1-m1', 'c1-m2'], [], 'c1-m1'],
        ["another conversation's id", ['c1-m2', 'c2-m1'], [], 'c2-m1'],
        ['unknown delete id', ['c1-m2'], [block.id, 'blk_missing'], 'blk_missing'],
        ['only a missing delete', [], ['blk_missing'], 'blk_missing'],
      ];
      for (const [, remove, deletes, missing] of cases) {
        const before = s.dump();
        assertHostError(() => s.commit({
          conversation_id: 'c1', operation_id: 'opX', archive_writes: write, archive_deletes: /** @type {string[]} */ (deletes),
          remove_message_ids: /** @type {string[]} */ (remove), insert_message: clipArchive('c1', 'caX'),
        }), 'conflict', /** @type {string} */ (missing));
        assert.equal(s.dump(), before, 'a conflicting commit must change nothing');
      }
      s.close();
    });

    test('a reused insert id, or an insert for another conversation, is refused (not a conflict)', () => {
      const s = open();
      seed(s, 'c1', 3);
      s.commit({ conversation_id: 'c1', operation_id: 'op1', remove_message_ids: ['c1-m1'], insert_message: clipArchive('c1', 'ca1') });
      for (const id of ['c1-m2', 'c1-m1', 'ca1']) {
        const before = s.dump();
        assertHostError(() => s.commit({ conversation_id: 'c1', operation_id: 'op2', remove_message_ids: ['ca1'], insert_message: clipArchive('c1', id) }), 'invalid_request', id);
        assert.equal(s.dump(), before);
      }
      const before = s.dump();
      assertHostError(() => s.commit({ conversation_id: 'c1', operation_id: 'op3', insert_message: clipArchive('c2', 'ca9') }), 'invalid_request', 'differs');
      assert.equal(s.dump(), before);
      s.close();
    });

    test('a malformed commit is refused, naming the field, and changes nothing', () => {
      const s = open();
      seed(s, 'c1', 3);
      const label = `${prefix('c1')}2026-02-28T11:00:00.000Z`;
      const cases = [
        [null, 'input must be an object'],
        [{ operation_id: 'op1', insert_message: clipArchive('c1', 'ca1') }, 'conversation_id'],
        [{ conversation_id: 'c1', operation_id: 'op1', remove_message_ids: ['c1-m1'] }, 'insert_message'],
        [{ conversation_id: 'c1', operation_id: 'op1', remove_message_ids: ['c1-m1'], insert_message: { content: 'x' } }, 'insert_message.id'],
        [{ conversation_id: 'c1', operation_id: 'op1', remove_message_ids: ['c1-m1'], archive_writes: [{ label, content: 'a' }, { content: 'b' }],
          insert_message: clipArchive('c1', 'ca1') }, 'archive_writes[1].label'],
        [{ conversation_id: 'c1', operation_id: 'op1', remove_message_ids: ['c1-m1'], search_text: { 'c1-m1': 7 }, insert_message: clipArchive('c1', 'ca1') },
          'search_text.c1-m1'],
        [{ conversation_id: 'c1', operation_id: 'op1', remove_message_ids: [7], insert_message: clipArchive('c1', 'ca1') }, 'remove_message_ids'],
      ];
      for (const [req, mention] of cases) {
        const before = s.dump();
        assertHostError(() => s.commit(/** @type {any} */ (req)), 'invalid_request', /** @type {string} */ (mention));
        assert.equal(s.dump(), before);
      }
      s.close();
    });

    test('list takes the label prefix literally (no LIKE wildcards), in creation order', () => {
      const s = open();
      const ts = '2026-02-28T10:00:00.000Z';
      writeBlocks(s, 'c1', `${prefix('c1')}2026-03-01T00:00:00.000Z`, `${prefix('c1-x')}${ts}`, `${prefix('c1')}${ts}`);
      writeBlocks(s, 'c%', `${prefix('c%')}${ts}`);
      writeBlocks(s, 'cX', `${prefix('cX')}${ts}`, `${prefix('c_')}${ts}`, `${prefix('c_1')}${ts}`, `${prefix('cA1')}${ts}`, `${prefix('c1x')}${ts}`);
      const cases = [
        [prefix('c1'), [`${prefix('c1')}2026-03-01T00:00:00.000Z`, `${prefix('c1-x')}${ts}`, `${prefix('c1')}${ts}`]],
        [prefix('c1-x'), [`${prefix('c1-x')}${ts}`]],
        [prefix('c%'), [`${prefix('c%')}${ts}`]],
        [prefix('c_'), [`${prefix('c_')}${ts}`]],
        ['compaction-batch-c_', [`${prefix('c_')}${ts}`, `${prefix('c_1')}${ts}`]],
        ['compaction-batch-%', []],
        [prefix('nobody'), []],
      ];
      for (const [p, want] of cases) assert.deepEqual(s.list({ tier: 'archival', label_prefix: /** @type {string} */ (p) }).blocks.map((b) => b.label), want, String(p));
      assert.deepEqual(s.list({ tier: 'core', label_prefix: prefix('c1') }).blocks, [], 'another tier lists nothing');
      assert.equal(s.list({ tier: 'archival', label_prefix: '' }).blocks.length, 9);
      s.close();
    });

    test('recall returns the exact bytes of each removed message', () => {
      const s = open();
      const raws = [
        '{"id":"r1","conversation_id":"c1","role":"user","content":"héllo <b>&amp;</b> \\u00e9 😀","created_at":"2026-02-28T10:00:00Z"}',
        '{\n  "id": "r2",\n  "role": "assistant",\n  "content": [{"type":"text","text":"parts"}],\n  "tool_calls": [{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\\"a\\":1}"}}],\n  "unknown": 1.50\n}',
        '{"id":"r3","role":"tool","tool_call_id":"call_1","content":"result","pinned":false,"meta":null}',
      ];
      s.append('c1', raws);
      assert.equal(s.recall('r1'), null, 'an active message is not in recall');
      s.commit({ conversation_id: 'c1', operation_id: 'op1', remove_message_ids: ['r1', 'r2', 'r3'], insert_message: clipArchive('c1', 'ca1') });
      raws.forEach((raw, i) => {
        const r = s.recall(`r${i + 1}`);
        assert.equal(r?.raw, raw);
        assert.deepEqual(r?.message, JSON.parse(raw));
        assert.equal(r?.conversation_id, 'c1');
      });
      assert.equal(s.recall('r1')?.created_at, '2026-02-28T10:00:00.000Z');
      assert.equal(s.recall('r2')?.text, 'parts', 'content parts are joined for the index');
      assert.equal(s.recall('missing'), null);
      s.close();
    });

    test('the active history is searched, in context; indexActive gives it the plug-in\'s search text; a message moved to recall is one hit', async () => {
      const s = open();
      const sep = '\n\n» '; // core.SearchContextSep
      s.append('c1', [msg('c1', 'u1', 'user', 'where is my parcel?', 0),
        '{"id":"call1","role":"assistant","content":"","tool_calls":[{"id":"t1","type":"function","function":{"name":"get_order","arguments":"{\\"order\\":4471}"}}]}',
        msg('c1', 'res1', 'tool', '{"status":"shipped","carrier":"Pelican Post"}', 2)]);
      let hits = await s.search('pelican');
      assert.deepEqual(hits.map((h) => [h.id, h.in_context, h.operation_id]), [['res1', true, '']]);
      assert.deepEqual(await s.search('get_order 4471'), [], "a call's name and arguments are not its content");
      s.indexActive('c1', { call1: `get_order {"order":4471}${sep}where is my parcel?`, gone: 'ignored words',
        res1: `{"status":"shipped","carrier":"Pelican Post"}${sep}get_order {"order":4471}` });
      hits = await s.search('get_order 4471');
      assert.deepEqual(ids(hits), ['call1'], 'res1 only quotes call1, its neighbour: folded');
      assert.deepEqual(await s.search('ignored'), []);
      s.indexActive('c1', { u1: 'where is my parcel\u0000 yakety' });
      assert.deepEqual(ids(await s.search('yakety')), ['u1'], 'past a NUL');
      assert.throws(() => s.indexActive('c1', /** @type {any} */ ({ u1: 7 })), /texts\["u1"\]/);
      // One scale: the same text active in c2, recalled in c3.
      const same = 'the walrus inventory counts seventeen crates';
      s.append('c2', [msg('c2', 'w1', 'user', same, 0)]);
      recallAs(s, 'c3', 'op3', [msg('c3', 'w1', 'user', same, 0)]);
      hits = await s.search('walrus crates');
      assert.deepEqual(hits.map((h) => [h.conversation_id, h.in_context]).sort(), [['c2', true], ['c3', false]]);
      assert.ok(Math.abs(hits[0].score - hits[1].score) < 1e-9);
      s.commit({ conversation_id: 'c1', operation_id: 'op1', remove_message_ids: ['u1', 'call1', 'res1'], insert_message: clipArchive('c1', 'ca1'),
        search_text: { res1: '{"carrier":"Pelican Post"}' } });
      hits = await s.search('carrier pelican', { conversationId: 'c1' });
      assert.deepEqual(hits.map((h) => [h.id, h.in_context, h.operation_id]), [['res1', false, 'op1']]);
      s.close();
    });

    test('a caller\'s in-context messages are ranked for one search and leave nothing behind', async () => {
      const s = open();
      const old = JSON.parse(msg('c1', 'm1', 'user', 'the quokka census counted forty', 0));
      s.commit({ conversation_id: 'c1', operation_id: 'op1', history_owner: 'caller', insert_message: clipArchive('c1', 'ca1'),
        recall_writes: [{ id: 'm1', role: 'user', content: old.content, created_at: old.created_at, search_text: old.content, message: old }] });
      const before = s.dump();
      const inContext = [
        { id: 'ca1', role: 'system', content: '[Context Summary — 1 message compressed] quokka', created_at: null },
        { id: 'm1', role: 'user', content: old.content, created_at: old.created_at },
        { id: 'm2', role: 'assistant', content: 'the quokka census counted fifty', created_at: at(5), search_text: 'the quokka census counted fifty' },
        { id: 'm3', role: 'tool', content: '42\u0000 crates', search_text: '42\u0000 crates\n\n» count_quokkas {"island":"Rottnest"}' },
      ];
      let hits = await s.search('quokka census', { conversationId: 'c1', inContext });
      assert.deepEqual(hits.map((h) => [h.id, h.in_context]).sort(), [['m1', false], ['m2', true]], 'the clip-archive is no hit; m1 once, recalled');
      assert.ok(Math.abs(hits[0].score - hits[1].score) < 1e-9, 'in context or recalled, one scale');
      assert.deepEqual(ids(await s.search('Rottnest', { conversationId: 'c1', inContext })), ['m3']);
      assert.deepEqual(ids(await s.search('crates', { conversationId: 'c1', inContext })), ['m3'], 'past a NUL');
      assert.equal(s.dump(), before, 'nothing of them stays');
      assert.deepEqual(await s.search('fifty', { conversationId: 'c1' }), []);
      for (const [opts, field] of [[{ inContext }, 'conversationId'], [{ conversationId: 'c1', inContext: [{ id: 'a', role: 'wizard', content: '' }] }, 'inContext[0].role'],
        [{ conversationId: 'c1', inContext: [{ role: 'user', content: '' }] }, 'inContext[0].id'], [{ conversationId: 'c1', inContext: 'x' }, 'inContext']]) {
        await assert.rejects(s.search('quokka', /** @type {any} */ (opts)), (/** @type {any} */ e) => e.message.includes(field), field);
      }
      s.close();
    });

    test('search ranks batches and recalled messages; conversation filter and limit', async () => {
      const s = open();
      seed(s, 'c1', 6);
      s.append('c1', [msg('c1', 'c1-x1', 'user', 'please tune the xylophone before the concert', 10), msg('c1', 'c1-x2', 'assistant', 'the database migration is done', 11)]);
      seed(s, 'c2', 1);
      const filler = 'the weather was pleasant and people talked about lunch plans and weekend trips '.repeat(20);
      const target = `${prefix('c1')}2026-02-28T10:05:00.000Z`;
      s.commit({
        conversation_id: 'c1', operation_id: 'op1',
        archive_writes: [
          { label: `${prefix('c1')}2026-02-28T10:01:00.000Z`, content: batchContent('c1', 'op1', 'lunch menu and coffee preferences', at(0), at(1), ['c1-m3']), tier: 'archival' },
          { label: `${prefix('c1')}2026-02-28T10:02:00.000Z`, content: batchContent('c1', 'op1', `${filler} someone once mentioned kubernetes ${filler}`, at(0), at(2), ['c1-m4']), tier: 'archival' },
          { label: target, content: batchContent('c1', 'op1', 'Kubernetes deployment failed: the kubernetes pods crashed; we decided to roll back the kubernetes cluster.', at(2), at(5), ['c1-m1', 'c1-m2']), tier: 'archival' },
        ],
        remove_message_ids: ['c1-m1', 'c1-m2', 'c1-m3', 'c1-m4', 'c1-x1'], insert_message: clipArchive('c1', 'ca1'),
      });
      writeBlocks(s, 'c2', `${prefix('c2')}2026-02-28T10:00:00.000Z`);

      let hits = await s.search('kubernetes');
      assert.equal(hits.length, 2, JSON.stringify(ids(hits)));
      const top = hits[0];
      assert.equal(top.kind, 'batch');
      assert.equal(top.label, target);
      assert.equal(top.conversation_id, 'c1');
      assert.equal(top.operation_id, 'op1');
      assert.ok(top.score > hits[1].score);
      assert.match(top.snippet.toLowerCase(), /kubernetes/);
      assert.equal(top.start_time, at(2));
      assert.equal(top.end_time, at(5));
      assert.deepEqual(top.source_message_ids, ['c1-m1', 'c1-m2']);
      assert.equal(top.depth, 0);
      assert.equal(top.method, 'llm');
      assert.equal(top.message_count, 2);
      assert.match(top.text, /roll back/);
      assert.ok(!top.text.startsWith('{'), "a batch hit's text is its summary, without the metadata line");

      hits = await s.search('xylophone', { conversationId: 'c1' });
      assert.equal(hits.length, 1);
      assert.equal(hits[0].kind, 'message');
      assert.equal(hits[0].id, 'c1-x1');
      assert.equal(hits[0].role, 'user');
      assert.equal(hits[0].operation_id, 'op1');
      assert.equal(hits[0].source_message_ids, null);
      assert.equal(hits[0].created_at, at(10));
      assert.equal(hits[0].start_time, at(10));
      assert.equal(hits[0].end_time, at(10));
      assert.equal(hits[0].text, 'please tune the xylophone before the concert');
      assert.match(hits[0].snippet, /\[xylophone\]/);
      assert.ok(hits[0].score > 0, 'higher is better, and a hit scores above zero');
      assert.equal(hits[0].in_context, false, 'a recalled message is not in context');
      hits = await s.search('migration');
      assert.deepEqual(ids(hits), ['c1-x2'], 'an active message is found');
      assert.equal(hits[0].in_context, true, 'in context: not in recall storage');
      assert.equal(hits[0].operation_id, '');
      assert.equal(hits[0].text, 'the database migration is done');

      hits = await s.search('summary', { conversationId: 'c2' });
      assert.ok(hits.length > 0);
      for (const h of hits) assert.equal(h.conversation_id, 'c2');
      assert.deepEqual(await s.search('kubernetes', { conversationId: 'c2' }), []);
      hits = await s.search('message number', { limit: 2 });
      assert.equal(hits.length, 2);
      for (const h of hits) assert.equal(h.kind, 'message');
      hits = await s.search('kubernetes xylophone');
      assert.equal(hits.length, 3, 'any word matches: both batches and the message');
      assert.ok(ids(hits).includes('c1-x1'));
      s.close();
    });

    test('a natural-language question finds the turn and the batch that answer it', async () => {
      const s = open();
      const turns = [
        'Morning! Did everyone see the incident report from last night?',
        'Yes. The checkout service was down for twenty minutes.',
        'We should decide when to upgrade Postgres; the current version is out of support.',
        'Alice, what do you think about the schedule for the database work?',
        'I would rather not touch the database during the sales week.',
        'Agreed, the sales week is off limits for any migration.',
        "Alice: let's move the Postgres upgrade to Saturday 14 March, after the sales week.",
        "Sounds good. I'll book the maintenance window.",
        'Did anyone decide what to do about the flaky checkout tests?',
        'Bob will quarantine them this afternoon.',
      ];
      const msgs = turns.map((t, i) => msg('c1', `q${i + 1}`, i % 2 ? 'assistant' : 'user', t, i));
      recallAs(s, 'c1', 'op1', msgs, null,
        batchWrite('c1', 'op1', 'The team discussed the checkout outage. Alice scheduled the Postgres upgrade for Saturday 14 March, after the sales week; Bob quarantines the flaky tests.',
          at(20), at(25), 'q1', 'q7', 'q10'));
      const hits = await s.search('When did Alice say we will upgrade Postgres?', { limit: 5 });
      assert.ok(ids(hits.slice(0, 2)).includes('q7'), `the answering turn is among the first two hits: ${ids(hits)}`);
      const batch = hits.find((h) => h.kind === 'batch');
      assert.ok(batch, `the batch is in the top 5: ${ids(hits)}`);
      assert.deepEqual(batch.source_message_ids, ['q1', 'q7', 'q10']);
      assert.equal(batch.start_time, at(20));
      assert.equal(batch.end_time, at(25));
      assert.equal(batch.method, 'extractive');
      assert.match(batch.text, /Saturday 14 March/);
      assert.ok(ids(await s.search('what did you think?')).includes('q4'), 'a question of stop words still searches for them');
      s.close();
    });

    test('superseded clip-archives stay in recall but are never hits', async () => {
      const s = open();
      seed(s, 'c1', 6);
      const archive = (/** @type {string} */ id) => ({ ...clipArchive('c1', id),
        content: '[Context Summary — 2 messages compressed across 1 compaction cycle(s)]\n\n[Batch 1 — depth 0]\nThe zeppelin migration was planned.' });
      s.commit({ conversation_id: 'c1', operation_id: 'op1', remove_message_ids: ['c1-m1'], insert_message: archive('ca1'),
        archive_writes: [batchWrite('c1', 'op1', 'The zeppelin migration was planned.', at(0), at(0), 'c1-m1')] });
      // The plug-in's commit: search_text "" for the superseded clip-archive.
      s.commit({ conversation_id: 'c1', operation_id: 'op2', remove_message_ids: ['ca1', 'c1-m2'], insert_message: archive('ca2'),
        search_text: { ca1: '', 'c1-m2': 'message number 2 of c1' } });
      // A host's commit without search_text.
      s.commit({ conversation_id: 'c1', operation_id: 'op3', remove_message_ids: ['ca2', 'c1-m3'], insert_message: archive('ca3') });
      for (const id of ['ca1', 'ca2']) assert.match(s.recall(id)?.message.content, /zeppelin/, 'a superseded clip-archive stays in recall');
      for (const q of ['zeppelin', 'Context Summary', 'compaction cycle', 'zeppelin migration planned']) {
        for (const h of await s.search(q)) assert.ok(!['ca1', 'ca2', 'ca3'].includes(h.id), `query ${q}: a clip-archive is a hit`);
      }
      const hits = await s.search('zeppelin');
      assert.deepEqual(hits.map((h) => h.kind), ['batch']);
      recallAs(s, 'c2', 'op4', [msg('c2', 'sys1', 'system', 'You are a zeppelin pilot.', 0)], null);
      assert.deepEqual(ids(await s.search('zeppelin pilot', { conversationId: 'c2' })), ['sys1'], 'a system message that is not a clip-archive is searchable');
      s.close();
    });

    test('messages and batches are ranked on one scale', async () => {
      const s = open();
      const pad = ['lorem', 'ipsum', 'dolor', 'sit', 'amet', 'consectetur', 'adipiscing', 'elit', 'sed', 'eiusmod'];
      const filler = (/** @type {string} */ text, n = 40) => {
        const words = text.split(/\s+/).filter(Boolean);
        for (let i = 0; words.length < n; i++) words.push(pad[i % pad.length]);
        return words.join(' ');
      };
      const rep = (/** @type {number} */ k) => filler('quokka '.repeat(k));
      recallAs(s, 'c1', 'op1', [msg('c1', 'm4', 'user', rep(4), 0), msg('c1', 'm2', 'user', rep(2), 1)], null,
        batchWrite('c1', 'op1', rep(3), at(0), at(1), 'm4'), batchWrite('c1', 'op1', rep(1), at(1), at(2), 'm2'));
      recallAs(s, 'c1', 'op2', Array.from({ length: 8 }, (_, i) => msg('c1', `o${i}`, 'user', filler('nothing here'), 10 + i)), null);
      const hits = await s.search('quokka');
      assert.deepEqual(hits.map((h) => h.kind), ['message', 'batch', 'message', 'batch']);
      for (let i = 1; i < hits.length; i++) assert.ok(hits[i - 1].score > hits[i].score, 'strictly decreasing scores');
      assert.equal(hits[0].id, 'm4');
      assert.equal(hits[2].id, 'm2');
      assert.equal(hits[1].text.split('quokka').length - 1, 3);
      s.close();
    });

    test("tool names, inputs and outputs are found through the commit's search_text", async () => {
      const s = open();
      const call = '{"id":"call1","role":"assistant","content":"","tool_calls":[{"id":"t1","type":"function","function":{"name":"get_weather","arguments":"{\\"city\\":\\"Reykjavik\\"}"}}]}';
      recallAs(s, 'c1', 'op1', [call, msg('c1', 'res1', 'tool', '3 degrees, gale-force winds', 1), msg('c1', 'u1', 'user', 'thanks', 2)], {
        call1: 'get_weather {"city":"Reykjavik"}', res1: '3 degrees, gale-force winds', u1: 'thanks', other: 'ignored: not removed',
      });
      for (const [q, want] of [['get_weather', 'call1'], ['Reykjavik', 'call1'], ['city', 'call1'], ['gale winds', 'res1']]) {
        const hits = await s.search(q);
        assert.equal(hits[0]?.id, want, `query ${q}`);
      }
      const [hit] = await s.search('Reykjavik');
      assert.equal(hit.text, 'get_weather {"city":"Reykjavik"}', "a message hit's text is what was indexed");
      assert.equal(s.recall('call1')?.raw, call, 'the message itself is unchanged');
      assert.deepEqual(await s.search('ignored'), []);
      s.close();
    });

    test('equal scores go to the more recent hit (a message by created_at, a batch by its end)', async () => {
      const s = open();
      const text = 'the narwhal plan';
      // The same words in another order score alike but are not the same
      // text (a repeated text is folded into the better hit); two messages
      // apart, so neither is the other's neighbour.
      recallAs(s, 'c1', 'op1', [msg('c1', 'old', 'user', text, 0), msg('c1', 'mid', 'assistant', 'unrelated words', 15),
        msg('c1', 'new', 'user', 'the plan narwhal', 30)], null,
        batchWrite('c1', 'op1', text, at(0), at(10), 'old'), batchWrite('c1', 'op1', text, at(40), at(50), 'new'));
      const hits = await s.search('narwhal');
      assert.equal(hits.length, 4);
      for (const h of hits) assert.ok(Math.abs(h.score - hits[0].score) < 1e-9, 'identical texts score alike');
      assert.deepEqual(hits.map((h) => h.end_time), [at(50), at(30), at(10), at(0)]);
      s.close();
    });

    test('read returns any recalled message or archived block in full by id', async () => {
      const s = open();
      const m = msg('c1', 'm1', 'user', 'the full original text', 0);
      const w = batchWrite('c1', 'op1', 'the full summary', at(0), at(60), 'm1');
      recallAs(s, 'c1', 'op1', [m], null, w);
      const hits = await s.search('full');
      assert.equal(hits.length, 2);
      for (const h of hits) {
        const r = s.read(h.id);
        assert.equal(r?.kind, h.kind);
        if (r?.kind === 'message') {
          assert.equal(r.raw, m);
          assert.deepEqual(r.message, JSON.parse(m));
        } else if (r?.kind === 'batch') {
          const b = r.block;
          assert.equal(b.id, h.id);
          assert.equal(b.content, w.content, 'the block exactly as written, metadata line included');
          assert.equal(b.label, w.label);
          assert.equal(b.tier, 'archival');
          assert.equal(b.conversation_id, 'c1');
          assert.equal(b.operation_id, 'op1');
          assert.equal(b.reason, 'test');
          assert.match(b.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
          assert.equal(b.batch?.summary, 'the full summary');
          assert.deepEqual(b.batch?.source_message_ids, ['m1']);
        }
      }
      for (const id of ['nope', '', 'blk_000000000000000000000000']) {
        assert.equal(s.read(id), null, `id ${JSON.stringify(id)}`);
        assert.equal(s.block(id), null);
      }
      s.commit({ conversation_id: 'c2', operation_id: 'op2', insert_message: clipArchive('c2', 'ca2'), archive_writes: [{ label: 'notes', content: 'plain note', tier: 'archival' }] });
      const [note] = await s.search('plain note');
      assert.equal(note.depth, null);
      assert.equal(note.text, 'plain note');
      assert.equal(s.block(note.id)?.batch, null, 'a block that is not a batch reads back without metadata');
      s.close();
    });

    test('migrate is idempotent', () => {
      const s = open();
      seed(s, 'c1', 2);
      const before = s.dump();
      assert.equal(s.migrate(), 0);
      assert.equal(s.migrate(), 0);
      assert.equal(s.dump(), before);
      assert.deepEqual(s.schemaVersions(), [1, 2].concat(s.schemaVersions().slice(2)));
      s.close();
    });
  });
}

/** HostileQueries of the Go suite, and invalid UTF-16 (lone surrogates), which only JavaScript strings can carry. */
const HOSTILE = [
  '', ' ', '?', '"', '""', '"""', '"deploy', 'deploy"', "'", "''", "deploy's", '-', '--', '-deploy', 'deploy -script',
  '*', 'deploy*', '*deploy', ':', 'step:3', 'label:deploy', 'body:error', '^deploy', '+deploy', '(', ')', '()',
  '(deploy', 'deploy)', 'NOT', 'AND', 'OR', 'NEAR', 'deploy AND', 'OR deploy', 'NOT deploy', 'NEAR(deploy script)',
  'deploy NEAR/2 script', '{body}: deploy', "'; DROP TABLE messages; --", '%', '_', '%_%', '\\', '\\"', '{', '}',
  '[', ']', '<->', '<2>', '!', '&', '|', '!deploy & (script | error)', 'deploy:*', "'deploy':*A", 'deploy:A', '😀',
  'tab\tnewline\nnul\u0000byte', '\ud800 lone high surrogate deploy', 'lone low \udfff', '\udfff\ud800', 'x\ud83d', '\u0000',
  'the', 'what is it', 'who what when where how did does', '"the"', '" "', '"?!"', 'e.g.', 'a.b.c', '1-2', '“smart” ‘quotes’',
  '\u0301\u0301', 'ﬁle Ⅻ ²', '"unclosed phrase', 'deploy '.repeat(2000), '('.repeat(500), '"'.repeat(501), 'a'.repeat(10000),
  'what '.repeat(2000), 'ab '.repeat(3400), 'é'.repeat(300), '"x y" '.repeat(100), '\ud800'.repeat(10000),
];

describe('search: hostile queries', () => {
  test('no query is ever an engine error; operators are plain words', async () => {
    const s = new MemoryStore({ queryAnalyzer: analyzer });
    seed(s, 'c1', 2);
    s.commit({ conversation_id: 'c1', operation_id: 'op1', remove_message_ids: ['c1-m1'], insert_message: clipArchive('c1', 'ca1'),
      archive_writes: [{ label: `${prefix('c1')}x`, content: batchContent('c1', 'op1', 'error: the deploy-script failed (exit 1) at step:3; what is it', at(0), at(1), ['c1-m1']), tier: 'archival' }] });
    for (const q of HOSTILE) {
      for (const conversationId of ['', 'c1']) {
        const hits = await s.search(q, { conversationId });
        for (const h of hits) assert.ok(h.id, `query ${JSON.stringify(q.slice(0, 80))}`);
      }
    }
    for (const q of ['"deploy script"', 'deploy-script', '(deploy)', 'error:', '-error', 'step:3', 'NOT deploy', 'what is it?', "deploy's", '\ud800 deploy \udfff']) {
      assert.ok((await s.search(q)).length > 0, `query ${JSON.stringify(q)} is searched as plain words`);
    }
    s.close();
  });

  test('compactor.search analyses the query with the plug-in and runs it on its store', async () => {
    const store = new MemoryStore();
    const cc = await createCompactor({ wasmPath: wasmPath(), store });
    try {
      recallAs(store, 'c1', 'op1', [msg('c1', 'm1', 'user', 'The deploy script broke at step 3.', 0)], null);
      const q = await cc.searchQuery('Why did the deploy break?');
      assert.ok(q.fts5.length > 0 && Array.isArray(q.terms));
      const hits = await cc.search('Why did the deploy break?', { conversationId: 'c1' });
      assert.deepEqual(ids(hits), ['m1']);
      assert.deepEqual(await store.search('Why did the deploy break?'), hits, "the store's own search borrows the compactor's plug-in");
      assert.equal((await cc.read('m1'))?.kind, 'message');
      assert.equal(await cc.read('nope'), null);
      for (const q2 of HOSTILE) await cc.search(q2);
    } finally {
      await cc.close();
    }
    // After the compactor is closed, the store falls back to its own plug-in.
    assert.deepEqual(ids(await store.search('deploy')), ['m1']);
    store.close();
  });
});

describe('SQLiteStore files', () => {
  test('persist across close and open, and every schema step is recorded once', async () => {
    const path = join(tmp, 'persist.db');
    let s = new SQLiteStore(path, { queryAnalyzer: analyzer });
    recallAs(s, 'c1', 'op1', [msg('c1', 'm1', 'user', 'the persistent platypus', 0)], null);
    const versions = s.schemaVersions();
    s.close();
    assert.throws(() => s.history('c1'));
    s = new SQLiteStore(path, { queryAnalyzer: analyzer });
    assert.equal(s.migrate(), 0);
    assert.deepEqual(s.schemaVersions(), versions);
    assert.deepEqual(ids(await s.search('platypus')), ['m1']);
    assert.deepEqual(ids(s.history('c1')), ['ca-op1']);
    s.close();
    assert.ok(!existsSync(`${path}.lock`), 'no lock directory is left behind');
  });

  test('whatever migration steps exist are run (a new step in the SQL directory is applied)', () => {
    const dir = join(tmp, 'sql-plus');
    cpSync(sqlDir(), dir, { recursive: true });
    writeFileSync(join(dir, 'migrations', '0099.sql'), '-- not a version\nSELECT 1;\n');
    assert.throws(() => new SQLiteStore(':memory:', { sqlDir: dir }), /1, 2, 3/);
    rmSync(join(dir, 'migrations', '0099.sql'));
    const n = new SQLiteStore(':memory:', { sqlDir: sqlDir() }).schemaVersions().length;
    const next = String(n + 1).padStart(4, '0');
    writeFileSync(join(dir, 'migrations', `${next}.sql`), '-- a test step\nCREATE TABLE test_step (x TEXT);\nINSERT INTO test_step VALUES (\'ran\');\n');
    const path = join(tmp, 'steps.db');
    const old = new SQLiteStore(path);
    seed(old, 'c1', 1);
    old.close();
    const s = new SQLiteStore(path, { sqlDir: dir });
    assert.equal(s.schemaVersions().length, n + 1);
    assert.equal(s.migrate(), 0);
    s.close();
    // A database with a step this code does not know is read, never written.
    const back = new SQLiteStore(path);
    assert.deepEqual(ids(back.history('c1')), ['c1-m1']);
    assertHostError(() => seed(back, 'c2', 1), 'other', 'newer');
    assertHostError(() => back.commit({ conversation_id: 'c1', operation_id: 'o', insert_message: clipArchive('c1', 'x') }), 'other', 'newer');
    back.close();
  });

  test('a file another SQLite process has open in WAL mode (its -shm exists) is refused with a clear error', () => {
    const path = join(tmp, 'shm.db');
    new SQLiteStore(path).close();
    writeFileSync(`${path}-shm`, '');
    assertHostError(() => new SQLiteStore(path), 'unavailable', 'cannot use a file at the same time');
    rmSync(`${path}-shm`);
    new SQLiteStore(path).close();
  });

  test('two connections: the loser of a race sees a conflict and changes nothing', () => {
    const path = join(tmp, 'race.db');
    const a = new SQLiteStore(path);
    const b = new SQLiteStore(path);
    seed(a, 'c1', 10);
    const commit = (/** @type {string} */ id) => ({
      conversation_id: 'c1', operation_id: `op-${id}`, remove_message_ids: ['c1-m1', 'c1-m2', 'c1-m3'], insert_message: clipArchive('c1', id),
      archive_writes: [{ label: `${prefix('c1')}${id}`, content: batchContent('c1', `op-${id}`, `by ${id}`), tier: 'archival' }],
    });
    assert.deepEqual(a.commit(commit('ca-a')), { ok: true });
    const before = b.dump();
    assertHostError(() => b.commit(commit('ca-b')), 'conflict', 'c1-m1');
    assert.equal(b.dump(), before);
    assert.deepEqual(ids(b.history('c1')), ['ca-a', 'c1-m4', 'c1-m5', 'c1-m6', 'c1-m7', 'c1-m8', 'c1-m9', 'c1-m10']);
    a.close();
    b.close();
  });

  test('racing processes: exactly one commit wins, the others conflict', async () => {
    const path = join(tmp, 'procs.db');
    const s = new SQLiteStore(path);
    seed(s, 'c1', 10);
    s.close();
    const n = 4;
    const script = `
      import { SQLiteStore } from ${JSON.stringify(new URL('../src/index.js', import.meta.url).href)};
      const i = Number(process.argv[1]);
      const start = Number(process.argv[2]);
      while (Date.now() < start) {}
      const s = new SQLiteStore(${JSON.stringify(path)});
      try {
        s.commit({ conversation_id: 'c1', operation_id: 'op' + i, remove_message_ids: ['c1-m1', 'c1-m2', 'c1-m3', 'c1-m4', 'c1-m5'],
          insert_message: { id: 'ca' + i, role: 'system', content: '[Context Summary — 5 messages]' },
          archive_writes: [{ label: 'compaction-batch-c1-' + i, content: 'summary by op' + i, tier: 'archival' }] });
        console.log('won');
      } catch (e) { console.log(e.code); }
      s.close();`;
    const start = Date.now() + 1500;
    const procs = Array.from({ length: n }, (_, i) => new Promise((resolve) => {
      import('node:child_process').then(({ execFile }) => execFile(process.execPath, ['--input-type=module', '-e', script, String(i), String(start)], (err, stdout, stderr) => resolve({ err, stdout: stdout.trim(), stderr })));
    }));
    await Promise.all(procs).then((/** @type {any[]} */ outs) => {
      const results = outs.map((o) => o.stdout || `${o.err} ${o.stderr}`);
      assert.equal(results.filter((r) => r === 'won').length, 1, JSON.stringify(results));
      assert.equal(results.filter((r) => r === 'conflict').length, n - 1, JSON.stringify(results));
      const after = new SQLiteStore(path);
      const hist = after.history('c1');
      assert.match(hist[0].id, /^ca\d$/);
      assert.deepEqual(ids(hist.slice(1)), ['c1-m6', 'c1-m7', 'c1-m8', 'c1-m9', 'c1-m10']);
      assert.equal(after.list({ tier: 'archival', label_prefix: prefix('c1') }).blocks.length, 1, "only the winner's batch is archived");
      after.close();
    });
  });
});

describe('host functions over the store', () => {
  /** A stand-in for Extism's CallContext. */
  function fakeContext(/** @type {string} */ input) {
    /** @type {string[]} */
    const stored = [];
    return {
      stored,
      cc: { read: () => ({ text: () => input }), store: (/** @type {string} */ s) => { stored.push(s); return BigInt(stored.length) << 48n; } },
    };
  }

  test('a conflict from the store becomes {"error":{"code":"conflict"}}; a good commit {"ok":true}', async () => {
    const s = new MemoryStore();
    seed(s, 'c1', 2);
    const f = hostFunctions({ store: s });
    let ctx = fakeContext(JSON.stringify({ conversation_id: 'c1', operation_id: 'o', remove_message_ids: ['nope'], insert_message: clipArchive('c1', 'x') }));
    await f.compaction_commit(/** @type {any} */ (ctx.cc), 1n);
    assert.equal(JSON.parse(ctx.stored[0]).error.code, 'conflict');
    ctx = fakeContext(JSON.stringify({ conversation_id: 'c1', operation_id: 'o', remove_message_ids: ['c1-m1'], insert_message: clipArchive('c1', 'x') }));
    await f.compaction_commit(/** @type {any} */ (ctx.cc), 1n);
    assert.deepEqual(JSON.parse(ctx.stored[0]), { ok: true });
    ctx = fakeContext(JSON.stringify({ tier: 'archival', label_prefix: 7 }));
    await f.memory_list(/** @type {any} */ (ctx.cc), 1n);
    assert.equal(JSON.parse(ctx.stored[0]).error.code, 'invalid_request');
    s.close();
  });

  test('nothing is thrown: bad JSON, a missing implementation, a throwing one, undefined', async () => {
    const cases = [
      [hostFunctions({ store: new MemoryStore() }).memory_list, 'not json', 'unavailable'],
      [hostFunctions({}).llm_complete, '{}', 'unavailable'],
      [hostFunctions({ llm: () => { throw new Error('x'); } }).llm_complete, '{}', 'other'],
      [hostFunctions({ llm: () => undefined }).llm_complete, '{}', 'other'],
      [hostFunctions({ llm: () => { throw new HostError('rate_limited', 'slow down', true); } }).llm_complete, '{}', 'rate_limited'],
    ];
    for (const [f, input, code] of cases) {
      const { cc, stored } = fakeContext(/** @type {string} */ (input));
      await /** @type {any} */ (f)(cc, 1n);
      const out = JSON.parse(stored[0]);
      assert.equal(out.error.code, code);
      assert.equal(typeof out.error.message, 'string');
      assert.equal(typeof out.error.retryable, 'boolean');
    }
  });
});

test('the SQL comes from the shared files (no SQL copied into JavaScript)', () => {
  assert.equal(sqlDir(), join(repoRoot, 'hostfuncs', 'store', 'sqlite'));
  const r = spawnSync('grep', ['-rlE', 'CREATE (TRIGGER|VIRTUAL)|CREATE TABLE (messages|recall|blocks)|bm25\\(', join(repoRoot, 'bindings', 'node', 'src')], { encoding: 'utf8' });
  assert.equal(r.stdout.trim(), '', 'schema or search SQL in src/');
});

test('[WARM_WRITES] commits on a database of its own, once per process: the store is unchanged, and search still works', async () => {
  const { WARM_WRITES } = await import('../src/hostfns.js');
  const s = new SQLiteStore(':memory:');
  try {
    s.append('c1', [{ id: 'm1', role: 'user', content: 'the retry budget stays at three' }]);
    const before = JSON.stringify([s.activeMessages('c1'), s.list({ tier: 'archival', label_prefix: '' })]);
    /** @type {any} */ (s)[WARM_WRITES]();
    /** @type {any} */ (s)[WARM_WRITES]();
    assert.equal(JSON.stringify([s.activeMessages('c1'), s.list({ tier: 'archival', label_prefix: '' })]), before);
    assert.equal(s.recall('warm-0', 'warm'), null);
    assert.ok((await s.search('retry budget', { conversationId: 'c1' })).some((h) => h.id === 'm1'));
  } finally {
    s.close();
  }
});
