# clipfold — see README.md. `make test` is what CI runs (through .ci/run).
GO        ?= go
WASM      := build/clipfold.wasm
WASM_TINY := build/clipfold-tinygo.wasm
GOSRC     := $(shell find core api plugin -name '*.go' -not -name '*_test.go') go.mod go.sum

CLI       := build/clipfold

TINYGO_SCRIPTS := scripts/build-tinygo.sh scripts/install-tinygo.sh scripts/tinygo/clipfold-wasip1.json.in

.DELETE_ON_ERROR:

.PHONY: all build build-tinygo embed tinygo-toolchain cli test chaos check-bigendian test-go test-node test-python test-python-latest test-tinygo test-sdks test-install test-frameworks check-32bit bench fidelity trajectories window ahead demo vectors clean dist dist-clean dist-cli dist-python dist-node

all: build cli

## build: the standard-Go plug-in, build/clipfold.wasm
build: $(WASM)

$(WASM): $(GOSRC)
	@mkdir -p build
	GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -trimpath -ldflags="-s -w" -o $@ ./plugin

## build-tinygo: the TinyGo plug-in, build/clipfold-tinygo.wasm (installs TinyGo on first use)
build-tinygo: $(WASM_TINY)

$(WASM_TINY): $(GOSRC) $(TINYGO_SCRIPTS)
	bash scripts/build-tinygo.sh $@ ./plugin

## embed: rebuild the shipped plug-in, embed/clipfold.wasm (TinyGo), and record its sources' hash
embed: $(WASM_TINY)
	cp $(WASM_TINY) embed/clipfold.wasm
	$(GO) test ./embed -run TestEmbeddedIsFresh -update
	$(GO) test -count=1 ./embed

## tinygo-toolchain: install the pinned TinyGo toolchain only
tinygo-toolchain:
	bash scripts/install-tinygo.sh

## vectors: regenerate testdata/vectors from tools/vectors/gen_vectors.py
vectors:
	python3 tools/vectors/gen_vectors.py

## test: every suite against the standard build, then the plug-in suites of every host against the TinyGo build,
## both built from the sources (plain `go test ./...` needs nothing built: it loads the embedded build, embed/clipfold.wasm),
## every Extism SDK, the README's installs from a clean clone, and the Node adapters against the frameworks' newest releases
test: build test-go test-node test-python test-python-latest test-tinygo test-sdks test-install test-frameworks

# The PostgreSQL store and harness tests run against a real server started
# from Debian's package (scripts/start-postgres.sh is idempotent). Every
# suite that loads the plug-in loads $CLIPFOLD_WASM, here the standard build.
test-go: build check-32bit check-bigendian
	$(GO) vet ./...
	GOOS=wasip1 GOARCH=wasm $(GO) vet ./plugin
	eval "$$(bash scripts/start-postgres.sh)" && CLIPFOLD_WASM=$(abspath $(WASM)) $(GO) test -count=1 ./...

## chaos: the fault suite in one command, every host — the command killed with SIGKILL at random instants
## and 8 processes at once (SQLite, PostgreSQL), fault injection at every host call, hostile and huge inputs,
## the fuzz corpora, storage errors (a file-size limit), read-only archives, redirects, races on one compactor.
## All of it also runs in make test.
CHAOS_GO_RUN := Fault|Breaker|Hostile|Large|Deadline|NoGain|Fuzz|Concurren|Race|AppendNew|ReadOnly|SameIDs|NUL|Redirect|Redact|Conflict|LongConversation
CHAOS_NODE   := faults storage concurrency conversations nul redirects arguments appendnew lockdir chaos
CHAOS_PY     := test_storage or test_concurrency or test_conversations or test_nul or test_redirects or test_arguments or fault or test_append_new or test_chaos
chaos: build
	eval "$$(bash scripts/start-postgres.sh)" && $(GO) test -count=1 ./internal/chaos && \
		$(GO) test -count=1 -run '$(CHAOS_GO_RUN)' . ./api ./core ./harness ./hostfuncs/... ./cmd/clipfold
	cd bindings/node && { [ -d node_modules ] || npm ci --no-audit --no-fund; } && \
		node --test $(foreach t,$(CHAOS_NODE),test/$(t).test.js)
	bash bindings/python/run_tests.sh -k '$(CHAOS_PY)'

## test-node: the Node.js host's suite (npm ci into bindings/node, then node --test)
test-node: build
	cd bindings/node && npm ci --no-audit --no-fund && npm test

## test-frameworks: the Node adapters' suites (LangChain.js, AI SDK, Mastra, OpenAI Agents SDK), the README's examples and
## a TypeScript consumer of every adapter (tsc --strict) against each framework's newest release within the declared peer range, installed fresh without the lock file
## (bindings/node/scripts/test-frameworks-latest.sh; needs the npm registry). The pinned versions are tested by test-node.
test-frameworks: build
	bash bindings/node/scripts/test-frameworks-latest.sh

