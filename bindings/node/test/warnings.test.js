// A normal run prints nothing on stderr: no "ExperimentalWarning: WASI is
// an experimental feature" from node:wasi (loaded by @extism/extism on the
// main thread and in the compress worker), while other warnings still show.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { wasmPath } from './helpers/common.js';

const index = new URL('../src/index.js', import.meta.url).href;

/** Runs an ES module script with plain `node` (no warning flags); returns {status, stdout, stderr}. */
function run(/** @type {string} */ script) {
  const env = { ...process.env, CLIPFOLD_WASM: wasmPath() };
  delete env.NODE_NO_WARNINGS;
  delete env.NODE_OPTIONS;
  return spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', env });
}

test('compress (main thread and worker) and search print no warning', () => {
  const r = run(`
    import { createCompactor, MemoryStore } from ${JSON.stringify(index)};
    const store = new MemoryStore();
    const c = await createCompactor({ store });
    const h = Array.from({ length: 30 }, (_, i) => ({ id: 'm' + i, role: i % 2 ? 'assistant' : 'user',
      content: 'turn ' + i + ' about the walrus budget '.repeat(5), created_at: new Date(Date.UTC(2026, 1, 1, 0, i)).toISOString() }));
    store.append('c', h);
    const r = await c.compress('c', undefined, { config: { keep_recent: 3 } });
    const hits = await c.search('walrus budget', { conversationId: 'c' });
    console.log(r.failed, r.messages_compressed > 0, hits.length > 0, process.env.NODE_NO_WARNINGS === undefined);
    await c.close();
    store.close();`);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'false true true true', 'compacted, found, and NODE_NO_WARNINGS restored');
  assert.equal(r.stderr, '', 'stderr must be empty');
});

test('other warnings are not silenced', () => {
  const r = run(`
    import { createCompactor } from ${JSON.stringify(index)};
    const c = await createCompactor();
    await c.compress('c', [{ id: 'a', role: 'user', content: 'x', created_at: '2026-01-01T00:00:00Z' }]);
    process.emitWarning('a user warning', 'ExperimentalWarning');
    process.emitWarning('another');
    await c.close();`);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /ExperimentalWarning: a user warning/);
  assert.match(r.stderr, /Warning: another/);
  assert.doesNotMatch(r.stderr, /WASI/);
});
