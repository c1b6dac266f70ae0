// A cold start pays only for what the plug-in needs. Node loads its HTTP
// client (undici) the first time anything reads the global fetch or
// Response, which @extism/extism does by default when it makes a plug-in:
// about a fifth of a cold start, for a plug-in that never makes a request.
// The host passes its own fetch and the compiled module as the manifest,
// so a compactor that compresses, searches and splits offline never loads
// it on the main thread (process.moduleLoadList; a worker has its own). A
// config still reaches the plug-in (read from the options, not the
// manifest).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { wasmPath } from './helpers/common.js';

const index = new URL('../src/index.js', import.meta.url).href;

test('an offline compactor never loads undici, and its config reaches the plug-in', () => {
  const script = `
    import { createCompactor, MemoryStore } from ${JSON.stringify(index)};
    const undici = () => process.moduleLoadList.some((m) => m.includes('undici'));
    const store = new MemoryStore();
    const c = await createCompactor({ store, config: { keep_recent: 2 } });
    const h = Array.from({ length: 30 }, (_, i) => ({ id: 'm' + i, role: i % 2 ? 'assistant' : 'user',
      content: 'turn ' + i + ' about the walrus budget '.repeat(5), created_at: new Date(Date.UTC(2026, 1, 1, 0, i)).toISOString() }));
    store.append('c', h);
    const r = await c.compress('c', undefined, {});
    const hits = await c.search('walrus budget', { conversationId: 'c' });
    const s = await c.split(h);
    console.log(JSON.stringify({ failed: r.failed, compressed: r.messages_compressed, hits: hits.length,
      kept: s.to_keep.length, undici: undici() }));
    await c.close();
    store.close();`;
  const r = spawnSync(process.execPath, ['--disable-warning=ExperimentalWarning', '--input-type=module', '-e', script],
    { encoding: 'utf8', env: { ...process.env, CLIPFOLD_WASM: wasmPath() } });
  assert.equal(r.status, 0, r.stderr);
  const got = JSON.parse(r.stdout.trim());
  assert.equal(got.failed, false);
  assert.equal(got.compressed, 28, 'keep_recent 2 from the compactor config: 28 of 30 compressed');
  assert.ok(got.hits > 0, 'search finds the archived messages');
  assert.equal(got.kept, 2, 'split keeps keep_recent 2');
  assert.equal(got.undici, false, 'undici was loaded: something read the global fetch or Response');
});
