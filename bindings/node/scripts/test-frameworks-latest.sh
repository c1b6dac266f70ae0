#!/usr/bin/env bash
# The framework adapters' tests against each framework's newest release:
# a copy of the package (no lock file) in a temporary directory, the
# frameworks installed there fresh — `npm install <package>@<version>`, the
# newest release within the range package.json's peerDependencies declares
# (the newest a user of this version of clipfold can have; a package that
# is no peer, @mastra/memory, as @latest) — then
# the adapters' suites (LangChain.js, the AI SDK, Mastra, the OpenAI Agents
# SDK) and the README's examples run against them, and a TypeScript
# consumer of every adapter compiles with them. The pinned versions are
# tested by `npm test`; this sees a framework release that breaks an
# adapter the day it lands. The versions tested are printed at the end as
# the README's table rows ("Framework versions"), after a summary line
# naming the AI SDK tested: `ai` and the providers that drove it.
#
# A newer major release outside that range is named in the table (the
# adapter has to be ported to it first). A release whose package.json
# declares a Node.js version this machine does not have (engines) is
# installed and tested all the same, and said so: the adapters are tested
# on the Node.js the package supports.
#
# Environment: CLIPFOLD_WASM (default build/clipfold.wasm of this checkout).
set -euo pipefail

pkg="$(cd "$(dirname "$0")/.." && pwd)"
repo="$(cd "$pkg/../.." && pwd)"
wasm="${CLIPFOLD_WASM:-$repo/build/clipfold.wasm}"
[ -f "$wasm" ] || { echo "test-frameworks-latest: $wasm not found: run \`make build\` first" >&2; exit 1; }

# The frameworks, as npm names them; zod and the tooling stay as pinned.
frameworks=(langchain @langchain/core @langchain/langgraph ai @mastra/core @mastra/memory @openai/agents)
# The providers' own packages, which first-turn.test.js drives to check the
# requests on the wire: test tools, not frameworks, installed as pinned —
# but the AI SDK's (@ai-sdk/*) go with the `ai` installed: when its major
# is not the pinned one, the newest release built on the same
# @ai-sdk/provider (the provider spec) as it is (ai 7: @ai-sdk/openai 4).
providers=(@ai-sdk/openai @ai-sdk/anthropic @langchain/openai @langchain/anthropic)
suites=(test/langchain.test.js test/ai-sdk.test.js test/mastra.test.js test/openai-agents.test.js test/first-turn.test.js
	test/window.test.js test/memoryread.test.js test/readme.test.js)

tmp="$(mktemp -d "${TMPDIR:-/tmp}/clipfold-frameworks-XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
cp -R "$pkg/package.json" "$pkg/index.cjs" "$pkg/README.md" "$pkg/src" "$pkg/test" "$tmp/"

cd "$tmp"
# The exact versions, resolved here: npm itself would pass over a release
# whose engines this Node.js does not meet (it installed ai 6, not 7, on
# Node.js 20). A command substitution: a version that cannot be chosen
# stops the script.
specText="$(node -e '
  const { execFileSync } = require("node:child_process");
  const { devDependencies: dev = {}, peerDependencies: peers = {} } = require("./package.json");
  const view = (spec, ...fields) => JSON.parse(execFileSync("npm", ["view", spec, ...fields, "--json"], { encoding: "utf8" }));
  const parts = (v) => v.split(".").map(Number);
  const major = (v) => parts(v)[0];
  const newest = (name, range) => [view(`${name}@${range}`, "version")].flat()
    .sort((x, y) => parts(x).map((n, i) => n - parts(y)[i]).find((d) => d !== 0) ?? 0).at(-1);
  const args = process.argv.slice(1);
  const frameworks = args.slice(0, args.indexOf("--"));
  const providers = args.slice(args.indexOf("--") + 1);
  const chosen = {};
  for (const name of frameworks) chosen[name] = newest(name, peers[name] ?? "latest");
  // The provider spec the ai chosen is built on.
  const spec = major(view(`ai@${chosen.ai}`, "dependencies")["@ai-sdk/provider"]);
  for (const name of providers) {
    if (!name.startsWith("@ai-sdk/") || major(chosen.ai) === major(dev.ai)) {
      chosen[name] = dev[name];
      continue;
    }
    const latest = view(`${name}@latest`, "version", "dependencies");
    if (major(latest.dependencies["@ai-sdk/provider"]) !== spec) {
      console.error(`test-frameworks-latest: no ${name} release on @ai-sdk/provider ${spec} for ai ${chosen.ai} (the newest, ${latest.version}, is on ${latest.dependencies["@ai-sdk/provider"]})`);
      process.exit(1);
    }
    chosen[name] = latest.version;
  }
  for (const [name, version] of Object.entries(chosen)) console.log(`${name}@${version}`);' "${frameworks[@]}" -- "${providers[@]}")"
mapfile -t specs <<<"$specText"
echo "test-frameworks-latest: npm install ${specs[*]} (node $(node --version))"
npm install --no-package-lock --no-audit --no-fund --loglevel=error "${specs[@]}"

# What was installed, and the Node.js each release declares it needs.
rows="$(node --input-type=module -e '
  import { readFileSync } from "node:fs";
  import { execFileSync } from "node:child_process";
  const pinned = JSON.parse(readFileSync("'"$pkg"'/package.json", "utf8")).devDependencies;
  for (const name of process.argv.slice(1)) {
    const p = JSON.parse(readFileSync(`node_modules/${name}/package.json`, "utf8"));
    const deps = Object.keys({ ...p.dependencies });
    // A release needs what its own dependencies need too (@openai/agents: openai).
    const engines = [p.engines?.node, ...deps.map((d) => {
      try { return JSON.parse(readFileSync(`node_modules/${d}/package.json`, "utf8")).engines?.node; } catch { return undefined; }
    })].filter(Boolean);
    const node = [...new Set(engines)].join(", ") || "any";
    const latest = execFileSync("npm", ["view", name, "version"], { encoding: "utf8" }).trim();
    console.log(`| ${name} | ${pinned[name]} | ${p.version} | ${latest === p.version ? "the same" : latest + " (outside the peer range)"} | ${node} |`);
  }' "${frameworks[@]}")"

