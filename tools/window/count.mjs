// Prints the real token counts of the token-estimate corpus: for every
// testdata/tokens/<kind>/messages.jsonl line, its o200k_base and
// cl100k_base counts, as one JSON object {kind: [[o200k, cl100k], …]}.
// The counts come from js-tiktoken, which bundles both vocabularies:
// nothing here is stored, so the test compares against the tokenizers
// themselves. Usage: node count.mjs [testdata/tokens]
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { Tiktoken } from "js-tiktoken/lite";
import o200k from "js-tiktoken/ranks/o200k_base";
import cl100k from "js-tiktoken/ranks/cl100k_base";

const dir = process.argv[2] ?? new URL("../../testdata/tokens", import.meta.url).pathname;
const enc = [new Tiktoken(o200k), new Tiktoken(cl100k)];
const out = {};
for (const kind of readdirSync(dir).sort()) {
  const file = join(dir, kind, "messages.jsonl");
  try {
    statSync(file);
  } catch {
    continue;
  }
  out[kind] = readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => {
      const text = JSON.parse(l).text;
      // Special-token strings in real text are text: count them as such.
      return enc.map((e) => e.encode(text, [], []).length);
    });
}
process.stdout.write(JSON.stringify(out) + "\n");
