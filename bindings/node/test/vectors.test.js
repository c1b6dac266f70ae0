// Every conformance vector of testdata/vectors through the Node host, with
// harness/vectors.go's semantics: the exact input bytes (a vector's
// `input` as it is written in the file, like Go's json.RawMessage, or
// `input_raw`), then `expected` compared as JSON with numbers within a
// relative 1e-9, `expected_raw` byte for byte, or `error` {code, field}.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createCompactor, ClipfoldError } from '../src/index.js';
import { jsonDiff, vectorsDir, wasmPath } from './helpers/common.js';
import { rawAt, tree } from './helpers/rawjson.js';

/** @returns {{file: string, exportName: string, name: string, input: string, v: any}[]} */
function loadVectors() {
  const files = readdirSync(vectorsDir).filter((f) => f.endsWith('.json')).sort();
  const out = [];
  for (const f of files) {
    const text = readFileSync(join(vectorsDir, f), 'utf8');
    const file = JSON.parse(text);
    const root = tree(text);
    assert.ok(Array.isArray(file.vectors), `${f}: no vectors array`);
    file.vectors.forEach((/** @type {any} */ v, /** @type {number} */ i) => {
      let input = '';
      if (typeof v.input_raw === 'string') input = v.input_raw;
      else input = rawAt(text, root, ['vectors', i, 'input']) ?? '';
      out.push({ file: f, exportName: file.export, name: v.name, input, v });
    });
  }
  assert.ok(out.length > 0, `no vectors in ${vectorsDir}`);
  return out;
}

const vectors = loadVectors();
const dec = new TextDecoder();

// Twice: as a host normally calls (the vectors' small inputs cross Extism
// memory), and with every input staged in the plug-in's memory.
for (const [label, stageMin] of [['conformance vectors', undefined], ['conformance vectors, every input staged', 1]]) describe(label, () => {
  /** @type {Awaited<ReturnType<typeof createCompactor>>} */
  let c;
  // The vectors hold for the plug-in's default config. Without an llm the
  // compactor runs offline, which sets summarizer "extractive" in the
  // plug-in's config (and chunk's max_chunk_tokens "auto" reads it): the
  // default is given back here.
  before(async () => { c = await createCompactor({ wasmPath: wasmPath(), stageMin, config: { summarizer: 'llm' } }); });
  after(async () => { await c?.close(); });

  for (const { file, exportName, name, input, v } of vectors) {
    test(`${file}: ${name}`, async () => {
      let out = null;
      let err = null;
      try {
        out = await c.callRaw(exportName, input);
      } catch (e) {
        err = e;
      }
      if (v.error != null) {
        assert.equal(err === null, false, `expected error ${v.error.code} at ${JSON.stringify(v.error.field)}, got output ${out && dec.decode(out).slice(0, 2000)}`);
        assert.ok(err instanceof ClipfoldError && err.pluginOriginated, `expected a plug-in error, got ${err}`);
        assert.equal(err.code, v.error.code, `expected error code ${v.error.code}, got ${JSON.stringify(err.message)}`);
        if (v.error.field) {
          assert.ok(err.detail.startsWith(`${v.error.field}: `), `expected the error to name field ${JSON.stringify(v.error.field)} first, got ${JSON.stringify(err.detail)}`);
        }
        return;
      }
      if (err) throw err;
      assert.ok(out);
      if (typeof v.expected_raw === 'string') {
        assert.ok(Buffer.from(out).equals(Buffer.from(v.expected_raw, 'utf8')),
          `output differs byte-for-byte\n got: ${dec.decode(out)}\nwant: ${v.expected_raw}`);
        return;
      }
      const got = JSON.parse(dec.decode(out));
      const where = jsonDiff(got, v.expected);
      assert.equal(where, null, `output differs at ${where}\n got: ${JSON.stringify(got).slice(0, 2000)}\nwant: ${JSON.stringify(v.expected).slice(0, 2000)}`);
    });
  }
  if (stageMin) {
    test('most vectors were staged', () => {
      const pure = vectors.filter((x) => x.exportName !== 'compress').length; // compress runs on a worker
      assert.ok(c.stagedCalls > pure / 2, `${c.stagedCalls} of ${pure} staged`);
    });
  }
});
