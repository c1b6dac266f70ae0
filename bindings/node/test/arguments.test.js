// The public API's arguments: a wrong type, or a number JSON cannot hold
// (NaN, ±Infinity, a BigInt), is a ClipfoldError naming the argument or
// the field — never coerced (String(null) is "null"; JSON.stringify writes
// NaN as null) and never stored.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ClipfoldError, createCompactor, HostError, MemoryStore, SQLiteStore } from '../src/index.js';
import { wasmPath } from './helpers/common.js';

/**
 * @param {Promise<unknown> | (() => unknown)} run
 * @param {string} field
 */
async function refused(run, field) {
  const check = (/** @type {any} */ e) => {
    assert.ok(e instanceof ClipfoldError, `${e}`);
    assert.equal(e.code, 'invalid_input');
    assert.equal(e.field, field, e.message);
    return true;
  };
  if (typeof run === 'function') assert.throws(run, check);
  else await assert.rejects(run, check);
}

const at = '2026-03-01T10:00:00.000Z';

describe('arguments', () => {
  /** @type {MemoryStore} */
  let store;
  /** @type {Awaited<ReturnType<typeof createCompactor<MemoryStore>>>} */
  let c;
  before(async () => {
    store = new MemoryStore();
    c = await createCompactor({ wasmPath: wasmPath(), store });
  });
  after(() => c.close());

  test('search, searchQuery and read want strings: null is not "null"', async () => {
    await refused(c.search(/** @type {any} */ (null)), 'query');
    await refused(c.search(/** @type {any} */ (undefined)), 'query');
    await refused(c.search(/** @type {any} */ (42)), 'query');
    await refused(c.searchQuery(/** @type {any} */ (null)), 'query');
    await refused(c.read(/** @type {any} */ (null)), 'id');
    await refused(c.search('x', { limit: /** @type {any} */ ('a') }), 'limit');
    await refused(c.search('x', { limit: Number.NaN }), 'limit');
    await refused(c.search('x', { limit: 2.5 }), 'limit');
    await refused(c.search('x', { conversationId: /** @type {any} */ (7) }), 'conversationId');
    assert.deepEqual(await c.search('nothing stored yet'), []);
  });

  test('a message with content NaN or Infinity is refused, naming the field; nothing is stored', async () => {
    await refused(c.compress('nan', [{ id: 'a', role: 'user', content: 'fine', created_at: at },
      { id: 'b', role: 'user', content: /** @type {any} */ (Number.NaN), created_at: at }]), 'history[1].content');
    await refused(c.compress('nan', [{ id: 'a', role: 'user', created_at: at,
      content: /** @type {any} */ ([{ type: 'text', text: 'x', weight: -Infinity }]) }]), 'history[0].content[0].weight');
    await refused(c.compress('nan', [{ id: 'a', role: 'user', content: 'x', created_at: at, tokens: /** @type {any} */ (10n) }]),
      'history[0].tokens');
    await refused(c.compress('nan', [{ id: 'a', role: 'user', content: 'x', created_at: at }], { callerOwned: true,
      config: { chunk_size: Number.POSITIVE_INFINITY } }), 'config.chunk_size');
    await refused(c.decodeHistory('nan', [{ role: 'user', content: /** @type {any} */ (Infinity) }]), 'history[0].content');
    assert.deepEqual(store.history('nan'), [], 'nothing stored');
    // Legitimate nulls still pass.
    const r = await c.compress('nan', [{ id: 'a', role: 'user', content: 'x', created_at: at, name: /** @type {any} */ (null) }]);
    assert.equal(r.failed, false);
    assert.equal(store.history('nan').length, 1);
  });

  test('the pure exports refuse non-JSON numbers by their path', async () => {
    await refused(c.score([{ role: 'user', content: 'x' }, { role: 'user', content: /** @type {any} */ (Number.NaN) }]),
      'messages[1].content');
    await refused(c.shouldCompact([], { model_max_tokens: Number.NaN }), 'config.model_max_tokens');
    await refused(c.call('estimateTokens', { text: 'x', extra: Infinity }), 'extra');
  });

  test('options of the wrong type', async () => {
    await refused(c.compress('o', [], { callerOwned: /** @type {any} */ ('yes') }), 'callerOwned');
    await refused(c.compress('o', /** @type {any} */ ('not a list')), 'history');
    await refused(c.compactIfDue('o', [], { targetShare: /** @type {any} */ ('0.5') }), 'targetShare');
    await refused(createCompactor({ wasmPath: wasmPath(), config: /** @type {any} */ ('x') }), 'config');
    await refused(createCompactor({ wasmPath: wasmPath(), config: { keep_recent: Number.NaN } }), 'config.keep_recent');
  });

  test('the store: append refuses NaN and Infinity by their field; ids, queries and options are strings', async () => {
    assert.throws(() => store.append('s1', [{ id: 'a', role: 'user', content: 'x', created_at: at },
      { id: 'b', role: 'user', content: /** @type {any} */ (Number.NaN), created_at: at }]),
    (/** @type {any} */ e) => e instanceof HostError && /messages\[1\]\.content: NaN is not a JSON number/.test(e.message));
    assert.throws(() => store.append('s1', [{ id: 'c', role: 'user', content: 'x', created_at: at, meta: { w: Infinity } }]),
      /messages\[0\]\.meta\.w: Infinity is not a JSON number/);
    assert.deepEqual(store.history('s1'), [], 'nothing stored');
    await refused(store.search(/** @type {any} */ (null)), 'query');
    await refused(() => store.searchFts5('x', { limit: /** @type {any} */ ('a') }), 'limit');
    await refused(() => store.searchFts5(/** @type {any} */ (null)), 'match');
    await refused(() => store.recall(/** @type {any} */ (null)), 'messageId');
    await refused(() => store.read(/** @type {any} */ (5)), 'messageId');
    await refused(() => store.block(/** @type {any} */ (undefined)), 'blockId');
    await refused(() => new SQLiteStore(/** @type {any} */ (5)), 'path');
  });
});
