// Removes what scripts/prepack.mjs copied into the package directory.
import { rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkg = resolve(dirname(fileURLToPath(import.meta.url)), '..');
for (const p of ['clipfold.wasm', 'sql', 'LICENSE', 'types']) rmSync(join(pkg, p), { recursive: true, force: true });
