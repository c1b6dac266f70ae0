// npm pack / npm publish: put into the package what it bundles but the
// repository keeps elsewhere (never committed twice): the shipped plug-in
// (embed/clipfold.wasm, the TinyGo build), the SQLite schema and queries
// shared with the Go and Python stores (hostfuncs/store/sqlite), the
// licence, and the TypeScript declarations generated from the JSDoc.
// scripts/postpack.mjs removes them again.
import { cpSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const pkg = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const repo = resolve(pkg, '..', '..');
const need = (/** @type {string} */ p) => {
  if (!existsSync(p)) throw new Error(`prepack: ${p} is missing (run npm pack from bindings/node of a clipfold checkout)`);
  return p;
};

cpSync(need(join(repo, 'embed', 'clipfold.wasm')), join(pkg, 'clipfold.wasm'));
rmSync(join(pkg, 'sql'), { recursive: true, force: true });
for (const d of ['migrations', 'queries']) {
  mkdirSync(join(pkg, 'sql', d), { recursive: true });
  cpSync(need(join(repo, 'hostfuncs', 'store', 'sqlite', d)), join(pkg, 'sql', d), { recursive: true, filter: (src) => !/\.go$/.test(src) });
}
cpSync(need(join(repo, 'LICENSE')), join(pkg, 'LICENSE'));
rmSync(join(pkg, 'types'), { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', join(pkg, 'tsconfig.types.json')], { stdio: 'inherit', cwd: pkg });
