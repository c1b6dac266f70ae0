// The README's "Counting what the model counts", "Compaction ahead of
// time", "Use with LangChain.js",
// "Use with the AI SDK", "Use with Mastra" and "Use with the OpenAI Agents
// SDK" examples, extracted and run as they are — `model` defined first as
// the framework's own fake model (no network) — importing `clipfold` and its
// adapters by name (the package's self-reference).
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { wasmPath } from './helpers/common.js';

const pkgDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const readme = readFileSync(join(pkgDir, 'README.md'), 'utf8');
const dir = mkdtempSync(join(pkgDir, '.readme-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/**
 * The first ```js block of the README section under `heading`.
 * @param {string} heading
 */
function example(heading) {
  const start = readme.indexOf(`\n## ${heading}\n`);
  assert.ok(start >= 0, `README has no section "${heading}"`);
  const end = readme.indexOf('\n## ', start + 1);
  const m = /```js\n([\s\S]*?)```/.exec(readme.slice(start, end < 0 ? undefined : end));
  assert.ok(m, `README section "${heading}" has no js example`);
  return m[1];
}

/** @param {string} name @param {string} prelude @param {string} code */
function run(name, prelude, code) {
  const lines = code.trim().split('\n').length;
  assert.ok(lines <= 16, `the example is ${lines} lines`);
  const file = join(dir, name);
  writeFileSync(file, `${prelude}\n${code}`);
  const r = spawnSync(process.execPath, [file], { cwd: dir, encoding: 'utf8', env: { ...process.env, CLIPFOLD_WASM: wasmPath() }, timeout: 120_000 });
  assert.equal(r.status, 0, `${name} failed:\n${r.stderr}`);
  assert.equal(r.stderr, '', `${name} printed on stderr`);
  return r.stdout;
}

describe('README examples', () => {
  test('Counting what the model counts', () => {
    const out = run('usage.mjs', '', example('Counting what the model counts'));
    assert.equal(out.trim(), 'true true');
  });

  test('Compaction ahead of time', () => {
    const out = run('ahead.mjs', '', example('Compaction ahead of time'));
    assert.equal(out.trim(), 'true true');
  });

  test('Use with LangChain.js', () => {
    const out = run('langchain.mjs', `import { AIMessage, fakeModel } from 'langchain';
const model = fakeModel().respond(new AIMessage('We were upgrading Postgres.'));`, example('Use with LangChain.js'));
    assert.equal(out.trim(), 'We were upgrading Postgres.');
  });

  test('Use with the AI SDK', () => {
    const out = run('ai-sdk.mjs', `import { MockLanguageModel } from '../test/helpers/aisdk.js';
const model = new MockLanguageModel({ doGenerate: { content: [{ type: 'text', text: 'We were upgrading Postgres.' }],
  finishReason: { unified: 'stop', raw: 'stop' }, warnings: [],
  usage: { inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 1, text: 1, reasoning: undefined } } } });`,
    example('Use with the AI SDK'));
    assert.equal(out.trim(), 'We were upgrading Postgres.');
  });

  test('Use with Mastra', () => {
    const out = run('mastra.mjs', `import { MastraLanguageModelV2Mock } from '@mastra/core/test-utils/llm-mock';
const model = new MastraLanguageModelV2Mock({ doGenerate: { content: [{ type: 'text', text: 'We were upgrading Postgres.' }],
  finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 }, warnings: [] } });`, example('Use with Mastra'));
    assert.equal(out.trim(), 'We were upgrading Postgres.');
  });

  test('Use with the OpenAI Agents SDK', () => {
    // The fake Model of the Agents SDK; tracing off (it would ask for an OpenAI key on stderr).
    const out = run('openai-agents.mjs', `import { Usage, setTracingDisabled } from '@openai/agents';
setTracingDisabled(true);
const model = { async getResponse() { return { usage: new Usage({ requests: 1, inputTokens: 1, outputTokens: 1, totalTokens: 2 }),
  output: [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'We were upgrading Postgres.' }] }] }; },
  async *getStreamedResponse() {} };`, example('Use with the OpenAI Agents SDK'));
    assert.equal(out.trim(), 'We were upgrading Postgres.');
  });
});