# The AI SDK as tested: ai and the providers that drove it (one provider spec).
aisdk="$(node -e '
  const v = (name) => require(`./node_modules/${name}/package.json`).version;
  const names = ["@ai-sdk/openai", "@ai-sdk/anthropic"];
  const specs = new Set(["ai", ...names].map((name) => require(`./node_modules/${name}/package.json`).dependencies["@ai-sdk/provider"].split(".")[0]));
  if (specs.size !== 1) { console.error(`test-frameworks-latest: ai and its providers are on different @ai-sdk/provider majors: ${[...specs]}`); process.exit(1); }
  console.log(`ai ${v("ai")} (${names.map((n) => `${n} ${v(n)}`).join(", ")}; @ai-sdk/provider ${[...specs][0]})`);')"

CLIPFOLD_WASM="$wasm" CLIPFOLD_SQL_DIR="$repo/hostfuncs/store/sqlite" node --test "${suites[@]}"

# The adapters' types as a TypeScript user gets them with these releases:
# the package packed (prepack makes its types/) and unpacked into an app
# whose other packages are the ones installed above (the frameworks'
# types then come from there, as from a user's node_modules), and a
# consumer of every adapter compiled --strict (the frameworks' own
# declarations skipped: skipLibCheck). package.test.js checks the same
# with the pinned releases.
app="$tmp/typed-app"
mkdir -p "$app/node_modules/clipfold"
(cd "$pkg" && npm pack --silent --pack-destination "$tmp" >/dev/null)
tar -xzf "$tmp"/clipfold-*.tgz -C "$app/node_modules/clipfold" --strip-components=1
for d in "$tmp"/node_modules/*; do ln -s "$d" "$app/node_modules/$(basename "$d")"; done
echo '{"private": true, "type": "module"}' >"$app/package.json"
mock="$(node -p 'require("./node_modules/ai/package.json").version.split(".")[0] === "6" ? "MockLanguageModelV3" : "MockLanguageModelV4"')"
cat >"$app/adapters.mts" <<EOF
import { createCompactor } from 'clipfold';
import type { CompactionResult } from 'clipfold';
import { clipfoldMiddleware, memoryReadTool as lcMemoryRead, chatModelLLM } from 'clipfold/langchain';
import { prepareStep, memoryReadTool } from 'clipfold/ai-sdk';
import { clipfoldProcessor, memoryReadTool as mastraMemoryRead } from 'clipfold/mastra';
import { ClipfoldSession, memoryReadTool as agentsMemoryRead } from 'clipfold/openai-agents';
import { createAgent, fakeModel } from 'langchain';
import { generateText, streamText, stepCountIs, type ModelMessage } from 'ai';
import { $mock } from 'ai/test';
import { Agent as MastraAgent } from '@mastra/core/agent';
import { Agent, run } from '@openai/agents';
const c = await createCompactor({ llm: chatModelLLM(fakeModel()) });
const agent = createAgent({ model: fakeModel(), tools: [lcMemoryRead({ compactor: c })],
  middleware: [clipfoldMiddleware({ compactor: c, trigger: { tokens: 4000 }, keep: { messages: 20 }, onCompact: (r: CompactionResult) => void r })] });
const messages: ModelMessage[] = [{ role: 'user', content: 'hi' }];
const tools = { memory_read: memoryReadTool({ compactor: c, conversationId: 'x' }) };
await generateText({ model: new $mock(), messages, stopWhen: stepCountIs(3), tools,
  prepareStep: prepareStep({ compactor: c, conversationId: 'x', system: 's', tools }) });
streamText({ model: new $mock(), messages, prepareStep: prepareStep({ compactor: c, conversationId: 'y', ahead: true }) });
declare const mastraModel: ConstructorParameters<typeof MastraAgent>[0]['model']; // the model is Mastra's business
const mastra = new MastraAgent({ id: 'a', name: 'a', instructions: 'i', model: mastraModel,
  tools: { memory_read: mastraMemoryRead({ compactor: c }) }, inputProcessors: [clipfoldProcessor({ compactor: c, ahead: true })] });
const session = new ClipfoldSession({ compactor: c, sessionId: 's' });
const helper = new Agent({ name: 'a', instructions: 'i', tools: [agentsMemoryRead({ compactor: c, session })] });
const running = () => run(helper, 'hi', { session, callModelInputFilter: session.callModelInputFilter });
void agent; void mastra; void running;
EOF
(cd "$app" && node node_modules/typescript/bin/tsc --strict --noEmit --skipLibCheck --module nodenext --moduleResolution nodenext \
	--target es2022 --types node adapters.mts) || { echo "test-frameworks-latest: the adapters' types do not compile with these releases" >&2; exit 1; }
echo "test-frameworks-latest: the adapters' types compile with these releases (TypeScript $(node -p 'require("./node_modules/typescript/package.json").version'), --strict)"

echo
echo "test-frameworks-latest: passed on node $(node --version) with $aisdk; the versions tested:"
echo "| package | pinned | newest tested | newest on npm | its engines (node) |"
echo "| --- | --- | --- | --- | --- |"
echo "$rows"
