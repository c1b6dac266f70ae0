import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const here = dirname(fileURLToPath(import.meta.url));
export const repoRoot = resolve(here, '..', '..', '..', '..');
export const vectorsDir = join(repoRoot, 'testdata', 'vectors');
export const conversationsDir = process.env.CLIPFOLD_CONVERSATIONS || join(repoRoot, 'testdata', 'conversations');

/** The plug-in the tests load: $CLIPFOLD_WASM or the repository's build. */
export function wasmPath() {
  const p = process.env.CLIPFOLD_WASM || join(repoRoot, 'build', 'clipfold.wasm');
  if (!existsSync(p)) throw new Error(`${p} not found: run \`make build\` at the repository root first`);
  return p;
}

/**
 * Fails (throws) unless the plug-in under test exports every one of
 * `names` as a function. A build that lost an export must turn its suites
 * red, never skip them. Checked without instantiating.
 * @param {...string} names
 */
export function requireExports(...names) {
  const p = wasmPath();
  const m = new WebAssembly.Module(readFileSync(p));
  const have = new Set(WebAssembly.Module.exports(m).filter((e) => e.kind === 'function').map((e) => e.name));
  const missing = names.filter((n) => !have.has(n));
  if (missing.length > 0) {
    throw new Error(`${p} does not export ${missing.join(', ')}: the build lost an export (rebuild with \`make build\`; if it is still missing, the plug-in is broken)`);
  }
}

/**
 * Go's jsonEqual (harness/vectors.go): numbers within a relative 1e-9,
 * objects with the same keys, arrays of the same length. Returns the
 * path of the first difference, or null.
 * @param {unknown} a got
 * @param {unknown} b want
 * @param {string} path
 * @returns {string | null}
 */
export function jsonDiff(a, b, path = '$') {
  if (typeof b === 'number') {
    if (typeof a !== 'number') return path;
    if (a === b || Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b))) return null;
    return path;
  }
  if (Array.isArray(b)) {
    if (!Array.isArray(a) || a.length !== b.length) return path;
    for (let i = 0; i < b.length; i++) {
      const d = jsonDiff(a[i], b[i], `${path}[${i}]`);
      if (d) return d;
    }
    return null;
  }
  if (b !== null && typeof b === 'object') {
    if (a === null || typeof a !== 'object' || Array.isArray(a)) return path;
    const bk = Object.keys(b);
    if (Object.keys(a).length !== bk.length) return path;
    for (const k of bk) {
      if (!Object.hasOwn(a, k)) return `${path}.${k}`;
      const d = jsonDiff(/** @type {any} */ (a)[k], /** @type {any} */ (b)[k], `${path}.${k}`);
      if (d) return d;
    }
    return null;
  }
  return a === b ? null : path;
}

/** The conversations bundled under testdata/conversations (JSON files), if any. */
export function bundledConversations() {
  if (!existsSync(conversationsDir)) return [];
  return readdirSync(conversationsDir)
    .filter((f) => (f.endsWith('.json') || f.endsWith('.jsonl')) && !f.endsWith('.facts.json')).sort()
    .map((f) => join(conversationsDir, f));
}

/**
 * The role the plug-in gives a clip-archive in the native and Chat shapes
 * (docs/spec.md#message-shapes): "system" when the first message after it
 * that is not a system message is a user turn, or there is none; else
 * "user", so that a request built from the history starts with a user turn.
 * @param {ReadonlyArray<{role?: unknown}>} kept the messages after the clip-archive
 * @returns {'system' | 'user'}
 */
export function archiveRole(kept) {
  const next = kept.find((m) => m.role !== 'system' && m.role !== 'developer');
  return next === undefined || next.role === 'user' ? 'system' : 'user';
}
