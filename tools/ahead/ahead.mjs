// The Node rows of tools/ahead (go run ./tools/ahead runs this script; it
// is not meant to be run alone). Its modes and output are those of
// tools/ahead/ahead.py:
//
// replay: one session replayed as an agent loop through compactAhead (or,
// --sync, compactIfDue), a caller-owned list on a SQLite store, against the
// summarizer at --url; prints the model calls, every call's wait and the
// waits at compactions (ms), the compactions, the calls over the limit, the
// wall time and the ids of the final history.
//
// count: the per-turn check at each size of --sizes, one new message a
// turn: countContext against LangChain.js's countTokensApproximately (the
// `langchain` package's, a devDependency of bindings/node) on the same
// list of LangChain.js messages — countContext on their dicts as the
// middleware hands them over (clipfold/langchain's messageDict, made once)
// — the fastest of --runs turns each (ms), each timed in a loop of its own.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

const { values: a, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    src: { type: 'string' }, wasm: { type: 'string' }, session: { type: 'string' }, url: { type: 'string', default: '' },
    db: { type: 'string', default: ':memory:' }, 'model-max-tokens': { type: 'string', default: '20000' },
    'turn-interval': { type: 'string', default: '0' }, turns: { type: 'string', default: '0' },
    sync: { type: 'boolean', default: false }, sizes: { type: 'string', default: '100,1000,10000' }, runs: { type: 'string', default: '20' },
  },
});
const mode = positionals[0];
if (!['replay', 'count'].includes(mode) || !a.src || !a.wasm || !a.session) {
  throw new Error('usage: ahead.mjs replay|count --src bindings/node/src/index.js --wasm FILE --session FILE …');
}
const { createCompactor, SQLiteStore, openaiCompatible } = await import(a.src);
const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

// The turn (from 1) of each message, as `clipfold run` splits them.
function turnsOf(msgs) {
  let t = 1, seenUser = false;
  return msgs.map((m) => {
    if (m.role === 'user') {
      if (seenUser) t++;
      seenUser = true;
    }
    return t;
  });
}

async function replay() {
  let msgs = JSON.parse(readFileSync(a.session, 'utf8'));
  const conv = String(msgs[0].conversation_id || 'session');
  let turnOf = turnsOf(msgs);
  const turns = Number(a.turns);
  if (turns > 0) {
    msgs = msgs.filter((_, i) => turnOf[i] <= turns);
    turnOf = turnOf.slice(0, msgs.length);
  }
  const store = new SQLiteStore(a.db);
  const c = await createCompactor({ wasmPath: a.wasm, store, llm: openaiCompatible({ baseUrl: a.url, apiKey: 'k', model: 'm' }),
    config: { model_max_tokens: Number(a['model-max-tokens']) } });
  const interval = Number(a['turn-interval']) * 1000;
  const out = { model_calls: 0, compactions: 0, compactions_failed: 0, calls_over_limit: 0, started: 0, applied: 0, at_limit: 0, discarded: 0 };
  const waits = [], compWaits = [];
  let history = [], pending = 0, cur = 0, turnStart = performance.now();
  const start = performance.now();
  const modelCall = async (upto) => {
    history = history.concat(msgs.slice(pending, upto));
    pending = upto;
    out.model_calls++;
    const t0 = performance.now();
    let tokens, limit;
    if (a.sync) {
      const r = await c.compactIfDue(conv, history, { callerOwned: true });
      const took = performance.now() - t0;
      waits.push(took);
      if (r) {
        history = r.history;
        if (r.failed) out.compactions_failed++;
        else if (r.messages_compressed > 0) {
          out.compactions++;
          compWaits.push(took);
        }
      }
      ({ tokens, limit } = await c.shouldCompact(history));
    } else {
      const r = await c.compactAhead(conv, history, { callerOwned: true });
      const took = performance.now() - t0;
      waits.push(took);
      history = r.history;
      out.started += r.started ? 1 : 0;
      out.discarded += r.discarded ? 1 : 0;
      if (r.compaction) {
        if (r.compaction.failed) out.compactions_failed++;
        else if (r.compaction.messages_compressed > 0) {
          out.compactions++;
          out[r.prepared ? 'applied' : 'at_limit']++;
          compWaits.push(took);
        }
      }
      ({ tokens, limit } = r);
    }
    if (tokens > limit) out.calls_over_limit++;
  };
  for (let i = 1; i < msgs.length; i++) {
    if (msgs[i].role !== 'assistant') continue;
    if (interval > 0 && turnOf[i] !== cur) {
      if (cur) await sleep(Math.max(0, turnStart + interval - performance.now()));
      cur = turnOf[i];
      turnStart = performance.now();
    }
    await modelCall(i);
  }
  await modelCall(msgs.length);
  out.wall_ms = performance.now() - start;
  await c.close(); // waits for a compaction still under way
  store.close();
  Object.assign(out, { waits_ms: waits, compaction_waits_ms: compWaits, conversation_id: conv, replayed: pending,
    final_ids: history.map((m) => m && m.id).filter((id) => typeof id === 'string') });
  return out;
}

