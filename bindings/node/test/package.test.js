// The published package: `npm pack` (its prepack bundles the plug-in, the
// shared .sql files and the generated .d.ts), installed from the tarball
// into a fresh directory outside the repository; from there ES module and
// CommonJS scripts compact a conversation with SQLiteStore on a file and
// search it with a plain question, with nothing on stderr; and TypeScript
// (--strict) compiles a good consumer and rejects a bad one.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { repoRoot } from './helpers/common.js';

const pkgDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));

/** @type {string} */
let tmp;
/** @type {string} */
let app;
/** @type {string} */
let tarball;
/** @type {string[]} */
let packed;

/** The environment of a user's process: no clipfold variables, no warning switches. */
function userEnv() {
  const env = { ...process.env };
  for (const k of ['CLIPFOLD_WASM', 'CLIPFOLD_SQL_DIR', 'NODE_NO_WARNINGS', 'NODE_OPTIONS']) delete env[k];
  return env;
}

before(() => {
  tmp = mkdtempSync(join(tmpdir(), 'clipfold-pack-'));
  const out = execFileSync(npm, ['pack', '--json', '--pack-destination', tmp], { cwd: pkgDir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const [info] = JSON.parse(out.slice(out.indexOf('[')));
  tarball = join(tmp, info.filename);
  packed = info.files.map((/** @type {{path: string}} */ f) => f.path).sort();
  app = join(tmp, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }));
  const dev = pkg.devDependencies;
  execFileSync(npm, ['install', '--no-audit', '--no-fund', tarball, `typescript@${dev.typescript}`, `@types/node@${dev['@types/node']}`],
    { cwd: app, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: userEnv() });
});
after(() => { if (tmp) rmSync(tmp, { recursive: true, force: true }); });

