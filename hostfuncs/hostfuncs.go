// Package hostfuncs binds a Go host's LLM and store to the plug-in's
// host functions (llm_complete, memory_list, compaction_commit; see
// docs/spec.md#host-functions), for Go programs using the Extism Go
// SDK. Host implements their JSON contract once, over two small
// interfaces (LLM, Store), so a Go program can plug in its own; Bind (or
// Host.Functions) makes the Extism host functions for the .wasm, and the
// same Host serves api.Env.Compress natively as an api.HostCaller, which
// is how tests prove both paths speak the same JSON.
//
// Most of the directory is not host functions but what a Go host plugs
// in, each package usable on its own: ./llm, the LLM providers
// (Anthropic, OpenAI-compatible, Ollama, the offline extractive default);
// ./embeddings, the embeddings providers (OpenAI-compatible, Ollama); and
// ./store, the stores (SQLite, PostgreSQL) with their schema, vector
// search and conformance suite (./store/storetest).
package hostfuncs

import (
	"context"
	"errors"
	"time"

	"github.com/clipfold/clipfold/api"
	"github.com/clipfold/clipfold/core"
	extism "github.com/extism/go-sdk"
	"github.com/tidwall/gjson"
)

// LLM completes summarization requests. A provider failure is returned as
// a *core.LLMError; any other error is reported to the plug-in as an
// "other" error, not retried.
type LLM interface {
	Complete(ctx context.Context, req *core.ModelRequest) (core.ModelResponse, error)
}

// Store keeps archival blocks and applies compaction commits atomically
// (core.ErrConflict when another compaction won).
type Store interface {
	ListBlocks(ctx context.Context, tier, labelPrefix string) ([]core.Block, error)
	Commit(ctx context.Context, c *core.Commit) error
}

// Host answers the plug-in's host-function calls.
type Host struct {
	LLM   LLM
	Store Store
	// Context is the parent of every host call's context; nil means
	// context.Background().
	Context context.Context
	// OnCall, when set, observes every call (name, duration, error
	// object or nil): the CLI uses it for progress and timing.
	OnCall func(name string, took time.Duration, failed bool)
}

// Namespace is the Extism import namespace of clipfold's host functions.
const Namespace = "extism:host/user"

// Functions binds h to the plug-in's imports.
func (h *Host) Functions() []extism.HostFunction { return Bind(h) }

// Names are the host functions of docs/spec.md#host-functions.
var Names = []string{"llm_complete", "memory_list", "compaction_commit"}

// Bind turns any api.HostCaller into the plug-in's imports. Tests use it
// to put a fault-injecting caller between the plug-in and a real Host.
func Bind(h api.HostCaller) []extism.HostFunction {
	names := Names
	out := make([]extism.HostFunction, 0, len(names))
	for _, name := range names {
		name := name
		f := extism.NewHostFunctionWithStack(name, func(ctx context.Context, p *extism.CurrentPlugin, stack []uint64) {
			in, err := readInput(ctx, p, stack[0])
			var res []byte
			if err != nil {
				res = api.AppendErrorObject(nil, "other", "reading the host-function input: "+err.Error(), false)
			} else if res, err = h.CallHost(name, in); err != nil {
				res = api.AppendErrorObject(nil, "other", name+": "+err.Error(), false)
			}
			off, err := p.WriteBytes(res)
			if err != nil {
				// Out of plug-in memory: nothing can be returned; 0 tells
				// the plug-in the host gave no output.
				stack[0] = 0
				return
			}
			stack[0] = off
		}, []extism.ValueType{extism.ValueTypeI64}, []extism.ValueType{extism.ValueTypeI64})
		f.SetNamespace(Namespace)
		out = append(out, f)
	}
	return out
}

// GuestMemory is the plug-in module's linear memory as the Go host sees
// it (wazero's api.Memory has this method).
type GuestMemory interface {
	Read(offset, byteCount uint32) ([]byte, bool)
}

type guestMemoryKey struct{}

// WithGuestMemory returns a context under which the functions of Bind
// also accept an input the plug-in left in its own memory: an argument
// with bit 63 set, the length in bits 32–62 and the address in bits
// 0–31, instead of an Extism memory offset. The Go host (harness) sets it
// for staged calls, for which the plug-in then skips copying each
// host-function input into Extism memory eight bytes per host call.
func WithGuestMemory(ctx context.Context, mem GuestMemory) context.Context {
	return context.WithValue(ctx, guestMemoryKey{}, mem)
}

