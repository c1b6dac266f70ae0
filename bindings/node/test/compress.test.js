// compress end to end through the Node host: the plug-in on a worker
// thread, the offline LLM (the plug-in's own extractive summarizer when the
// build exports it) and the in-memory store.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { createCompactor, MemoryStore, offlineLLM, openaiCompatible } from '../src/index.js';
import { archiveRole, bundledConversations, conversationsDir, requireExports, wasmPath } from './helpers/common.js';
import { makeConversation, readConversation, readFacts } from './helpers/conversation.js';
import { compressRaw } from './helpers/harness.js';
import { rawArrayItems } from './helpers/rawjson.js';

const CONFIG = { keep_recent: 6, chunk_size: 15, backoff_base_ms: 1 };

/** @param {any} m */
const isClip = (m) => (m?.role === 'system' || m?.role === 'user') && typeof m.content === 'string' && m.content.startsWith('[Context Summary');

/**
 * The success guarantees of one compaction, checked on exact bytes.
 * @param {{input: string, out: string, result: any}} run
 * @param {MemoryStore} store
 * @param {string} conv
 */
function assertCompacted({ input, out, result }, store, conv) {
  assert.equal(result.failed, false, `failed: ${result.failure_code} ${result.failure_message}`);
  assert.ok(result.messages_compressed > 0);
  const inItems = rawArrayItems(input, 'history');
  const outItems = rawArrayItems(out, 'history');
  const inHistory = JSON.parse(input).history;
  assert.ok(outItems.length < inItems.length, `history did not shrink: ${inItems.length} → ${outItems.length}`);
  assert.ok(result.tokens_estimate_after < result.tokens_estimate_before);
  // The clip-archive comes first, exactly one.
  assert.ok(isClip(result.history[0]), 'history[0] is not the clip-archive');
  // A system message, or a user turn when the kept messages start with another.
  assert.equal(result.history[0].role, archiveRole(result.history.slice(1)), 'the clip-archive\'s role');
  assert.equal(result.history.filter(isClip).length, 1, 'more than one clip-archive');
  // Every kept message is byte-identical to its input, in input order.
  const byId = new Map(inHistory.map((/** @type {any} */ m, /** @type {number} */ i) => [m.id, i]));
  let last = -1;
  for (let j = 1; j < outItems.length; j++) {
    const id = result.history[j].id;
    const i = byId.get(id);
    assert.ok(i !== undefined, `history[${j}] (${id}) is not from the input`);
    assert.equal(outItems[j], inItems[/** @type {number} */ (i)], `kept message ${id} differs byte-for-byte`);
    assert.ok(/** @type {number} */ (i) > last, 'kept messages out of order');
    last = /** @type {number} */ (i);
  }
  // The store applied the commit: active history = result history.
  assert.deepEqual(store.history(conv), result.history);
  // Removed messages are recalled, never destroyed, and covered by a batch.
  const kept = new Set(result.history.map((/** @type {any} */ m) => m.id));
  const covered = new Set();
  for (const b of store.list({ tier: 'archival', label_prefix: `compaction-batch-${conv}-` }).blocks) {
    const meta = JSON.parse(b.content.slice(0, b.content.indexOf('\n')));
    assert.equal(meta.conversation_id, conv);
    for (const id of meta.source_message_ids) covered.add(id);
  }
  for (const m of inHistory) {
    if (kept.has(m.id)) continue;
    assert.deepEqual(store.recall(m.id)?.message, m, `removed message ${m.id} is not in recall`);
    if (!isClip(m)) assert.ok(covered.has(m.id), `removed message ${m.id} is in no archived batch`);
  }
}

