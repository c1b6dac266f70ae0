#!/usr/bin/env node
// Benchmarks of the Node host (@extism/extism over build/clipfold.wasm, or
// $CLIPFOLD_WASM): median time of `split`, `score` and `shouldCompact` on
// histories of messages of ~400 bytes (internal/benchdata's conversation;
// --inputs=DIR reads its files), once for the call on the input's JSON
// text (`raw_ms`: what the host adds to the plug-in) and once with
// JSON.stringify of the input and JSON.parse of the output included
// (`median_ms`); and cold start (import of the package + compile + instantiate + first call),
// measured in fresh processes.
//
//   node bench.mjs                 a table
//   node bench.mjs --json          JSON on stdout
//   node bench.mjs --json=out.json the table, and JSON written to out.json
//   options: --sizes=1000,10000 --exports=split,score,shouldCompact --runs=N --cold-runs=N --inputs=DIR
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// Imported here rather than statically so that the cold-start child can
// time it: a program pays for loading the package (with SQLite's Wasm
// build, which node-sqlite3-wasm compiles on import) before anything else.
const tImport = performance.now();
const { compileWasm, createCompactor, findWasm, PluginInstance, stubHostFunctions, HOST_NAMESPACE } = await import('./src/index.js');
const importMs = performance.now() - tImport;

const args = Object.fromEntries(process.argv.slice(2).map((a) => {
  const [k, v] = a.replace(/^--/, '').split('=');
  return [k, v ?? true];
}));

/** The cold-start child: one measurement, printed as JSON. */
if (args['cold-child']) {
  const t0 = performance.now();
  const module = await compileWasm(findWasm());
  const t1 = performance.now();
  const inst = new PluginInstance({ module, runInWorker: args['cold-child'] === 'worker', functions: { [HOST_NAMESPACE]: stubHostFunctions() } });
  await inst.ready();
  const t2 = performance.now();
  await inst.call('version', '{}');
  const t3 = performance.now();
  await inst.close();
  process.stdout.write(JSON.stringify({ import_ms: importMs, compile_ms: t1 - t0, instantiate_ms: t2 - t1, first_call_ms: t3 - t2, total_ms: importMs + t3 - t0 }));
  process.exit(0);
}

const sizes = String(args.sizes ?? '1000,10000').split(',').map(Number);
const median = (/** @type {number[]} */ xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const WORDS = 'the deploy failed because the config had a typo; we agreed to add validation and a test for it before Friday ';
const TEXT = WORDS.repeat(5);

/** The input of internal/benchdata.History(n), ported: n messages of about 400 bytes of JSON each. */
function generate(n) {
  const base = Date.parse('2026-02-28T10:00:00.000Z');
  const messages = [];
  for (let i = 0; i < n; i++) {
    const start = (i * 7) % WORDS.length;
    let content = TEXT.slice(start, start + 220 + (i * 37) % 150);
    if (i % 10 === 3) content += ' — any idea?';
    messages.push({ id: `m${i}`, conversation_id: 'bench', role: i % 2 ? 'assistant' : 'user', content,
      created_at: new Date(base + i * 1000).toISOString() });
  }
  return { messages, config: { keep_recent: 20 } };
}

/** The history of n messages: from --inputs=DIR (history-N.json, written by tools/benchreport from the Go generator), else generated. */
function history(n) {
  if (typeof args.inputs !== 'string') return generate(n);
  const text = readFileSync(`${args.inputs}/history-${n}.json`, 'utf8');
  if (JSON.stringify(generate(n)) !== text) inputsDiffer = true;
  return JSON.parse(text);
}
let inputsDiffer = false;

const wasm = findWasm();
const c = await createCompactor({ wasmPath: wasm });
const results = { host: 'node', node: process.version, extism: JSON.parse(readFileSync(new URL('./node_modules/@extism/extism/package.json', import.meta.url), 'utf8')).version,
  wasm, wasm_bytes: readFileSync(wasm).length, calls: /** @type {any[]} */ ([]), cold_start: /** @type {any} */ ({}) };
const enc = new TextEncoder();
const dec = new TextDecoder();

for (const n of sizes) {
  const input = history(n);
  const bytes = enc.encode(JSON.stringify(input)).length;
  const runs = Number(args.runs ?? (n >= 100000 ? 5 : n >= 10000 ? 9 : 41));
  const text = JSON.stringify(input);
  for (const exp of String(args.exports ?? 'split,score,shouldCompact').split(',')) {
    // warm-up
    JSON.parse(dec.decode(await c.callRaw(exp, JSON.stringify(input))));
    const times = [];
    const raw = [];
    for (let r = 0; r < runs; r++) {
      let t0 = performance.now();
      await c.callRaw(exp, text);
      raw.push(performance.now() - t0);
      t0 = performance.now();
      const out = JSON.parse(dec.decode(await c.callRaw(exp, JSON.stringify(input))));
      times.push(performance.now() - t0);
      if (!out) throw new Error('no output');
    }
    results.calls.push({ export: exp, messages: n, input_bytes: bytes, runs, median_ms: median(times), min_ms: Math.min(...times),
      raw_ms: median(raw), raw_min_ms: Math.min(...raw) });
  }
}
await c.close();
results.inputs = typeof args.inputs === 'string' ? (inputsDiffer ? 'files (the port differs from the Go generator)' : 'files (identical to the port)') : 'generated';

const coldRuns = Number(args['cold-runs'] ?? 5);
const self = fileURLToPath(import.meta.url);
for (const mode of ['main', 'worker']) {
  const samples = [];
  for (let i = 0; i < coldRuns; i++) {
    const p = spawnSync(process.execPath, ['--disable-warning=ExperimentalWarning', self, `--cold-child=${mode}`], { encoding: 'utf8' });
    if (p.status !== 0) throw new Error(`cold-start child failed: ${p.stderr}`);
    samples.push(JSON.parse(p.stdout));
  }
  const m = (/** @type {string} */ k) => median(samples.map((s) => s[k]));
  results.cold_start[mode] = { runs: coldRuns, import_ms: m('import_ms'), compile_ms: m('compile_ms'), instantiate_ms: m('instantiate_ms'), first_call_ms: m('first_call_ms'), total_ms: m('total_ms') };
}

const f = (/** @type {number} */ x) => x.toFixed(1).padStart(9);
if (args.json === true) {
  process.stdout.write(JSON.stringify(results, null, 2) + '\n');
} else {
  console.log(`clipfold Node host — node ${results.node}, @extism/extism ${results.extism}, ${(results.wasm_bytes / 1e6).toFixed(1)} MB wasm`);
  console.log('export         messages   input MB    raw ms  median ms    min ms  runs');
  for (const r of results.calls) {
    console.log(`${r.export.padEnd(14)} ${String(r.messages).padStart(8)} ${(r.input_bytes / 1e6).toFixed(2).padStart(10)} ${f(r.raw_ms)} ${f(r.median_ms)} ${f(r.min_ms)} ${String(r.runs).padStart(5)}`);
  }
  console.log('cold start (fresh process, median)   import  compile  instantiate  first call   total ms');
  for (const [mode, s] of Object.entries(results.cold_start)) {
    const label = mode === 'main' ? 'main thread (pure exports)' : 'worker thread (compress)';
    console.log(`${label.padEnd(35)} ${f(s.import_ms)} ${f(s.compile_ms)} ${f(s.instantiate_ms).padStart(12)} ${f(s.first_call_ms).padStart(11)} ${f(s.total_ms).padStart(10)}`);
  }
  if (typeof args.json === 'string') writeFileSync(args.json, JSON.stringify(results, null, 2) + '\n');
}
