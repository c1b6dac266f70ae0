// Loads a clipfold plug-in with nothing but @extism/extism and WASI,
// provides the three host functions of docs/spec.md#host-functions scripted from
// harness/sdks/cases.json, and checks the cases there.
//
// Usage: node check.mjs [--worker] CASES_JSON WASM
//   --worker: run the plug-in on a worker thread (runInWorker: true; host
//   functions may then be async) instead of the main thread.
//
// Output (harness/sdks/README.md): "sdk NAME VERSION", then "ok CASE" or
// "FAIL CASE: why" per case. Exit status 1 when any case failed.
import createPlugin from '@extism/extism';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isDeepStrictEqual } from 'node:util';

const flags = process.argv.slice(2).filter((a) => a.startsWith('--'));
const [casesPath, wasmPath] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
if (!casesPath || !wasmPath) {
  console.error('usage: node check.mjs [--worker] CASES_JSON WASM');
  process.exit(2);
}
const worker = flags.includes('--worker');
if (flags.some((f) => f !== '--worker')) {
  console.error(`unknown flag in ${flags}`);
  process.exit(2);
}
const cases = JSON.parse(readFileSync(casesPath, 'utf8'));

// The installed SDK's own package.json (its "exports" map hides it from import).
const require = createRequire(import.meta.url);
// Cut at the package's own directory, not at the first "dist/" of the path
// (a checkout in /work/wt-dist/ or ~/dist/ has one before node_modules).
const sdkEntry = require.resolve('@extism/extism');
const sdkDir = sdkEntry.replace(/([\\/]node_modules[\\/]@extism[\\/]extism)[\\/].*$/, '$1');
const sdkPkg = JSON.parse(readFileSync(sdkDir + '/package.json', 'utf8'));
console.log(`sdk ${sdkPkg.name} ${sdkPkg.version}${worker ? ' (runInWorker)' : ''}`);

// What the plug-in sent to each host function, and the script answering it.
const host = { script: {}, llm: [], list: [], commits: [] };

function sleepSync(ms) {
  if (ms > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** A host function: reads the JSON input, records it, answers from the script. */
const hostFn = (record, answer) => (cc, off) => {
  let out;
  try {
    const input = JSON.parse(cc.read(off).text());
    record.push(input);
    out = answer(input);
  } catch (err) {
    out = { error: { code: 'other', message: `host: ${err}`, retryable: false } };
  }
  return cc.store(JSON.stringify(out));
};

const functions = {
  'extism:host/user': {
    llm_complete: hostFn(host.llm, () => {
      sleepSync(host.script.llm_delay_ms ?? 0);
      return host.script.llm_complete;
    }),
    memory_list: hostFn(host.list, () => host.script.memory_list),
    compaction_commit: hostFn(host.commits, () => host.script.compaction_commit),
  },
};

let plugin;
try {
  plugin = await createPlugin(
    { wasm: [{ data: readFileSync(wasmPath) }] },
    // WASI through node:wasi, which has real clocks (there is no clock
    // option); enableWasiOutput false sends the plug-in's stdout/stderr
    // to /dev/null, the SDK's default.
    { useWasi: true, runInWorker: worker, functions, enableWasiOutput: false },
  );
} catch (err) {
  console.log(`FAIL load: ${err?.message ?? err}`);
  process.exit(1);
}

async function call(c) {
  host.script = c.host ?? {};
  host.llm.length = 0;
  host.list.length = 0;
  host.commits.length = 0;
  try {
    const out = await plugin.call(c.export, JSON.stringify(c.input));
    return JSON.parse(out.text());
  } finally {
    await plugin.reset(); // the JS SDK keeps every memory block until a reset
  }
}

class CheckError extends Error {}
function same(what, got, want) {
  if (!isDeepStrictEqual(got, want)) {
    throw new CheckError(`${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
  }
}
const ids = (list) => (list ?? []).map((m) => m.id);

// The SDK prefixes the plug-in's error string; this is what it adds.
const PLUGIN_ERROR = 'Plugin-originated error: ';

const checks = {
  async split(c) {
    const res = await call(c);
    same('to_compress ids', ids(res.to_compress), c.expect.to_compress);
    same('to_keep ids', ids(res.to_keep), c.expect.to_keep);
    same('prior_summary', res.prior_summary, c.expect.prior_summary);
  },
  async compress(c) {
    const e = c.expect;
    const res = await call(c);
    same('failed', res.failed, e.failed);
    same('messages_compressed', res.messages_compressed, e.messages_compressed);
    same('batches_created', res.batches_created, e.batches_created);
    same('llm_calls', res.llm_calls, e.llm_calls);
    same('llm_complete calls', host.llm.length, e.llm_calls);
    same('compaction_commit calls', host.commits.length, e.commits);
    same('memory_list calls', host.list.length, 1);
    same('memory_list label_prefix', host.list[0].label_prefix, e.label_prefix);
    const [first, ...kept] = res.history;
    const summary = c.host.llm_complete.content[0].text;
    same('history[0].role', first?.role, 'system');
    if (!first.content.startsWith(e.archive_prefix)) {
      throw new CheckError(`history[0].content starts ${JSON.stringify(first.content.slice(0, e.archive_prefix.length + 10))}, want ${JSON.stringify(e.archive_prefix)}`);
    }
    if (!first.content.includes(summary)) throw new CheckError('history[0].content does not hold the LLM\'s summary');
    same('kept ids', ids(kept), e.kept_ids);
    const commit = host.commits[0];
    same('commit conversation_id', commit.conversation_id, e.conversation_id);
    same('commit remove_message_ids (sorted)', [...commit.remove_message_ids].sort(), e.removed_ids);
    same('commit operation_id', commit.operation_id, res.operation_id);
    same('commit insert_message.content', commit.insert_message?.content, first.content);
    same('commit archive_writes', commit.archive_writes?.length, 1);
  },
  async invalid(c) {
    let res;
    try {
      res = await call(c);
    } catch (err) {
      const msg = String(err?.message ?? err);
      if (!msg.startsWith(PLUGIN_ERROR)) throw new CheckError(`error ${JSON.stringify(msg)} lacks the SDK's ${JSON.stringify(PLUGIN_ERROR)}`);
      const pluginError = msg.slice(PLUGIN_ERROR.length);
      if (!pluginError.startsWith(c.error_prefix)) {
        throw new CheckError(`error ${JSON.stringify(pluginError)}, want one starting ${JSON.stringify(c.error_prefix)}`);
      }
      return;
    }
    throw new CheckError(`succeeded with ${JSON.stringify(res)}, want an error starting ${JSON.stringify(c.error_prefix)}`);
  },
  async deadline(c) {
    const e = c.expect;
    const res = await call(c);
    same('failed', res.failed, e.failed);
    same('failure_code', res.failure_code, e.failure_code);
    same('history ids', ids(res.history), e.history_ids);
    same('llm_complete calls', host.llm.length, e.llm_calls);
    same('compaction_commit calls', host.commits.length, e.commits);
  },
};

let failed = 0;
for (const [name, check] of Object.entries(checks)) {
  try {
    await check(cases[name]);
    console.log(`ok ${name}`);
  } catch (err) {
    failed++;
    console.log(`FAIL ${name}: ${err instanceof CheckError ? err.message : (err?.stack ?? err)}`);
  }
}
await plugin.close();
process.exit(failed ? 1 : 0);
