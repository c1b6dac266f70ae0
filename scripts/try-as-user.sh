#!/usr/bin/env bash
# Installs clipfold the way the README's "Install" section says, as a new
# user would, from a clean clone of this checkout's HEAD in a temporary
# directory, and compacts and searches a bundled conversation through each
# install. Part of `make test` (make test-install).
#
#   scripts/try-as-user.sh [STEP...]     steps: readme go go-lib python node (default: all)
#
#   readme  every install line of the README ("Install" and every other
#           `go install`, `pip install`, `npm install` line) is a line of
#           this script, so the README says exactly what is run here
#   go      `go install ./cmd/clipfold`, then from an unrelated directory
#           `clipfold compact` the bundled 884-message session and
#           `clipfold search` a plain question
#   go-lib  a program outside the repository importing the module through a
#           `replace` to ../clipfold: clipfold.Open with no path to any
#           .wasm, Compress, Search
#   python  a fresh virtualenv, `pip install ./bindings/python` (pip builds
#           the wheel and installs it), then from an unrelated directory
#           Compactor() and AsyncCompactor() compact and search
#   node    `npm ci && npm pack`, the tarball installed into a fresh project
#           next to the clone; an ES module and a CommonJS script compact
#           and search, with nothing on stderr
#
# Only committed files are tried (it clones HEAD). The user's environment
# has no clipfold variables (CLIPFOLD_WASM, CLIPFOLD_SQL_DIR), no
# PYTHONPATH, VIRTUAL_ENV or NODE_OPTIONS; the Go, pip and npm caches are
# the machine's (a user's are too). Needs go, git, python3 with venv, node
# and npm, and the package registries (scripts/ci-setup.sh installs them).
# CLIPFOLD_TRY_KEEP=1 keeps the temporary directory.
set -euo pipefail
script="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
root="$(cd "$(dirname "$script")/.." && pwd)"
steps=("$@")
((${#steps[@]})) || steps=(readme go go-lib python node)

tmp="$(mktemp -d "${TMPDIR:-/tmp}/clipfold-try.XXXXXX")"
if [ "${CLIPFOLD_TRY_KEEP:-0}" = 1 ]; then
	trap 'echo "try-as-user: kept $tmp" >&2' EXIT
else
	trap 'rm -rf "$tmp"' EXIT
fi
clone="$tmp/clipfold"
mkdir -p "$tmp/logs"

# A new user's environment.
unset CLIPFOLD_WASM CLIPFOLD_SQL_DIR PYTHONPATH PYTHONHOME VIRTUAL_ENV NODE_OPTIONS NODE_NO_WARNINGS NODE_PATH
export GOBIN="$tmp/bin" PATH="$tmp/bin:$PATH" # go install's target, on the PATH
export PIP_DISABLE_PIP_VERSION_CHECK=1 npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false

now() { echo "$EPOCHREALTIME"; }
# step NAME FUNCTION: runs FUNCTION in a subshell, its output into a log;
# prints one line, and the log's end on failure.
failed=0
step() {
	local name="$1" fn="$2" t0 rc
	t0="$(now)"
	# not `( … ) || rc=$?`: in such a context bash ignores set -e inside
	set +e
	(
		set -euo pipefail
		"$fn"
	) >"$tmp/logs/$name.log" 2>&1
	rc=$?
	set -e
	local took
	took="$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1fs", b - a }')"
	if [ "$rc" -eq 0 ]; then
		printf 'ok   %-7s %7s  %s\n' "$name" "$took" "$(tail -1 "$tmp/logs/$name.log")"
	else
		printf 'FAIL %-7s %7s  (exit %d)\n' "$name" "$took" "$rc"
		sed 's/^/    /' "$tmp/logs/$name.log" | tail -60
		failed=$((failed + 1))
	fi
}

# The README's install lines: every line of the sh blocks of "## Install",
# and every `go install`, `go get`, `pip install`, `npm install` line of any
# sh block, without its trailing comment.
readme_lines() {
	awk '
		/^## / { install = ($0 == "## Install") }
		/^```/ { if (inblock) { inblock = 0 } else if ($0 == "```sh") { inblock = 1 }; next }
		inblock {
			line = $0
			sub(/[ \t]+#.*$/, "", line); sub(/^[ \t]+/, "", line); sub(/[ \t]+$/, "", line)
			if (line == "" || line ~ /^#/) next
			if (install || line ~ /^(go install|go get|pip install|npm install) /) print line
		}' "$root/README.md" | sort -u
}

try_readme() {
	local lines n=0 missing=0
	lines="$(readme_lines)"
	[ -n "$lines" ] || { echo "README.md has no install lines (no \"## Install\" section?)"; return 1; }
	# Not `sed … | grep -q`: grep -q exits at the first match, sed then
	# dies of SIGPIPE, and pipefail turns a match into a failure.
	local body
	body="$(sed 's/^[[:space:]]*//' "$script")"
	while IFS= read -r line; do
		n=$((n + 1))
		if ! grep -qxF -- "$line" <<<"$body"; then
			echo "README.md install line not run by scripts/try-as-user.sh: $line"
			missing=$((missing + 1))
		fi
	done <<<"$lines"
	[ "$missing" -eq 0 ] || return 1
	echo "the README's $n install lines are this script's"
}

# A clean clone of HEAD, as a user gets it (the build and dist directories,
# node_modules and virtualenvs of the checkout are not there).
clone_repo() {
	git clone --quiet --no-hardlinks "$root" "$clone"
	git -C "$clone" checkout --quiet --detach "$(git -C "$root" rev-parse HEAD)"
	echo "cloned $(git -C "$clone" rev-parse --short HEAD)"
}

try_go() {
	cd "$clone"
	go install ./cmd/clipfold
	[ "$(command -v clipfold)" = "$GOBIN/clipfold" ] || { echo "clipfold is not the installed binary: $(command -v clipfold)"; return 1; }
	mkdir -p "$tmp/somewhere" && cd "$tmp/somewhere"
	clipfold version | tee version.txt
	grep -q 'embedded in the binary' version.txt
	clipfold compact "$clone/testdata/conversations/debugging-session.json" --db demo.db
	clipfold search "what was the root cause of the incident?" --db demo.db --limit 3 | tee hits.txt
	# the assistant's turn that names the root cause (testdata/conversations/debugging-session.facts.json)
	grep -q 'message dbg-0070' hits.txt || { echo "the root cause (dbg-0070) is not in the top 3"; return 1; }
	echo "go install ./cmd/clipfold: compacted 884 messages, search found the root cause"
}

# The question every library host asks of the bundled support chat; the
# answer is the damaged order's id (testdata/conversations/support-chat.facts.json).
conv="testdata/conversations/support-chat.json"
question="which order arrived damaged?"
answer="ORD-5523109"

try_go_lib() {
	mkdir -p "$tmp/app-go" && cd "$tmp/app-go"
	go mod init example.com/app
	cat >main.go <<'EOF'
// A user's program: compacts a conversation and searches it with the
// plug-in embedded in the module; no path to any .wasm.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/clipfold/clipfold"
	"github.com/clipfold/clipfold/hostfuncs/store"
)

func main() {
	conv, question, answer := os.Args[1], os.Args[2], os.Args[3]
	raw, err := os.ReadFile(conv)
	if err != nil {
		log.Fatal(err)
	}
	var history []json.RawMessage
	var first []struct {
		ConversationID string `json:"conversation_id"`
	}
	if err := json.Unmarshal(raw, &history); err != nil {
		log.Fatal(err)
	}
	if err := json.Unmarshal(raw, &first); err != nil || len(first) == 0 {
		log.Fatal("no messages: ", err)
	}
	id := first[0].ConversationID // the bundled messages name theirs
	ctx := context.Background()
	c, err := clipfold.Open(ctx, clipfold.Options{}) // offline: SQLite in memory, extractive summarizer
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	res, err := c.Compress(ctx, id, history, nil)
	if err != nil {
		log.Fatal(err)
	}
	if res.Failed || res.MessagesCompressed < len(history)/2 {
		log.Fatalf("compress: failed %v (%s), %d of %d messages compressed", res.Failed, res.FailureMessage, res.MessagesCompressed, len(history))
	}
	hits, err := c.Search(ctx, question, store.SearchOptions{ConversationID: id, Limit: 3})
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range hits {
		if strings.Contains(h.Text, answer) {
			fmt.Printf("Go module: compressed %d of %d messages; %q found %s %s\n", res.MessagesCompressed, len(history), question, h.Kind, h.ID)
			return
		}
	}
	log.Fatalf("%q: %s is not in the top %d hits", question, answer, len(hits))
}
EOF
	go mod edit -require=github.com/clipfold/clipfold@v0.1.0 -replace=github.com/clipfold/clipfold=../clipfold && go mod tidy
	go run . "$clone/$conv" "$question" "$answer"
}

try_python() {
	python3 -m venv "$tmp/venv"
	# shellcheck disable=SC1091
	. "$tmp/venv/bin/activate"
	cd "$clone"
	pip install ./bindings/python
	mkdir -p "$tmp/app-py" && cd "$tmp/app-py"
	cat >try.py <<'EOF'
import asyncio, json, os, sys

import clipfold
from clipfold import AsyncCompactor, Compactor

conv_path, question, answer = sys.argv[1:4]
with open(conv_path, encoding="utf-8") as f:
    history = json.load(f)
conv = history[0]["conversation_id"]  # the bundled messages name theirs
wasm = clipfold.find_wasm()
assert "site-packages" in wasm and os.path.isfile(wasm), wasm  # the plug-in the wheel bundles


def check(result, hits):
    assert not result["failed"], result
    assert result["messages_compressed"] >= len(history) // 2, result["messages_compressed"]
    found = [h for h in hits if answer in h["text"]]
    assert found, "%r: %s is not in the top %d hits" % (question, answer, len(hits))
    return result["messages_compressed"], found[0]["kind"], found[0]["id"]


with Compactor(store="sync.db") as c:
    sync = check(c.compress(conv, history), c.search(question, conversation_id=conv, limit=3))


async def main():
    async with AsyncCompactor(store="async.db") as c:
        return check(await c.compress(conv, history), await c.search(question, conversation_id=conv, limit=3))


assert asyncio.run(main()) == sync
print("Python %s: Compactor and AsyncCompactor compressed %d of %d messages; %r found %s %s"
      % (clipfold.__version__, sync[0], len(history), question, sync[1], sync[2]))
EOF
	python -W error::DeprecationWarning try.py "$clone/$conv" "$question" "$answer"
}

try_node() {
	(
		cd "$clone"
		cd bindings/node && npm ci && npm pack
	)
	mkdir -p "$tmp/app-node" && cd "$tmp/app-node"
	npm init -y >/dev/null
	npm install ../clipfold/bindings/node/clipfold-0.1.0.tgz
	local body='
  const history = JSON.parse(readFileSync(conv, "utf8"));
  const id = history[0].conversation_id; // the bundled messages name theirs
  const store = new SQLiteStore(db);
  const c = await createCompactor({ store });
  store.append(id, history); // as the README shows: the store keeps the messages
  const r = await c.compress(id);
  if (r.failed || r.messages_compressed < history.length / 2) throw new Error("compress: " + JSON.stringify(r).slice(0, 400));
  const hits = await c.search(question, { conversationId: id, limit: 3 });
  const hit = hits.find((h) => h.text.includes(answer));
  if (!hit) throw new Error(question + ": " + answer + " is not in the top hits: " + JSON.stringify(hits).slice(0, 800));
  await c.close();
  store.close();
  console.log(kind + ": compressed " + r.messages_compressed + " of " + history.length + " messages; " + JSON.stringify(question) + " found " + hit.kind + " " + hit.id);'
	cat >try.mjs <<EOF
import { readFileSync } from 'node:fs';
import { createCompactor, SQLiteStore } from 'clipfold';
const [conv, question, answer] = process.argv.slice(2);
const db = 'esm.db', kind = 'ES module';
$body
EOF
	cat >try.cjs <<EOF
const { readFileSync } = require('node:fs');
const { createCompactor, SQLiteStore } = require('clipfold');
const [conv, question, answer] = process.argv.slice(2);
const db = 'cjs.db', kind = 'CommonJS';
(async () => {
$body
})().catch((e) => { console.error(e); process.exit(1); });
EOF
	local f
	for f in try.mjs try.cjs; do
		node "$f" "$clone/$conv" "$question" "$answer" 2>"$f.err" | tee "$f.out"
		if [ -s "$f.err" ]; then
			echo "node $f printed on stderr:"
			cat "$f.err"
			return 1
		fi
	done
	echo "npm: $(ls ../clipfold/bindings/node/*.tgz | xargs -n1 basename) from ES modules and CommonJS, nothing on stderr"
}

for s in "${steps[@]}"; do
	case "$s" in
	readme | go | go-lib | python | node) ;;
	*)
		echo "try-as-user: unknown step $s (readme go go-lib python node)" >&2
		exit 2
		;;
	esac
done
for s in "${steps[@]}"; do
	if [ "$s" != readme ] && [ ! -d "$clone" ]; then
		step clone clone_repo
		[ -d "$clone/.git" ] || exit 1
	fi
	step "$s" "try_${s//-/_}"
done
if [ "$failed" -ne 0 ]; then
	echo "try-as-user: $failed step(s) failed"
	exit 1
fi
echo "try-as-user: every install works from a clean clone"