describe('compress end to end', () => {
  /** @type {Awaited<ReturnType<typeof createCompactor>>} */
  let c;
  const store = new MemoryStore();
  /** @type {any[]} */
  const hostCalls = [];
  before(async () => {
    requireExports('compress');
    c = await createCompactor({ wasmPath: wasmPath(), store, onHostCall: (e) => hostCalls.push(e) });
  });
  after(async () => { await c?.close(); });

  // The bundled conversations are committed (testdata/conversations), each
  // with its facts: none found is a failure, not a quieter test.
  const files = bundledConversations();
  test('the bundled conversations are there, each with facts', () => {
    assert.ok(files.length >= 3, `only ${files.length} bundled conversations in ${conversationsDir}`);
    for (const f of files) assert.ok(readFacts(f).length > 0, `${f} has no facts file (or an empty one)`);
  });
  const cases = [
    ...files.map((f) => ({ label: f.split('/').pop(), load: () => readConversation(f), facts: () => readFacts(f) })),
    { label: 'constructed 80-message conversation', load: () => ({ conversationId: 'e2e', history: makeConversation('e2e', 80) }), facts: () => [] },
  ];

  for (const { label, load, facts } of cases) {
    test(`compacts ${label}, then compacts again replacing the clip-archive`, async () => {
      const { conversationId: conv, history } = load();
      store.append(conv, history);
      const first = await compressRaw(c, conv, store.history(conv), { config: CONFIG });
      assertCompacted(first, store, conv);
      // Planted facts stay findable: in the active history, an archived
      // batch, or a recalled message (memory search).
      for (const f of facts()) {
        const hits = (await store.search(f.query, { conversationId: conv, limit: 1000 })).map((h) => h.text).join('\n')
          + '\n' + store.history(conv).map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content))).join('\n');
        for (const s of f.must_contain) assert.ok(hits.includes(s), `fact ${JSON.stringify(f.fact)}: ${JSON.stringify(s)} is not findable`);
      }

      // More conversation, then a second compaction: the old clip-archive
      // is removed in the same commit, never duplicated.
      const more = makeConversation(`${conv}-more`, 30).map((m, i) => ({ ...m, id: `${conv}-more-${i}`, conversation_id: conv,
        created_at: new Date(Date.parse('2026-03-01T00:00:00.000Z') + i * 60_000).toISOString() }));
      store.append(conv, more);
      const oldClip = first.result.history[0];
      const second = await compressRaw(c, conv, store.history(conv), { config: CONFIG });
      assertCompacted(second, store, conv);
      assert.notEqual(second.result.history[0].id, oldClip.id);
      assert.deepEqual(store.recall(oldClip.id)?.message, oldClip);
      assert.match(second.result.history[0].content, /^\[Context Summary — \d+ messages compressed across \d+ compaction cycle/);
    });
  }

  test('offline by default: compress summarizes in the plug-in, dated, batches "extractive", no llm_complete', async () => {
    hostCalls.length = 0;
    const conv = 'offline-mode';
    store.append(conv, makeConversation(conv, 80));
    const r = await c.compress(conv, undefined, { config: CONFIG });
    assert.equal(r.failed, false, `${r.failure_code} ${r.failure_message}`);
    assert.equal(r.llm_calls, 0);
    assert.ok(r.batches.length > 0);
    for (const b of r.batches) {
      assert.equal(b.method, 'extractive');
      for (const line of b.content.split('\n')) assert.match(line, /^\[\d{4}-\d\d-\d\d\] (User|Assistant|Tool|Tool call): /);
    }
    assert.deepEqual(hostCalls.map((e) => e.name).filter((n) => n === 'llm_complete'), []);
    // A call's config can still choose the LLM path: the offline adapter
    // answers it through the plug-in's extractiveSummary export.
    const conv2 = 'offline-llm-path';
    store.append(conv2, makeConversation(conv2, 80));
    const r2 = await c.compress(conv2, undefined, { config: { ...CONFIG, summarizer: 'llm' } });
    assert.equal(r2.failed, false, `${r2.failure_code} ${r2.failure_message}`);
    assert.ok(r2.llm_calls > 0);
    assert.ok(r2.batches.every((/** @type {any} */ b) => b.method === 'llm'));
  });

  test('offlineLLM is the plug-in\'s extractiveSummary export, not a second implementation', async () => {
    const req = { system: 's', max_tokens: 100, messages: [
      { role: 'user', content: 'Hi there! How have you been?' },
      { role: 'user', content: 'The build fails with error E42 in main.go; we must fix it before Friday.' },
      { role: 'assistant', content: 'Decision: pin the compiler to 1.24.' },
      { role: 'user', content: 'Summarize the conversation above.' },
    ] };
    const viaLLM = await /** @type {any} */ (c.llm).complete(req);
    assert.deepEqual(viaLLM, await c.call('extractiveSummary', req));
    assert.match(viaLLM.content[0].text, /E42/);
    assert.doesNotMatch(viaLLM.content[0].text, /How have you been/);
    // Unbound, it fails safely instead of summarizing some other way.
    const unbound = offlineLLM();
    const out = await unbound.complete(/** @type {any} */ (req));
    assert.equal(/** @type {any} */ (out).error.code, 'unavailable');
  });

  test('an explicit llm keeps the default summarizer "llm"', async () => {
    /** @type {any[]} */
    const seen = [];
    const s2 = new MemoryStore();
    const c2 = await createCompactor({ wasmPath: wasmPath(), store: s2,
      llm: (/** @type {any} */ req) => { seen.push(req); return { content: [{ type: 'text', text: 'summary text' }] }; } });
    try {
      const conv = 'explicit-llm';
      s2.append(conv, makeConversation(conv, 80));
      const r = await c2.compress(conv, undefined, { config: CONFIG });
      assert.equal(r.failed, false, `${r.failure_code} ${r.failure_message}`);
      assert.equal(seen.length, r.llm_calls);
      assert.ok(r.batches.every((/** @type {any} */ b) => b.method === 'llm'));
    } finally {
      await c2.close();
    }
  });

  test('compactIfDue: null when not due; when due, compacts to the target keeping the newest verbatim', async () => {
    const conv = 'due';
    const history = makeConversation(conv, 160);
    store.append(conv, history);
    const { tokens } = await c.shouldCompact(history);
    assert.equal(await c.compactIfDue(conv, undefined, { config: { model_max_tokens: tokens * 2 } }), null);
    // Due: the limit is about 60% of the history.
    const config = { ...CONFIG, model_max_tokens: Math.floor(tokens * 0.75) };
    const { limit } = await c.shouldCompact(history, config);
    const r = await c.compactIfDue(conv, undefined, { config });
    assert.ok(r, 'due');
    assert.equal(r.failed, false, `${r.failure_code} ${r.failure_message}`);
    const target = Math.floor(limit * 0.8); // the default share
    assert.ok(r.tokens_estimate_after <= target, `${r.tokens_estimate_after} > target ${target}`);
    assert.ok(r.tokens_estimate_after > target / 2, `${r.tokens_estimate_after}: not near the target ${target}`);
    // The newest messages, contiguous, well beyond keep_recent.
    const keptIds = r.history.slice(1).map((/** @type {any} */ m) => m.id).filter((/** @type {string} */ id) => id !== `${conv}-m0`);
    const tail = history.slice(history.length - keptIds.length).map((m) => m.id);
    assert.deepEqual(keptIds, tail);
    assert.ok(keptIds.length > CONFIG.keep_recent);
    assert.ok(r.batches.every((/** @type {any} */ b) => b.method === 'extractive'));
    // targetShare 0: to keep_recent, as compress does.
    const conv2 = 'due-keep-recent';
    const h2 = makeConversation(conv2, 160);
    store.append(conv2, h2);
    const r2 = await c.compactIfDue(conv2, undefined, { config, targetShare: 0 });
    assert.equal(r2?.failed, false);
    // clip-archive, the pinned system message, keep_recent (moved back by at most one tool unit)
    assert.ok(/** @type {any} */ (r2).history.length <= CONFIG.keep_recent + 3, `${r2?.history.length}`);
    assert.ok(/** @type {any} */ (r2).history.length < r.history.length);
    await assert.rejects(c.compactIfDue(conv2, undefined, { targetShare: 2 }), (/** @type {any} */ e) => e.field === 'targetShare' && /must be a number in \[0, 1\]/.test(e.message));
  });

  test('dry_run returns the commit it would send and changes nothing', async () => {
    const conv = 'dry';
    store.append(conv, makeConversation(conv, 80));
    const before = store.snapshot();
    const { result } = await compressRaw(c, conv, store.history(conv), { config: CONFIG, dry_run: true });
    assert.equal(result.failed, false, `${result.failure_code} ${result.failure_message}`);
    assert.deepEqual(store.snapshot(), before);
    assert.equal(result.commit.conversation_id, conv);
    assert.ok(result.commit.remove_message_ids.length > 0);
    assert.deepEqual(result.commit.insert_message, result.history[0]);
    // Committing it by hand is what the real run would have done.
    assert.deepEqual(store.commit(result.commit), { ok: true });
    assert.deepEqual(store.history(conv), result.history);
  });

  test('nothing to compress is not a failure and calls no host function', async () => {
    hostCalls.length = 0;
    const h = makeConversation('short', 12).slice(0, 4);
    const r = await c.compress('short', h, { config: CONFIG });
    assert.equal(r.failed, false);
    assert.equal(r.messages_compressed, 0);
    assert.deepEqual(hostCalls, []);
  });

  test('compress defaults to the store history; calls on one compactor are serialized', async () => {
    store.append('par-a', makeConversation('par-a', 80));
    store.append('par-b', makeConversation('par-b', 80));
    const [a, b, s] = await Promise.all([
      c.compress('par-a', undefined, { config: CONFIG }),
      c.compress('par-b', undefined, { config: CONFIG }),
      c.score(makeConversation('x', 20)),
    ]);
    assert.equal(a.failed, false, `${a.failure_code} ${a.failure_message}`);
    assert.equal(b.failed, false, `${b.failure_code} ${b.failure_message}`);
    assert.equal(s.scores.length, 20);
    assert.deepEqual(store.history('par-a'), a.history);
    assert.deepEqual(store.history('par-b'), b.history);
  });

  test('invalid input throws a ClipfoldError naming the field', async () => {
    await assert.rejects(c.compress('bad', [{ id: 'x', role: 'robot', content: 'hi', created_at: '2026-02-28T10:00:00.000Z' }]),
      (/** @type {any} */ e) => e.name === 'ClipfoldError' && e.code === 'invalid_input' && /^history\[0\]\.role/.test(e.field ?? ''));
  });
});

