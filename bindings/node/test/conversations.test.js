// Conversations are apart: callers number each conversation's messages
// alike (msg_0, msg_1, …), and a message is known by its conversation and
// id — stored, compacted, recalled, searched and read in its own
// conversation.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createCompactor, MemoryStore } from '../src/index.js';
import { memoryRead } from '../src/memory.js';
import { wasmPath } from './helpers/common.js';
import { makeConversation } from './helpers/conversation.js';

const CONFIG = { keep_recent: 6, chunk_size: 10 };

/**
 * makeConversation with ids msg_<from>, msg_<from+1>, … and the topic in every text.
 * @param {string} topic
 * @param {number} n
 * @param {number} [from]
 * @returns {any[]}
 */
function numbered(topic, n, from = 0) {
  return makeConversation('x', n).map((m, i) => {
    const out = { ...m, id: `msg_${from + i}` };
    delete out.conversation_id;
    if (typeof out.content === 'string' && out.content) out.content = `[${topic}] ${out.content}`;
    return out;
  });
}

/**
 * Every message is in the conversation, active or in recall, as given.
 * @param {MemoryStore} store
 * @param {string} conv
 * @param {any[]} messages
 */
function assertAllKept(store, conv, messages) {
  const active = new Map(store.history(conv).map((m) => [m.id, m]));
  for (const m of messages) {
    const kept = active.get(m.id) ?? store.recall(m.id, conv)?.message;
    assert.deepEqual(kept, m, `lost or mixed up: ${conv} ${m.id}`);
  }
}

describe('conversations numbering their messages alike', () => {
  /** @type {Awaited<ReturnType<typeof createCompactor<MemoryStore>>>} */
  let c;
  /** @type {MemoryStore} */
  let store;
  before(async () => {
    store = new MemoryStore();
    c = await createCompactor({ wasmPath: wasmPath(), store, config: CONFIG });
  });
  after(async () => {
    await c?.close();
    store?.close();
  });

  test('the second conversation is stored and compacted, nothing lost', async () => {
    const alpha = numbered('alpha', 40);
    const beta = numbered('beta', 40);
    let r = await c.compress('a1', alpha);
    assert.ok(!r.failed && r.messages_compressed > 0, r.failure_message ?? '');
    r = await c.compress('a2', beta);
    assert.ok(!r.failed && r.messages_compressed > 0, r.failure_message ?? '');
    // The caller replaces its list with the result: beta's kept messages
    // behind its clip-archive, none of alpha's.
    const kept = r.history.filter((m) => String(m.id).startsWith('msg_'));
    assert.ok(kept.length > 0);
    for (const m of kept) assert.deepEqual(m, beta[Number(String(m.id).slice(4))]);
    assertAllKept(store, 'a1', alpha);
    assertAllKept(store, 'a2', beta);
    // Going on from the replaced list works too.
    const more = numbered('beta', 12, 40);
    r = await c.compress('a2', [...r.history, ...more]);
    assert.ok(!r.failed, r.failure_message ?? '');
    assertAllKept(store, 'a2', [...beta, ...more]);
    // Search and read find each conversation's own message.
    const hits = (await c.search('billing migration', { conversationId: 'a2' })).filter((h) => h.kind === 'message');
    assert.ok(hits.length > 0 && hits.every((h) => h.conversation_id === 'a2' && h.text.includes('[beta]')));
    const both = hits.map((h) => h.id).filter((id) => store.recall(id, 'a1') !== null);
    assert.ok(both.length > 0);
    const byId = (/** @type {any[]} */ list) => new Map(list.map((m) => [m.id, m]));
    const [alphaById, betaById] = [byId(alpha), byId([...beta, ...more])];
    for (const id of both) {
      const a2 = await c.read(id, { conversationId: 'a2' });
      const a1 = await c.read(id, { conversationId: 'a1' });
      assert.deepEqual(a2?.kind === 'message' && a2.message, betaById.get(id));
      assert.deepEqual(a1?.kind === 'message' && a1.message, alphaById.get(id));
      assert.ok((await memoryRead(c, { id, conversationId: 'a2' })).includes(JSON.stringify(betaById.get(id))));
    }
    await assert.rejects(c.read(both[0]), /more than one conversation .*"a1", "a2"/);
  });

  test('ids only in another conversation\'s recall are not skipped (the history came back empty)', async () => {
    const alpha = numbered('alpha', 40);
    assert.equal((await c.compress('b1', alpha)).failed, false);
    const active = new Set(store.activeMessages('b1').map((m) => m.id));
    const beta = numbered('beta', 40).filter((m) => !active.has(m.id)); // all in b1's recall
    assert.ok(beta.length > 10);
    const r = await c.compress('b2', beta);
    assert.ok(!r.failed && r.messages_compressed > 0 && r.history.length > 0, JSON.stringify(r).slice(0, 300));
    assertAllKept(store, 'b2', beta);
    assertAllKept(store, 'b1', alpha);
  });

  test('both active at once, then both compacted', async () => {
    const alpha = numbered('alpha', 8);
    const beta = numbered('beta', 8);
    assert.equal(await c.compactIfDue('c1', alpha), null);
    assert.equal(await c.compactIfDue('c2', beta), null);
    assert.deepEqual(store.history('c1'), alpha);
    assert.deepEqual(store.history('c2'), beta);
    alpha.push(...numbered('alpha', 32, 8));
    beta.push(...numbered('beta', 32, 8));
    for (const [conv, msgs] of /** @type {[string, any[]][]} */ ([['c1', alpha], ['c2', beta]])) {
      const r = await c.compress(conv, msgs);
      assert.ok(!r.failed && r.messages_compressed > 0, r.failure_message ?? '');
    }
    assertAllKept(store, 'c1', alpha);
    assertAllKept(store, 'c2', beta);
  });
});