## test-python: the Python host's suite in a virtualenv made on the fly
test-python: build
	bash bindings/python/run_tests.sh

## test-python-latest: the Python adapters' suites (LangChain, LangGraph, Pydantic AI, OpenAI Agents SDK) against each
## framework's newest release, installed fresh without the pins into build/py-latest-venv (bindings/python/run_latest.sh;
## needs PyPI); it writes the versions tested into bindings/python/README.md. The pinned versions are tested by test-python.
test-python-latest: build
	bash bindings/python/run_latest.sh

## test-tinygo: the suites of the Go, Node and Python hosts that load the plug-in
## (the Go API, the command, conformance, hostile-input, fault-injection,
## end-to-end, the benchmarks' CI subsets) against build/clipfold-tinygo.wasm. The
## packaging tests are left to test-node and test-python: they build and install
## the packages, which bundle embed/clipfold.wasm whatever CLIPFOLD_WASM says.
GO_PLUGIN_SUITES := . ./cmd/clipfold ./harness ./internal/chaos ./tools/ahead ./tools/fidelity ./tools/trajectories ./tools/window
test-tinygo: $(WASM_TINY)
	bash scripts/check-embed.sh $(WASM_TINY)
	eval "$$(bash scripts/start-postgres.sh)" && CLIPFOLD_WASM=$(abspath $(WASM_TINY)) $(GO) test -count=1 $(GO_PLUGIN_SUITES)
	cd bindings/node && { [ -d node_modules ] || npm ci --no-audit --no-fund; } && \
		CLIPFOLD_WASM=$(abspath $(WASM_TINY)) node --test $$(ls test/*.test.js | grep -v '^test/package\.test\.js$$')
	CLIPFOLD_WASM=$(abspath $(WASM_TINY)) bash bindings/python/run_tests.sh --ignore=tests/test_packaging.py

## test-sdks: every stable Extism SDK (Go, JavaScript, Python, Rust, Java) loads
## embed/clipfold.wasm and build/clipfold.wasm with no shim (harness/sdks/README.md)
test-sdks: build
	bash harness/sdks/run.sh embed/clipfold.wasm $(WASM)

## test-install: the README's install lines, run as a new user would from a clean clone of HEAD
## in a temporary directory; a compaction and a search through each install (scripts/try-as-user.sh)
test-install:
	bash scripts/try-as-user.sh

## check-bigendian: the plug-in's byte-order assumptions (eight-byte loads read as little-endian numbers) hold on a
## big-endian machine: core's and api's tests on s390x under qemu-user (scripts/ci-setup.sh installs it)
check-bigendian:
	GOARCH=s390x $(GO) test -count=1 -exec qemu-s390x ./core ./api ./internal/le

## check-32bit: int-size bugs TinyGo's 32-bit wasm would hit, caught without TinyGo
check-32bit:
	GOOS=linux GOARCH=386 $(GO) build ./core ./api
	GOOS=linux GOARCH=386 $(GO) test -count=1 ./core

## bench: measure both builds in every host (Go, plain Extism Go SDK, Node, Python) and the TinyGo build through the plain JS and Java SDKs; writes
## docs/benchmarks.md and docs/benchmarks.svg (tools/benchreport; it runs make build build-tinygo)
bench:
	$(GO) run ./tools/benchreport

## fidelity: what compaction keeps, measured: replays testdata/fidelity through build/clipfold, writes docs/fidelity.md
## (tools/fidelity; its CI subset runs in go test ./tools/fidelity, part of make test)
fidelity: cli
	$(GO) run ./tools/fidelity -clipfold $(CLI) -out docs/fidelity.md -json build/fidelity.json

## trajectories: real agent tool trajectories (testdata/trajectories) replayed through build/clipfold with build/clipfold.wasm,
## with a check before every model call: tool pairs, the limit, early tool facts, search by call against BM25, lost
## messages; writes docs/trajectories.md (tools/trajectories; its CI subset runs in go test ./tools/trajectories)
trajectories: cli build
	$(GO) run ./tools/trajectories -clipfold $(CLI) -wasm $(WASM) -out docs/trajectories.md -json build/trajectories.json

## ahead: what an agent waits for compaction, synchronous and ahead of time: the bundled sessions replayed as an agent loop
## (turns every 2 s, a fake summarizer of 1–3 s) through build/clipfold (Go), the Python and the Node packages, the 884-message
## session compacted at once, and the per-turn check (Python's against LangChain's count_tokens_approximately); writes docs/ahead.md
## (tools/ahead; about 12 minutes, one session at a time; AHEAD_FLAGS='-scale 0.1' for a quick run; its CI subset runs in go test ./tools/ahead)
PY_VENV := bindings/python/.venv
ahead: cli build
	[ -x $(PY_VENV)/bin/python ] || bash bindings/python/run_tests.sh -k nothing || [ -x $(PY_VENV)/bin/python ]
	cd bindings/node && { [ -d node_modules ] || npm ci --no-audit --no-fund; }
	$(GO) run ./tools/ahead -clipfold $(CLI) -wasm $(WASM) -python $(PY_VENV)/bin/python -node node -jobs 6 -out docs/ahead.md -json build/ahead.json $(AHEAD_FLAGS)

## window: the token estimate against real tokenizers (o200k_base, cl100k_base via js-tiktoken) on the corpus of
## testdata/tokens, per kind, through build/clipfold.wasm: writes docs/window.md (tools/window; its test, part of
## make test, holds every kind to the same bounds)
window: build
	CLIPFOLD_WASM=$(abspath $(WASM)) $(GO) run ./tools/window -out docs/window.md

clean:
	rm -rf build dist

## dist: what a release ships, into dist/ (emptied first): the command for linux, darwin and
## windows on amd64 and arm64 (pure Go cross-compilation: CGO_ENABLED=0, -trimpath, the version
## stamped as $(DIST_VERSION)), the Python wheel and sdist, the npm tarball, and SHA256SUMS;
## then tools/distcheck checks every file's format and sum and runs the native command.
## It ships embed/clipfold.wasm, so it first checks that it is fresh (make embed; DIST_ALLOW_STALE=1 skips that).
VERSION      := $(shell sed -n 's/^var cliVersion = "\(.*\)"$$/\1/p' cmd/clipfold/main.go)
COMMIT       := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(shell git diff --quiet HEAD -- 2>/dev/null || echo .dirty)
DIST_VERSION ?= $(VERSION)+$(COMMIT)
DIST         := dist
PLATFORMS    := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
DIST_VENV    := build/dist-venv

dist: dist-clean
ifneq ($(DIST_ALLOW_STALE),1)
	$(GO) test -count=1 -run TestEmbeddedIsFresh ./embed
endif
	$(MAKE) DIST_VERSION='$(DIST_VERSION)' dist-cli dist-python dist-node
	cd $(DIST) && sha256sum $$(ls | grep -vx SHA256SUMS) > SHA256SUMS
	$(GO) run ./tools/distcheck -version '$(DIST_VERSION)' $(DIST)

dist-clean:
	rm -rf $(DIST)

## dist-cli: only the commands (dist/clipfold-VERSION-OS-ARCH[.exe])
dist-cli:
	@mkdir -p $(DIST)
	@set -e; for p in $(PLATFORMS); do \
		os=$${p%/*}; arch=$${p#*/}; ext=; [ $$os = windows ] && ext=.exe; \
		echo "go build $$os/$$arch -> $(DIST)/clipfold-$(VERSION)-$$os-$$arch$$ext"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath \
			-ldflags='-s -w -X main.cliVersion=$(DIST_VERSION)' \
			-o $(DIST)/clipfold-$(VERSION)-$$os-$$arch$$ext ./cmd/clipfold; \
	done

