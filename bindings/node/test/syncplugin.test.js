// SyncPlugin: the plug-in's exports called synchronously from the
// calling thread (a worker of its own answers), as the SQLite store plans
// its commits and appends. warm() loads the plug-in on the worker ahead
// of the first call, without changing any answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClipfoldError } from '../src/index.js';
import { SyncPlugin, WARM_CALLS } from '../src/syncplugin.js';
import { requireExports, wasmPath } from './helpers/common.js';

const input = JSON.stringify({ messages: [{ role: 'user', content: 'How long is the retry budget of module 7?' }], config: { model_max_tokens: 1000 } });

test('warm() then call answers as a cold call does; warm() twice is one worker', () => {
  requireExports('shouldCompact');
  const cold = new SyncPlugin(wasmPath());
  const warm = new SyncPlugin(wasmPath());
  try {
    warm.warm();
    warm.warm();
    const a = JSON.parse(cold.call('shouldCompact', input));
    const b = JSON.parse(warm.call('shouldCompact', input));
    assert.deepEqual(b, a);
    assert.ok(a.tokens > 0 && a.limit > 0 && a.due === false, JSON.stringify(a));
  } finally {
    cold.close();
    warm.close();
  }
});

test('warm()\'s calls are valid input to every store export (else warming would run nothing)', () => {
  requireExports('planCommit', 'planAppend', 'parseBlocks');
  const p = new SyncPlugin(wasmPath());
  try {
    assert.deepEqual(WARM_CALLS.map(([name]) => name).sort(), ['parseBlocks', 'planAppend', 'planCommit']);
    for (const [name, input] of WARM_CALLS) {
      const out = JSON.parse(p.call(name, input));
      assert.equal(out.error, undefined, `${name}: ${JSON.stringify(out)}`);
    }
  } finally {
    p.close();
  }
});

test('warm() on a closed instance does nothing; a call after close throws', () => {
  const p = new SyncPlugin(wasmPath());
  p.close();
  p.warm();
  assert.throws(() => p.call('shouldCompact', input), (e) => e instanceof ClipfoldError && /closed/.test(e.message));
});

test('a module that cannot load: warm() is quiet, the first call says why', () => {
  const dir = mkdtempSync(join(tmpdir(), 'clipfold-syncplugin-'));
  try {
    const bad = join(dir, 'not-a-plugin.wasm');
    writeFileSync(bad, 'this is not WebAssembly');
    const p = new SyncPlugin(bad);
    try {
      p.warm();
      assert.throws(() => p.call('shouldCompact', input), (e) => e instanceof ClipfoldError && e.code !== undefined && /shouldCompact|WebAssembly|magic|compile/i.test(e.message));
    } finally {
      p.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