// readInput returns a host function's input: from Extism memory, or from
// the plug-in's own (see WithGuestMemory).
func readInput(ctx context.Context, p *extism.CurrentPlugin, arg uint64) ([]byte, error) {
	if arg>>63 == 0 {
		return p.ReadBytes(arg)
	}
	mem, ok := ctx.Value(guestMemoryKey{}).(GuestMemory)
	if !ok {
		return nil, errors.New("the plug-in passed its own memory, but this call did not offer it")
	}
	view, ok := mem.Read(uint32(arg), uint32(arg>>32)&(1<<31-1))
	if !ok {
		return nil, errors.New("the plug-in passed a range outside its memory")
	}
	return append([]byte(nil), view...), nil
}

// CallHost answers one host-function call with its JSON output. It never
// returns an error: failures are {"error":{…}} objects
// (docs/spec.md#host-functions), so the plug-in always gets an answer it can
// act on.
func (h *Host) CallHost(name string, input []byte) (out []byte, _ error) {
	start := time.Now()
	defer func() {
		if r := recover(); r != nil {
			out = api.AppendErrorObject(nil, "other", name+": host panicked", false)
		}
		if h.OnCall != nil {
			h.OnCall(name, time.Since(start), gjson.GetBytes(out, "error").Exists())
		}
	}()
	ctx := h.Context
	if ctx == nil {
		ctx = context.Background()
	}
	switch name {
	case "llm_complete":
		return h.llmComplete(ctx, input), nil
	case "memory_list":
		return h.memoryList(ctx, input), nil
	case "compaction_commit":
		return h.commit(ctx, input), nil
	}
	return api.AppendErrorObject(nil, "other", "unknown host function "+name, false), nil
}

func (h *Host) llmComplete(ctx context.Context, in []byte) []byte {
	if h.LLM == nil {
		return api.AppendErrorObject(nil, core.LLMUnavailable, "no LLM configured", false)
	}
	req, err := api.ParseModelRequest(in)
	if err != nil {
		return api.AppendErrorObject(nil, core.LLMInvalidRequest, err.Error(), false)
	}
	if req.TimeoutMs > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(req.TimeoutMs)*time.Millisecond)
		defer cancel()
	}
	resp, err := h.LLM.Complete(ctx, &req)
	if err != nil {
		var le *core.LLMError
		if errors.As(err, &le) {
			return api.AppendErrorObject(nil, le.Code, le.Message, le.Retryable)
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return api.AppendErrorObject(nil, core.LLMTimeout, err.Error(), true)
		}
		return api.AppendErrorObject(nil, core.LLMOther, err.Error(), false)
	}
	return api.AppendModelResponse(nil, &resp)
}

func (h *Host) memoryList(ctx context.Context, in []byte) []byte {
	if h.Store == nil {
		return api.AppendErrorObject(nil, "unavailable", "no store configured", false)
	}
	r := gjson.ParseBytes(in)
	tier := r.Get("tier").String()
	if tier == "" {
		tier = "archival"
	}
	blocks, err := h.Store.ListBlocks(ctx, tier, r.Get("label_prefix").String())
	if err != nil {
		return api.AppendErrorObject(nil, "unavailable", "memory_list: "+err.Error(), true)
	}
	return api.AppendBlocks(nil, blocks)
}

func (h *Host) commit(ctx context.Context, in []byte) []byte {
	if h.Store == nil {
		return api.AppendErrorObject(nil, "unavailable", "no store configured", false)
	}
	c, err := api.DecodeCommit(in)
	if err != nil {
		return api.AppendErrorObject(nil, "invalid_request", "compaction_commit: "+err.Error(), false)
	}
	if err := h.Store.Commit(ctx, &c); err != nil {
		if errors.Is(err, core.ErrConflict) || isConflict(err) {
			return api.AppendErrorObject(nil, "conflict", err.Error(), false)
		}
		return api.AppendErrorObject(nil, "unavailable", "compaction_commit: "+err.Error(), false)
	}
	return []byte(`{"ok":true}`)
}

func isConflict(err error) bool {
	var e *core.Error
	return errors.As(err, &e) && e.Code == core.ErrConflict.Code
}