describe('npm package', () => {
  test('the tarball holds the plug-in, the .sql files, the types and the code, and no tests', () => {
    for (const f of ['package.json', 'README.md', 'LICENSE', 'clipfold.wasm', 'index.cjs', 'src/index.js', 'src/sqlite.js',
      'types/index.d.ts', 'src/langchain.js', 'src/ai-sdk.js', 'types/langchain.d.ts', 'types/ai-sdk.d.ts', 'sql/migrations/0001.sql', 'sql/migrations/0002.sql', 'sql/queries/search.sql', 'sql/queries/move_to_recall.sql']) {
      assert.ok(packed.includes(f), `${f} is not in the tarball: ${packed}`);
    }
    for (const f of packed) {
      assert.doesNotMatch(f, /^(test|scripts|node_modules)\/|^\.|bench|fixture|\.tgz$|tsconfig/, `${f} should not be published`);
    }
    // The bundled plug-in is the committed TinyGo build, byte for byte; the .sql files are the Go store's.
    const installed = join(app, 'node_modules', 'clipfold');
    assert.deepEqual(readFileSync(join(installed, 'clipfold.wasm')), readFileSync(join(repoRoot, 'embed', 'clipfold.wasm')));
    assert.equal(readFileSync(join(installed, 'sql', 'queries', 'search.sql'), 'utf8'),
      readFileSync(join(repoRoot, 'hostfuncs', 'store', 'sqlite', 'queries', 'search.sql'), 'utf8'));
    // The copies are gone from the checkout again (postpack).
    for (const f of ['clipfold.wasm', 'sql', 'LICENSE', 'types']) assert.throws(() => statSync(join(pkgDir, f)), `${f} left in bindings/node`);
    console.log(`tarball ${info(tarball)}`);
  });

  const conversation = `
    const history = [];
    for (let i = 0; i < 40; i++) {
      history.push({ id: 'm' + i, role: i % 2 ? 'assistant' : 'user', created_at: new Date(Date.UTC(2026, 2, 1, 9, i)).toISOString(),
        content: i === 6 ? 'We agreed to move the quarterly platypus audit to Friday the 13th.' : 'Turn ' + i + ': routine notes about the rollout, nothing decided yet.' });
    }`;
  const body = `
    const store = new SQLiteStore(DB);
    const c = await createCompactor({ store });
    store.append('demo', history);
    const r = await c.compress('demo', undefined, { config: { keep_recent: 4 } });
    if (r.failed) throw new Error(r.failure_code + ': ' + r.failure_message);
    const [hit] = await c.search('When is the platypus audit?', { conversationId: 'demo' });
    const full = store.read(hit.id);
    console.log(JSON.stringify({ compressed: r.messages_compressed, hit: { kind: hit.kind, id: hit.id, snippet: hit.snippet }, read: full && full.kind }));
    await c.close();
    store.close();`;

  /** @param {string} file @param {string} source */
  function runScript(file, source) {
    writeFileSync(join(app, file), source);
    const r = spawnSync(process.execPath, [file], { cwd: app, encoding: 'utf8', env: userEnv() });
    assert.equal(r.status, 0, `${file}:\n${r.stderr}`);
    assert.equal(r.stderr, '', `${file} printed on stderr`);
    const out = JSON.parse(r.stdout.trim().split('\n').pop() ?? '');
    assert.ok(out.compressed > 30, JSON.stringify(out));
    assert.ok(out.hit.id === 'm6' || out.hit.kind === 'batch', `the plain question finds the platypus turn or its batch: ${JSON.stringify(out)}`);
    assert.match(out.hit.snippet, /\[platypus\]/);
    assert.equal(out.read, out.hit.kind);
    return out;
  }

  test('ES module: import from "clipfold", compact into SQLite on a file, search by a plain question', () => {
    runScript('esm.mjs', `import { createCompactor, SQLiteStore } from 'clipfold';
      const DB = 'esm.db';${conversation}${body}`);
  });

  test('no framework is needed for "clipfold"; an adapter without its framework says which package is missing', () => {
    // The app has no langchain, ai or zod (yet): clipfold loaded above.
    for (const [sub, missing] of [['clipfold/ai-sdk', 'ai'], ['clipfold/langchain', 'langchain']]) {
      const r = spawnSync(process.execPath, ['--input-type=module', '-e', `await import('${sub}')`], { cwd: app, encoding: 'utf8', env: userEnv() });
      assert.notEqual(r.status, 0, `${sub} loaded without ${missing}`);
      assert.match(r.stderr, new RegExp(`ERR_MODULE_NOT_FOUND|Cannot find package '${missing}'`), r.stderr);
    }
  });

  test('CommonJS: require("clipfold") does the same', () => {
    runScript('cjs.cjs', `const { createCompactor, SQLiteStore, MemoryStore } = require('clipfold');
      const DB = 'cjs.db';${conversation}
      (async () => {${body}
        if (!(new MemoryStore() instanceof SQLiteStore)) throw new Error('instanceof');
      })().catch((e) => { console.error(e); process.exit(1); });`);
  });

  test('TypeScript --strict: a good consumer compiles (ESM and CommonJS), a wrong one is rejected where it is wrong', () => {
    const tsc = join(app, 'node_modules', 'typescript', 'bin', 'tsc');
    writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', types: ['node'], skipLibCheck: false },
      files: ['good.mts', 'good.cts'],
    }));
    const good = `import { createCompactor, SQLiteStore, MemoryStore, ClipfoldError, openaiCompatible } from 'clipfold';
import type { Compactor, Message, SearchHit, CompactionResult, Config, ContextUsage, ReadRecord } from 'clipfold';
const store = new SQLiteStore('typed.db');
const c: Compactor<SQLiteStore> = await createCompactor({ store, config: { keep_recent: 4 } });
const msgs: Message[] = [{ id: 'm1', role: 'user', content: 'hi', created_at: '2026-01-01T00:00:00Z' }];
c.store.append('c1', msgs);
const r: CompactionResult = await c.compress('c1', undefined, { config: { chunk_size: 10 } satisfies Config });
const n: number = r.messages_compressed;
const hits: SearchHit[] = await c.search('what did we decide?', { conversationId: 'c1', limit: 5 });
const top = hits[0];
if (top && top.kind === 'batch') { const ids: string[] | null = top.source_message_ids; void ids; }
const rec: ReadRecord | null = store.read('m1');
if (rec?.kind === 'message') { const raw: string = rec.raw; void raw; } else if (rec?.kind === 'batch') { const l: string = rec.block.label; void l; }
const d = await createCompactor({ llm: openaiCompatible({ baseUrl: 'http://localhost:1', model: 'm' }) });
d.store.append('c2', msgs);
const m: MemoryStore = d.store;
try { await c.split([]); } catch (e) { if (e instanceof ClipfoldError) { const f: string | null = e.field; void f; } }
const overhead: number = await c.overheadTokens({ system: 'You are helpful.', tools: [{ name: 't' }] });
const usage: ContextUsage = { input_tokens: 1200, messages: 1 };
const due: boolean = (await c.shouldCompact(msgs, { overhead_tokens: overhead, token_estimator: 'chars4' }, usage)).due;
await c.compress('c1', msgs, { callerOwned: true, usage });
void n; void m; void due;
`;
    writeFileSync(join(app, 'good.mts'), good);
    writeFileSync(join(app, 'good.cts'), `import clipfold = require('clipfold');
const store = new clipfold.SQLiteStore(':memory:');
async function main(): Promise<clipfold.SearchHit[]> {
  const c = await clipfold.createCompactor({ store });
  return c.search('anything');
}
void main;
`);
    // The adapters' types, with the frameworks this package is tested with
    // (its own devDependencies, linked: installing them again costs ~20 s).
    for (const p of ['langchain', '@langchain/core', '@langchain/langgraph', 'ai', 'zod']) {
      mkdirSync(dirname(join(app, 'node_modules', p)), { recursive: true });
      symlinkSync(join(pkgDir, 'node_modules', p), join(app, 'node_modules', p), 'dir');
    }
    writeFileSync(join(app, 'adapters.mts'), `import { createCompactor } from 'clipfold';
import type { CompactionResult } from 'clipfold';
import { clipfoldMiddleware, memoryReadTool as lcMemoryRead, chatModelLLM } from 'clipfold/langchain';
import { prepareStep, memoryReadTool } from 'clipfold/ai-sdk';
import { createAgent, fakeModel } from 'langchain';
import { generateText, stepCountIs, type ModelMessage } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
const c = await createCompactor({ llm: chatModelLLM(fakeModel()) });
const agent = createAgent({ model: fakeModel(), tools: [lcMemoryRead({ compactor: c })],
  middleware: [clipfoldMiddleware({ compactor: c, trigger: { tokens: 4000 }, keep: { messages: 20 }, onCompact: (r: CompactionResult) => void r })] });
const messages: ModelMessage[] = [{ role: 'user', content: 'hi' }];
const step = prepareStep({ compactor: c, conversationId: 'x', system: 's', tools: { memory_read: memoryReadTool({ compactor: c, conversationId: 'x' }) } });
const ahead = [clipfoldMiddleware({ compactor: c, ahead: true }), prepareStep({ compactor: c, conversationId: 'y', ahead: true })];
await generateText({ model: new MockLanguageModelV3(), messages, stopWhen: stepCountIs(3), prepareStep: step,
  tools: { memory_read: memoryReadTool({ compactor: c, conversationId: 'x' }) } });
void agent; void ahead;
`);
    let r = spawnSync(process.execPath, [tsc, '-p', '.'], { cwd: app, encoding: 'utf8' });
    assert.equal(r.status, 0, `the good consumers do not compile:\n${r.stdout}${r.stderr}`);
    // The frameworks' own declarations are not ours to check (and checking
    // them takes minutes): the adapters' use is checked with skipLibCheck.
    r = spawnSync(process.execPath, [tsc, '--strict', '--noEmit', '--skipLibCheck', '--module', 'nodenext', '--moduleResolution', 'nodenext',
      '--target', 'es2022', '--types', 'node', 'adapters.mts'], { cwd: app, encoding: 'utf8' });
    assert.equal(r.status, 0, `the adapters' consumer does not compile:\n${r.stdout}${r.stderr}`);

    const bad = [
      "import { createCompactor, SQLiteStore } from 'clipfold';",
      "const store = new SQLiteStore('typed.db');",
      'const c = await createCompactor({ store });',
      'await c.compress(42);',                                                  // 4: conversation id must be a string
      "const hits = await c.search('q'); const s: string = hits[0]!.score;",   // 5: score is a number
      "await createCompactor({ config: { keep_recent: 'five' } });",            // 6: a config key of the wrong type
      "store.append('c', [{ id: 'x', role: 'robot', content: 'x' }]);",        // 7: not a role
      "await c.search('q', { conversation: 'c1' });",                          // 8: no such option
      "const kind: 'message' | 'batch' | 'other' = hits[0]!.kind; const k: 'message' = kind;", // 9
      "await c.shouldCompact([], undefined, { input_tokens: '5', messages: 1 });", // 10: usage counts are numbers
    ];
    writeFileSync(join(app, 'bad.mts'), `${bad.join('\n')}\n`);
    r = spawnSync(process.execPath, [tsc, '--strict', '--noEmit', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--types', 'node', 'bad.mts'],
      { cwd: app, encoding: 'utf8' });
    assert.notEqual(r.status, 0, 'the bad consumer compiled');
    const lines = new Set([...r.stdout.matchAll(/^bad\.mts\((\d+),\d+\): error TS\d+/gm)].map((m) => Number(m[1])));
    assert.deepEqual([...lines].sort((a, b) => a - b), [4, 5, 6, 7, 8, 9, 10], r.stdout);
  });
});

/** @param {string} f */
function info(f) {
  return `${(statSync(f).size / 1024).toFixed(1)} KiB (${f.split('/').pop()})`;
}
