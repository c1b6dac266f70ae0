// SyncPlugin: the plug-in's exports called synchronously from the
// calling thread (a worker of its own answers), as the SQLite store plans
// its commits and appends. warm() loads the plug-in on the worker ahead
// of the first call, without changing any answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
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

test('a worker that ends during a call: the call fails at once saying so (not after the timeout), the next call gets a new worker', () => {
  requireExports('planCommit', 'parseBlocks');
  const dir = mkdtempSync(join(tmpdir(), 'clipfold-syncplugin-'));
  try {
    // Loaded in every thread (a worker inherits the process's --import): in
    // the plug-in's worker, a planCommit call ends the thread once it is
    // under way, as an uncaught error or a process.exit there would.
    const hook = join(dir, 'end-worker.mjs');
    writeFileSync(hook, `import { isMainThread, MessagePort } from 'node:worker_threads';
if (!isMainThread) {
  const on = MessagePort.prototype.on;
  MessagePort.prototype.on = function (ev, fn) {
    if (ev !== 'message') return on.call(this, ev, fn);
    return on.call(this, ev, (m) => { const r = fn(m); if (m && m.name === 'planCommit') process.exit(7); return r; });
  };
}
`);
    const main = join(dir, 'main.mjs');
    writeFileSync(main, `import { SyncPlugin, WARM_CALLS } from ${JSON.stringify(new URL('../src/syncplugin.js', import.meta.url).href)};
const p = new SyncPlugin(${JSON.stringify(wasmPath())});
const out = {};
try {
  p.call('planCommit', WARM_CALLS.find(([n]) => n === 'planCommit')[1]);
  out.first = 'answered';
} catch (err) {
  out.first = { name: err.name, code: err.code, message: err.message };
}
out.next = JSON.parse(p.call('parseBlocks', '{"contents":["plain text"]}'));
p.close();
console.log(JSON.stringify(out));
`);
    const r = spawnSync(process.execPath, ['--import', pathToFileURL(hook).href, main], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.signal, null, `the call waited for a worker that had ended (killed after 60 s): ${r.stderr}`);
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout.trim().split('\n').pop() ?? '');
    assert.equal(out.first.name, 'ClipfoldError', JSON.stringify(out));
    assert.equal(out.first.code, 'internal');
    assert.match(out.first.message, /planCommit.*worker thread ended \(exit code 7\) before answering/);
    assert.deepEqual(out.next, { blocks: [{ batch: null }] });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
