// MemoryStore: SPEC §5's all-or-nothing commit and conflict rules, and the
// host-function layer's error objects.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryStore, HostError, hostFunctions } from '../src/index.js';

const msg = (/** @type {string} */ id, extra = {}) => ({ id, conversation_id: 'c1', role: 'user', content: `text ${id}`, created_at: '2026-02-28T10:00:00.000Z', ...extra });
const clip = { id: 'clip1', conversation_id: 'c1', role: 'system', content: '[Context Summary — 2 messages compressed across 1 compaction cycle]\n…' };

function seeded() {
  const s = new MemoryStore();
  s.append('c1', [msg('m1'), msg('m2'), msg('m3')]);
  s.append('c2', [msg('x1')]);
  s.commit({ conversation_id: 'c2', operation_id: 'op0', archive_writes: [{ label: 'compaction-batch-c2-2026-02-28T10:00:00.000Z', content: '{}\nold', tier: 'archival', reason: 'r' }], archive_deletes: [], remove_message_ids: [], insert_message: /** @type {any} */ (null) });
  return s;
}

describe('MemoryStore', () => {
  test('commit applies writes, deletes, removals and the insert together', () => {
    const s = seeded();
    const r = s.commit({
      conversation_id: 'c1', operation_id: 'op1',
      archive_writes: [{ label: 'compaction-batch-c1-2026-02-28T10:01:00.000Z', content: '{"conversation_id":"c1"}\nsummary', tier: 'archival', reason: 'compaction' }],
      archive_deletes: ['blk_1'], remove_message_ids: ['m1', 'm2'], insert_message: clip,
    });
    assert.deepEqual(r, { ok: true });
    assert.deepEqual(s.history('c1'), [clip, msg('m3')]);
    assert.deepEqual(s.recall('m1')?.message, msg('m1'));
    assert.equal(s.recall('m1')?.operation_id, 'op1');
    assert.deepEqual(s.list({ tier: 'archival', label_prefix: 'compaction-batch-c2-' }), { blocks: [] });
    assert.deepEqual(s.list({ tier: 'archival', label_prefix: 'compaction-batch-c1-' }).blocks.map((b) => b.content), ['{"conversation_id":"c1"}\nsummary']);
    assert.equal(s.search('summary', { conversationId: 'c1' })[0].kind, 'block');
    assert.equal(s.search('text m2')[0].id, 'm2');
  });

  for (const [what, req] of /** @type {const} */ ([
    ['a remove id not in the active history', { remove_message_ids: ['m1', 'gone'], archive_deletes: [] }],
    ['a remove id of another conversation', { remove_message_ids: ['x1'], archive_deletes: [] }],
    ['a delete id that does not exist', { remove_message_ids: ['m1'], archive_deletes: ['blk_99'] }],
  ])) {
    test(`${what} is a conflict and changes nothing`, () => {
      const s = seeded();
      const before = s.snapshot();
      assert.throws(() => s.commit({ conversation_id: 'c1', operation_id: 'op1', archive_writes: [{ label: 'compaction-batch-c1-x', content: 'y', tier: 'archival' }], insert_message: clip, ...req }),
        (/** @type {any} */ e) => e instanceof HostError && e.code === 'conflict' && e.retryable === false);
      assert.deepEqual(s.snapshot(), before);
    });
  }

  test('list matches the label prefix only', () => {
    const s = new MemoryStore();
    s.commit({ conversation_id: 'c1', operation_id: 'o', archive_writes: [
      { label: 'compaction-batch-c1-2026-02-28T10:00:00.000Z', content: 'a', tier: 'archival' },
      { label: 'compaction-batch-c1-x-2026-02-28T10:00:00.000Z', content: 'b', tier: 'archival' },
      { label: 'compaction-batch-c1-2026-02-28T11:00:00.000Z', content: 'c', tier: 'core' },
    ], archive_deletes: [], remove_message_ids: [], insert_message: /** @type {any} */ (null) });
    assert.deepEqual(s.list({ tier: 'archival', label_prefix: 'compaction-batch-c1-' }).blocks.map((b) => b.content), ['a', 'b']);
  });
});

describe('host functions', () => {
  /** A stand-in for Extism's CallContext. */
  function fakeContext(/** @type {string} */ input) {
    /** @type {string[]} */
    const stored = [];
    return {
      stored,
      cc: { read: () => ({ text: () => input }), store: (/** @type {string} */ s) => { stored.push(s); return BigInt(stored.length) << 48n; } },
    };
  }

  test('a conflict from the store becomes {"error":{"code":"conflict"}}', async () => {
    const s = seeded();
    const f = hostFunctions({ store: s });
    const { cc, stored } = fakeContext(JSON.stringify({ conversation_id: 'c1', operation_id: 'o', archive_writes: [], archive_deletes: [], remove_message_ids: ['nope'], insert_message: clip }));
    await f.compaction_commit(/** @type {any} */ (cc), 1n);
    assert.equal(JSON.parse(stored[0]).error.code, 'conflict');
  });

  test('nothing is thrown: bad JSON, a missing implementation, a throwing one, undefined', async () => {
    const cases = [
      [hostFunctions({ store: seeded() }).memory_list, 'not json', 'unavailable'],
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
