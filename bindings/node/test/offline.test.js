// Offline, every host summarizes alike: for the messages and config of
// testdata/offline, the Node package writes the batches the Go library
// and the Python package write (the file holds them, written by the Go
// test), every line dated from its message, no LLM call.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createCompactor } from '../src/index.js';
import { repoRoot, wasmPath } from './helpers/common.js';

test('offline batches are the same in every host, their lines dated', async () => {
  const c = JSON.parse(readFileSync(join(repoRoot, 'testdata', 'offline', 'debugging-session-60.json'), 'utf8'));
  const messages = JSON.parse(readFileSync(join(repoRoot, 'testdata', c.conversation), 'utf8')).slice(0, c.messages);
  const compactor = await createCompactor({ wasmPath: wasmPath() });
  try {
    const r = await compactor.compress(messages[0].conversation_id, messages, { config: c.config });
    assert.equal(r.failed, false, `${r.failure_code}: ${r.failure_message}`);
    assert.equal(r.llm_calls, 0);
    assert.deepEqual(r.batches.map((/** @type {any} */ b) => b.method), c.batches.map(() => 'extractive'));
    assert.deepEqual(r.batches.map((/** @type {any} */ b) => b.content), c.batches);
    for (const b of r.batches) {
      for (const line of b.content.split('\n')) assert.match(line, /^\[\d{4}-\d{2}-\d{2}\] (User|Assistant|System|Tool call|Tool)[ :]/);
    }
  } finally {
    await compactor.close();
  }
});