async function count() {
  // LangChain.js as bindings/node has it (the package the adapter is tested with).
  const need = createRequire(a.src);
  let langchain;
  try {
    langchain = { ...need('langchain'), version: need('langchain/package.json').version };
  } catch (err) {
    throw new Error(`count: LangChain.js's countTokensApproximately needs the package langchain in bindings/node (npm ci there): ${err.message}`);
  }
  const { AIMessage, HumanMessage, countTokensApproximately } = langchain;
  const { messageDict } = await import(pathToFileURL(need.resolve('./langchain.js')).href);
  const texts = JSON.parse(readFileSync(a.session, 'utf8')).filter((m) => typeof m.content === 'string').map((m) => m.content);
  const runs = Number(a.runs);
  const c = await createCompactor({ wasmPath: a.wasm });
  // Both warmed first, so that V8 has compiled and optimized each before
  // any run is timed: 300 turns on a list of their own.
  const warm = Array.from({ length: 310 }, (_, i) => (i % 2 ? new AIMessage(texts[i % texts.length]) : new HumanMessage(texts[i % texts.length])));
  const warmDicts = warm.map((m, i) => messageDict(m, i));
  for (let k = 10; k < warm.length; k++) {
    await c.countContext('warm', warmDicts.slice(0, k));
    countTokensApproximately(warm.slice(0, k));
  }
  const rows = [];
  for (const n of a.sizes.split(',').map(Number)) {
    const msgs = Array.from({ length: n + runs }, (_, i) => (i % 2 ? new AIMessage(texts[i % texts.length]) : new HumanMessage(texts[i % texts.length])));
    const dicts = msgs.map((m, i) => messageDict(m, i));
    const key = `count-${n}`;
    await c.countContext(key, dicts.slice(0, n)); // the turns before: counted once
    // One new message a turn, each estimate timed in a loop of its own.
    const ours = await fastest(runs, (k) => dicts.slice(0, n + k + 1), (lst) => c.countContext(key, lst));
    const theirs = await fastest(runs, (k) => msgs.slice(0, n + k + 1), (lst) => countTokensApproximately(lst));
    rows.push({ messages: n, count_context_ms: ours.ms, count_tokens_approximately_ms: theirs.ms, runs, tokens: ours.last.tokens });
  }
  await c.close();
  return { rows, langchain: langchain.version };
}

/**
 * The fastest of `runs` calls of fn, the k-th on list(k) (made before the
 * clock starts), in ms, and what the last call returned.
 * @template L, R
 * @param {number} runs
 * @param {(k: number) => L} list
 * @param {(l: L) => R | Promise<R>} fn
 * @returns {Promise<{ms: number, last: Awaited<R>}>}
 */
async function fastest(runs, list, fn) {
  const lists = Array.from({ length: runs }, (_, k) => list(k));
  let ms = Infinity;
  let last;
  for (const l of lists) {
    const t0 = performance.now();
    last = await fn(l);
    ms = Math.min(ms, performance.now() - t0);
  }
  return { ms, last: /** @type {Awaited<R>} */ (last) };
}

process.stdout.write(JSON.stringify(mode === 'replay' ? await replay() : await count()) + '\n');
