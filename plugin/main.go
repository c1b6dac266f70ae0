//go:build wasip1

// Command plugin is clipfold's Extism plug-in: one export per row of
// docs/spec.md#exports, each a thin shell that reads the input, calls the api
// function of the same name and writes its output or its error. Build it with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o build/clipfold.wasm ./plugin
//
// or with TinyGo (make build-tinygo). Everything with behaviour lives in
// ../api and ../core so that it can be tested natively.
package main

import (
	"runtime"
	"runtime/debug"
	"strconv"

	"github.com/clipfold/clipfold/api"
	"github.com/clipfold/clipfold/core"
	pdk "github.com/extism/go-pdk"
)

// inputLength is the Extism kernel's length of the current input.
//
//go:wasmimport extism:host/env input_length
func inputLength() uint64

// logWarn is the Extism kernel's warning log. The plug-in calls it
// directly: pdk.Log first asks the host for its log level through
// get_log_level, an import that go-pdk ≥ 1.1 adds and that stable Extism
// SDKs (@extism/extism 1.0.3) do not provide, so the module would not
// load there. A host below warning level drops the line itself.
//
//go:wasmimport extism:host/env log_warn
func logWarn(offset uint64)

func warn(msg string) {
	m := pdk.AllocateString(msg)
	logWarn(m.Offset())
	m.Free()
}

// main is required by the wasip1 reactor build; the exports are the API.
func main() {}

// handler is an export's behaviour: input bytes to output bytes.
type handler func(e *api.Env, in []byte) ([]byte, error)

// run executes h with the plug-in's environment (see call).
func run(h handler) int32 { return call(h, false) }

// runLive is run for an export whose allocations all stay live until its
// output is built: the decoded messages and the output (see call).
func runLive(h handler) int32 { return call(h, true) }

// call executes h with the plug-in's environment. No panic may cross the
// boundary: a recovered panic becomes an "internal" error and the
// instance keeps answering later calls. live says that what h allocates
// stays live until its output is built, so collecting during it is
// wasted (true of split, score, chunk, estimateTokens, shouldCompact;
// not of compress or the summarizer, which make garbage as they go).
func call(h handler, live bool) (rc int32) {
	in, viaStage := takeStaged()
	defer func() {
		if r := recover(); r != nil {
			rc = fail(core.CodeInternal + ": unexpected failure: " + panicText(r))
		}
	}()
	defer func() { directHostArgs = false }()
	e, err := environment()
	if err != nil {
		return fail(err.Error())
	}
	defer e.EndCall()
	if !viaStage {
		// Refuse oversized input before copying it out of the Extism kernel.
		if n := inputLength(); n > api.MaxInputBytes {
			return fail(core.CodeTooLarge + ": input is " + strconv.FormatUint(n, 10) +
				" bytes; the limit is " + strconv.Itoa(api.MaxInputBytes))
		}
		in = loadInput()
	}
	large := len(in) > largeCall
	if large && live && runtime.Compiler == "gc" {
		// A collection during a pure export finds no garbage and only
		// slows it down (marking, write barriers on every pointer
		// store): collect once afterwards instead (collect, or
		// clipfold_release for a staged call).
		defer debug.SetGCPercent(debug.SetGCPercent(-1))
	}
	out, err := h(e, in)
	in = nil
	switch {
	case err != nil:
		fail(err.Error())
	case answerToResult:
		keepResult(out, large) // collected in clipfold_release
		large = false
	case viaStage:
		pdk.Output(stagedOutput(out, large)) // collected in clipfold_release
		large = false
	default:
		pdk.Output(out)
	}
	if large {
		out = nil
		collect()
	}
	if err != nil {
		return 1
	}
	return 0
}

// answerToResult says that the call being made answers through
// clipfold_result (a package variable, not a closure's: under TinyGo a
// captured variable is a heap allocation per call, and a 10k-message
// split's memory has no room to spare; BenchmarkPerfMemory).
var answerToResult bool

// fail reports msg as the call's error and returns the export's code.
func fail(msg string) int32 {
	if answerToResult {
		keepResult([]byte(msg), false)
	} else {
		pdk.SetErrorString(msg)
	}
	return 1
}

func panicText(r any) string {
	switch v := r.(type) {
	case error:
		return v.Error()
	case string:
		return v
	}
	return "panic"
}

var (
	env    *api.Env
	envErr error
)

// environment builds the Env once per instance: the defaults of
// docs/spec.md#config overlaid with the Extism manifest's config map (same
// keys, values as strings). A bad manifest value fails every call, naming the
// key.
func environment() (*api.Env, error) {
	if env != nil || envErr != nil {
		return env, envErr
	}
	c := core.DefaultConfig()
	for _, k := range core.Keys {
		s, ok := pdk.GetConfig(k)
		if !ok {
			continue
		}
		if err := c.SetString(k, s, "manifest config."+k); err != nil {
			envErr = err
			return nil, err
		}
	}
	env = &api.Env{Base: c, Warn: warn}
	env.ReuseMemory()
	return env, nil
}

//go:wasmexport score
func score() int32 { return runLive((*api.Env).Score) }

//go:wasmexport split
func split() int32 { return runLive((*api.Env).Split) }

//go:wasmexport chunk
func chunk() int32 { return runLive((*api.Env).Chunk) }

//go:wasmexport estimateTokens
func estimateTokens() int32 { return runLive((*api.Env).EstimateTokens) }

//go:wasmexport shouldCompact
func shouldCompact() int32 { return runLive((*api.Env).ShouldCompact) }

//go:wasmexport buildSummarizationRequest
func buildSummarizationRequest() int32 { return run((*api.Env).BuildSummarizationRequest) }

//go:wasmexport buildResummarizationRequest
func buildResummarizationRequest() int32 { return run((*api.Env).BuildResummarizationRequest) }

//go:wasmexport buildClipArchive
func buildClipArchive() int32 { return run((*api.Env).BuildClipArchive) }

//go:wasmexport version
func version() int32 { return run((*api.Env).VersionInfo) }

//go:wasmexport extractiveSummary
func extractiveSummary() int32 { return run((*api.Env).ExtractiveSummary) }

//go:wasmexport providerRequest
func providerRequest() int32 { return run((*api.Env).ProviderRequest) }

//go:wasmexport providerResponse
func providerResponse() int32 { return run((*api.Env).ProviderResponse) }

//go:wasmexport searchQuery
func searchQuery() int32 { return run((*api.Env).SearchQuery) }

//go:wasmexport decodeHistory
func decodeHistory() int32 { return run((*api.Env).DecodeHistory) }

//go:wasmexport buildMemoryRead
func buildMemoryRead() int32 { return run((*api.Env).BuildMemoryRead) }

//go:wasmexport planCommit
func planCommit() int32 { return run((*api.Env).PlanCommit) }

//go:wasmexport planAppend
func planAppend() int32 { return run((*api.Env).PlanAppend) }

//go:wasmexport parseBlocks
func parseBlocks() int32 { return run((*api.Env).ParseBlocks) }
