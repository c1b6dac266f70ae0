// Runs a WASI build of wasmprof under Node's WASI, the file system root
// preopened: node [--perf-basic-prof] run.mjs WASM EXPORT INPUT-FILE [CALLS]
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { WASI } from 'node:wasi';

const [wasmPath, ...args] = process.argv.slice(2);
const file = (a, i) => (i === 1 ? resolve(a) : a); // the input file, absolute
const wasi = new WASI({ version: 'preview1', args: ['wasmprof', ...args.map(file)], preopens: { '/': '/' } });
const mod = await WebAssembly.compile(await readFile(wasmPath));
wasi.start(await WebAssembly.instantiate(mod, wasi.getImportObject()));
