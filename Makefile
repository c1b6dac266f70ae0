# clipfold — see README.md. `make test` is what CI runs (through .ci/run).
GO        ?= go
WASM      := build/clipfold.wasm
WASM_TINY := build/clipfold-tinygo.wasm
GOSRC     := $(shell find core api plugin -name '*.go' -not -name '*_test.go') go.mod go.sum

CLI       := build/clipfold
EMBED     := cmd/clipfold/embedded/clipfold.wasm

TINYGO_SCRIPTS := scripts/build-tinygo.sh scripts/install-tinygo.sh scripts/tinygo/clipfold-wasip1.json.in

.DELETE_ON_ERROR:

.PHONY: all build build-tinygo tinygo-toolchain cli test test-go test-wasmtime test-node test-python test-tinygo check-32bit bench fidelity demo vectors clean

all: build cli

## build: the standard-Go plug-in, build/clipfold.wasm
build: $(WASM)

# Then internal/jumpthread sends Go's jumps straight to their
# targets instead of through each function's dispatch table (RATIONALE.md,
# "Go's jumps, threaded after the build"). JUMPTHREAD=0 skips it.
export JUMPTHREAD ?= 1
$(WASM): $(GOSRC) $(wildcard internal/jumpthread/*.go tools/jumpthread/*.go)
	@mkdir -p build
	GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -trimpath -ldflags="-s -w" -o build/clipfold-go.wasm ./plugin
	@if [ "$(JUMPTHREAD)" != 0 ]; then $(GO) run ./tools/jumpthread -o $@ build/clipfold-go.wasm; else cp build/clipfold-go.wasm $@; fi

## build-tinygo: the TinyGo plug-in, build/clipfold-tinygo.wasm (installs TinyGo on first use)
build-tinygo: $(WASM_TINY)

$(WASM_TINY): $(GOSRC) $(TINYGO_SCRIPTS)
	bash scripts/build-tinygo.sh $@ ./plugin

## tinygo-toolchain: install the pinned TinyGo toolchain only
tinygo-toolchain:
	bash scripts/install-tinygo.sh

## vectors: regenerate testdata/vectors from tools/vectors/gen_vectors.py
vectors:
	python3 tools/vectors/gen_vectors.py

## test: every suite against the standard build, then the plug-in suites of every host against the TinyGo build
test: build test-go test-node test-python test-tinygo

# The PostgreSQL store and harness tests run against a real server started
# from Debian's package (scripts/start-postgres.sh is idempotent).
test-go: build check-32bit
	$(GO) vet ./...
	GOOS=wasip1 GOARCH=wasm $(GO) vet ./plugin
	eval "$$(bash scripts/start-postgres.sh)" && $(GO) test -count=1 ./...
	$(MAKE) test-wasmtime

## test-wasmtime: the Go host on Wasmtime (harness/wasmtimehost, its own module; cgo)
test-wasmtime: build
	cd harness/wasmtimehost && $(GO) vet ./... && $(GO) test -count=1 ./...

## test-node: the Node.js host's suite (npm ci into bindings/node, then node --test)
test-node: build
	cd bindings/node && npm ci --no-audit --no-fund && npm test

## test-python: the Python host's suite in a virtualenv made on the fly
test-python: build
	bash bindings/python/run_tests.sh

## test-tinygo: conformance, hostile-input, fault-injection and end-to-end suites
## of the Go, Node and Python hosts against build/clipfold-tinygo.wasm
test-tinygo: $(WASM_TINY)
	eval "$$(bash scripts/start-postgres.sh)" && CLIPFOLD_WASM=$(abspath $(WASM_TINY)) $(GO) test -count=1 ./harness
	cd harness/wasmtimehost && CLIPFOLD_WASM=$(abspath $(WASM_TINY)) $(GO) test -count=1 ./...
	cd bindings/node && npm ci --no-audit --no-fund && CLIPFOLD_WASM=$(abspath $(WASM_TINY)) npm test
	CLIPFOLD_WASM=$(abspath $(WASM_TINY)) bash bindings/python/run_tests.sh

## check-32bit: int-size bugs TinyGo's 32-bit wasm would hit, caught without TinyGo
check-32bit:
	GOOS=linux GOARCH=386 $(GO) build ./core ./api

## bench: measure performance; writes docs/benchmarks.md and docs/benchmarks.svg (tools/benchreport)
bench: build
	$(GO) run ./tools/benchreport

## fidelity: what compaction keeps, measured: replays testdata/fidelity through build/clipfold, writes docs/fidelity.md
## (tools/fidelity; its CI subset runs in go test ./tools/fidelity, part of make test)
fidelity: cli
	$(GO) run ./tools/fidelity -clipfold $(CLI) -out docs/fidelity.md -json build/fidelity.json

clean:
	rm -rf build

## cli: the clipfold command, with the plug-in embedded (the TinyGo build when it exists)
cli: $(CLI)

$(CLI): $(WASM) $(shell find core api hostfuncs harness -name '*.go' -not -name '*_test.go') go.mod go.sum
	@if [ -f $(WASM_TINY) ]; then cp $(WASM_TINY) $(EMBED); else cp $(WASM) $(EMBED); fi
	$(GO) build -trimpath -o $@ ./cmd/clipfold

## demo: the README's first command — compact a bundled 884-message session offline, then search it
demo: cli
	@rm -f build/demo.db build/demo.db-*
	$(CLI) compact testdata/conversations/debugging-session.json --db build/demo.db
	$(CLI) search "ErrInsufficientStock rollback" --db build/demo.db --limit 3
