// Times `split` through nothing but @extism/extism (no clipfold host, no
// staging): input and output cross the SDK's kernel 8 bytes per call, as
// for any user who loads the plug-in with the plain SDK. tools/benchreport
// runs it for docs/benchmarks.md ("split through a plain Extism SDK").
//
// Usage: node bench.mjs WASM INPUTS_DIR SIZES [RUNS]
//   INPUTS_DIR holds history-N.json (tools/benchreport writes them from
//   internal/benchdata); SIZES is a comma list of N; RUNS timed calls per
//   size (default 21), after 3 untimed ones (V8 tiers its code up as it
//   runs, as it would for a host calling on every turn). Prints JSON: {"sdk", "version", "calls": [{"export",
//   "messages", "median_ms", "min_ms", "runs"}]}.
import createPlugin from '@extism/extism';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const [wasmPath, inputs, sizes, runsArg] = process.argv.slice(2);
if (!wasmPath || !inputs || !sizes) {
  console.error('usage: node bench.mjs WASM INPUTS_DIR SIZES [RUNS]');
  process.exit(2);
}
const runs = Number(runsArg ?? 21);
const require = createRequire(import.meta.url);
const sdkDir = require.resolve('@extism/extism').replace(/([\\/]node_modules[\\/]@extism[\\/]extism)[\\/].*$/, '$1');
const version = JSON.parse(readFileSync(sdkDir + '/package.json', 'utf8')).version;

// split calls no host function; the plug-in imports three, so they exist.
const unused = (cc) => cc.store('{"error":{"code":"other","message":"not used by split","retryable":false}}');
const plugin = await createPlugin({ wasm: [{ data: readFileSync(wasmPath) }] }, {
  useWasi: true,
  functions: { 'extism:host/user': { llm_complete: unused, memory_list: unused, compaction_commit: unused } },
});

const calls = [];
for (const n of sizes.split(',').map(Number)) {
  // A fresh Uint8Array: the SDK stores a view's whole ArrayBuffer (README).
  const input = new Uint8Array(readFileSync(`${inputs}/history-${n}.json`));
  const times = [];
  for (let i = -3; i < runs; i++) {
    const t0 = performance.now();
    const out = await plugin.call('split', input);
    const ms = performance.now() - t0;
    const res = JSON.parse(out.text());
    if (res.to_compress.length + res.to_keep.length !== n) throw new Error(`split of ${n}: ${res.to_compress.length} + ${res.to_keep.length} messages`);
    await plugin.reset(); // the SDK keeps every memory block until a reset
    if (i >= 0) times.push(ms);
  }
  times.sort((a, b) => a - b);
  calls.push({ export: 'split', messages: n, median_ms: times[runs >> 1], min_ms: times[0], runs });
}
await plugin.close();
console.log(JSON.stringify({ sdk: '@extism/extism', version, node: process.version, calls }));