describe('compress through the OpenAI-compatible adapter', () => {
  /** @type {any[]} */
  const requests = [];
  const server = createServer((req, res) => {
    let data = '';
    req.on('data', (d) => { data += d; });
    req.on('end', () => {
      const body = JSON.parse(data);
      requests.push({ url: req.url, auth: req.headers.authorization, body });
      const text = `Summary of ${body.messages.length} messages: billing migration to Postgres, hash column decision.`;
      const out = JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: body.model,
        choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 } });
      // Answer asynchronously, as a real server does.
      setTimeout(() => { res.writeHead(200, { 'content-type': 'application/json' }); res.end(out); }, 5);
    });
  });
  /** @type {Awaited<ReturnType<typeof createCompactor>>} */
  let c;
  const store = new MemoryStore();
  before(async () => {
    requireExports('compress');
    await new Promise((r) => server.listen(0, '127.0.0.1', () => r(null)));
    const port = /** @type {import('node:net').AddressInfo} */ (server.address()).port;
    c = await createCompactor({ wasmPath: wasmPath(), store,
      llm: openaiCompatible({ baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: 'sk-local', model: 'test-model' }) });
  });
  after(async () => { await c?.close(); server.closeAllConnections(); server.close(); });

  test('summaries come from HTTP (async host functions on the worker)', async () => {
    const conv = 'http';
    store.append(conv, makeConversation(conv, 50));
    const run = await compressRaw(c, conv, store.history(conv), { config: { ...CONFIG, model: 'gpt-x' } });
    assertCompacted(run, store, conv);
    assert.equal(requests.length, run.result.llm_calls);
    for (const r of requests) {
      assert.equal(r.url, '/v1/chat/completions');
      assert.equal(r.auth, 'Bearer sk-local');
      assert.equal(r.body.model, 'gpt-x');
      assert.equal(r.body.messages[0].role, 'system');
      assert.equal(r.body.temperature, 0);
    }
    assert.ok(run.result.batches.every((/** @type {any} */ b) => b.method === 'llm'));
    assert.match(run.result.history[0].content, /Summary of \d+ messages/);
  });
});
