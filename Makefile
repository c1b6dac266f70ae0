# clipfold — see README.md. `make test` is what CI runs (through .ci/run).
GO        ?= go
WASM      := build/clipfold.wasm
WASM_TINY := build/clipfold-tinygo.wasm
GOSRC     := $(shell find core api plugin -name '*.go' -not -name '*_test.go') go.mod go.sum

.PHONY: all build build-tinygo test test-go test-node test-python fuzz-seeds bench demo vectors clean

all: build

## build: the standard-Go plug-in, build/clipfold.wasm
build: $(WASM)

$(WASM): $(GOSRC)
	@mkdir -p build
	GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -trimpath -ldflags="-s -w" -o $@ ./plugin

## build-tinygo: the TinyGo plug-in, build/clipfold-tinygo.wasm (installs TinyGo on first use)
build-tinygo: $(WASM_TINY)

$(WASM_TINY): $(GOSRC)
	bash scripts/build-tinygo.sh $@ ./plugin

## vectors: regenerate testdata/vectors from tools/vectors/gen_vectors.py
vectors:
	python3 tools/vectors/gen_vectors.py

## test: every suite, against the standard build (and the TinyGo build when present)
test: build test-go test-python

# The PostgreSQL store and harness tests run against a real server started
# from Debian's package (scripts/start-postgres.sh is idempotent).
test-go: build
	$(GO) vet ./...
	GOOS=wasip1 GOARCH=wasm $(GO) vet ./plugin
	eval "$$(bash scripts/start-postgres.sh)" && $(GO) test -count=1 ./...

## test-python: the Python host's suite in a virtualenv made on the fly
test-python: build
	bash harness/python/run_tests.sh

clean:
	rm -rf build

## demo: the README's first command — compact a bundled conversation offline
demo: build
	$(GO) run ./harness/cmd/clipfold compact testdata/conversations/debugging-session.json