## dist-python: only the wheel and the sdist (python -m build, in build/dist-venv; the wheel is built from the sdist)
dist-python:
	@mkdir -p $(DIST)
	[ -x $(DIST_VENV)/bin/python ] || python3 -m venv $(DIST_VENV)
	$(DIST_VENV)/bin/python -m pip install --quiet --disable-pip-version-check 'build>=1.2'
	$(DIST_VENV)/bin/python -m build --outdir $(DIST) bindings/python

## dist-node: only the npm tarball (npm pack; its prepack bundles the plug-in, the SQL and the types)
dist-node:
	@mkdir -p $(DIST)
	cd bindings/node && npm ci --no-audit --no-fund && npm pack --pack-destination $(abspath $(DIST))

## cli: the clipfold command (the same as `go build ./cmd/clipfold`: it embeds embed/clipfold.wasm)
cli: $(CLI)

$(CLI): $(shell find . -name '*.go' -not -name '*_test.go' -not -path './bindings/*') embed/clipfold.wasm go.mod go.sum
	@mkdir -p build
	$(GO) build -trimpath -o $@ ./cmd/clipfold

## demo: the README's first command — compact a bundled 884-message session offline, then ask it a plain question
demo: cli
	@rm -f build/demo.db build/demo.db-*
	$(CLI) compact testdata/conversations/debugging-session.json --db build/demo.db
	$(CLI) search "what was the root cause of the incident?" --db build/demo.db --limit 3
