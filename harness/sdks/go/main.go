// Command sdk-go loads a clipfold plug-in with nothing but the Extism Go
// SDK (github.com/extism/go-sdk) and WASI, provides the three host
// functions of docs/spec.md#host-functions scripted from
// harness/sdks/cases.json, and checks the cases there. It is not the
// repository's own host (internal/wasmhost adds staging and pooling); it is
// what a Go user writes from the README.
//
// Usage: go run ./harness/sdks/go CASES_JSON WASM
//
// Output (harness/sdks/README.md): "sdk NAME VERSION", then "ok CASE" or
// "FAIL CASE: why" per case. Exit status 1 when any case failed.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
)

const sdkModule = "github.com/extism/go-sdk"

type hostScript struct {
	LLMDelayMs int             `json:"llm_delay_ms"`
	LLM        json.RawMessage `json:"llm_complete"`
	MemoryList json.RawMessage `json:"memory_list"`
	Commit     json.RawMessage `json:"compaction_commit"`
}

type testCase struct {
	Export      string          `json:"export"`
	Input       json.RawMessage `json:"input"`
	Host        hostScript      `json:"host"`
	Expect      map[string]any  `json:"expect"`
	ErrorPrefix string          `json:"error_prefix"`
}

// host records what the plug-in sent to each host function and answers
// from the script of the case being run.
type host struct {
	script  hostScript
	llm     []map[string]any
	list    []map[string]any
	commits []map[string]any
}

func (h *host) functions() []extism.HostFunction {
	fn := func(name string, answer func(in map[string]any) []byte) extism.HostFunction {
		f := extism.NewHostFunctionWithStack(name,
			func(ctx context.Context, p *extism.CurrentPlugin, stack []uint64) {
				raw, err := p.ReadBytes(stack[0])
				var in map[string]any
				if err == nil {
					err = json.Unmarshal(raw, &in)
				}
				out := []byte(`{"error":{"code":"other","message":"host: bad input","retryable":false}}`)
				if err == nil {
					out = answer(in)
				}
				off, err := p.WriteBytes(out)
				if err != nil {
					panic(err) // the SDK turns this into a trap: the case fails loudly
				}
				stack[0] = off
			},
			[]extism.ValueType{extism.ValueTypePTR}, []extism.ValueType{extism.ValueTypePTR})
		f.SetNamespace("extism:host/user")
		return f
	}
	return []extism.HostFunction{
		fn("llm_complete", func(in map[string]any) []byte {
			h.llm = append(h.llm, in)
			time.Sleep(time.Duration(h.script.LLMDelayMs) * time.Millisecond)
			return h.script.LLM
		}),
		fn("memory_list", func(in map[string]any) []byte {
			h.list = append(h.list, in)
			return h.script.MemoryList
		}),
		fn("compaction_commit", func(in map[string]any) []byte {
			h.commits = append(h.commits, in)
			return h.script.Commit
		}),
	}
}

func sdkVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == sdkModule {
				if d.Replace != nil {
					return d.Replace.Version
				}
				return d.Version
			}
		}
	}
	return "unknown"
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: sdk-go CASES_JSON WASM")
		os.Exit(2)
	}
	raw, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var cases map[string]json.RawMessage
	if err := json.Unmarshal(raw, &cases); err != nil {
		fmt.Fprintln(os.Stderr, "cases:", err)
		os.Exit(2)
	}
	get := func(name string) *testCase {
		var c testCase
		if err := json.Unmarshal(cases[name], &c); err != nil {
			fmt.Fprintln(os.Stderr, "cases:", name, err)
			os.Exit(2)
		}
		return &c
	}

	fmt.Printf("sdk %s %s\n", sdkModule, sdkVersion())
	h := &host{}
	ctx := context.Background()
	manifest := extism.Manifest{Wasm: []extism.Wasm{extism.WasmFile{Path: os.Args[2]}}}
	plugin, err := extism.NewPlugin(ctx, manifest, extism.PluginConfig{
		EnableWasi: true,
		// wazero's default clocks are fake (a fixed wall time, a
		// nanotime that advances 1 ms per read): give the real ones.
		ModuleConfig: wazero.NewModuleConfig().WithSysWalltime().WithSysNanotime(),
	}, h.functions())
	if err != nil {
		fmt.Printf("FAIL load: %v\n", err)
		os.Exit(1)
	}
	defer plugin.Close(ctx)

	call := func(c *testCase) (map[string]any, error) {
		h.script, h.llm, h.list, h.commits = c.Host, nil, nil, nil
		_, out, err := plugin.Call(c.Export, c.Input)
		if err != nil {
			return nil, err
		}
		var res map[string]any
		if err := json.Unmarshal(out, &res); err != nil {
			return nil, fmt.Errorf("output is not a JSON object: %v", err)
		}
		return res, nil
	}

	failed := 0
	report := func(name string, err error) {
		if err != nil {
			failed++
			fmt.Printf("FAIL %s: %v\n", name, err)
		} else {
			fmt.Printf("ok %s\n", name)
		}
	}
	report("split", checkSplit(get("split"), call))
	report("compress", checkCompress(get("compress"), call, h))
	report("invalid", checkInvalid(get("invalid"), call))
	report("deadline", checkDeadline(get("deadline"), call, h))
	if failed > 0 {
		os.Exit(1)
	}
}

type caller func(*testCase) (map[string]any, error)

func ids(v any) []any {
	list, _ := v.([]any)
	out := []any{}
	for _, m := range list {
		obj, _ := m.(map[string]any)
		out = append(out, obj["id"])
	}
	return out
}

func same(what string, got, want any) error {
	if !reflect.DeepEqual(got, want) {
		return fmt.Errorf("%s: got %v, want %v", what, got, want)
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

func checkSplit(c *testCase, call caller) error {
	res, err := call(c)
	if err != nil {
		return err
	}
	return firstErr(
		same("to_compress ids", ids(res["to_compress"]), c.Expect["to_compress"]),
		same("to_keep ids", ids(res["to_keep"]), c.Expect["to_keep"]),
		same("prior_summary", res["prior_summary"], c.Expect["prior_summary"]),
	)
}

func checkCompress(c *testCase, call caller, h *host) error {
	res, err := call(c)
	if err != nil {
		return err
	}
	e := c.Expect
	if err := firstErr(
		same("failed", res["failed"], e["failed"]),
		same("messages_compressed", res["messages_compressed"], e["messages_compressed"]),
		same("batches_created", res["batches_created"], e["batches_created"]),
		same("llm_calls", res["llm_calls"], e["llm_calls"]),
		same("llm_complete calls", float64(len(h.llm)), e["llm_calls"]),
		same("compaction_commit calls", float64(len(h.commits)), e["commits"]),
		same("memory_list calls", len(h.list), 1),
	); err != nil {
		return err
	}
	if err := same("memory_list label_prefix", h.list[0]["label_prefix"], e["label_prefix"]); err != nil {
		return err
	}
	hist, _ := res["history"].([]any)
	if len(hist) == 0 {
		return fmt.Errorf("history is empty")
	}
	first, _ := hist[0].(map[string]any)
	content, _ := first["content"].(string)
	prefix, _ := e["archive_prefix"].(string)
	summary := c.Host.summary()
	switch {
	case first["role"] != "system":
		return fmt.Errorf("history[0].role = %v, want system (the clip-archive)", first["role"])
	case !strings.HasPrefix(content, prefix):
		return fmt.Errorf("history[0].content starts %q, want %q", clip(content, len(prefix)+10), prefix)
	case !strings.Contains(content, summary):
		return fmt.Errorf("history[0].content does not hold the LLM's summary")
	}
	if err := same("kept ids", ids(hist[1:]), e["kept_ids"]); err != nil {
		return err
	}
	commit := h.commits[0]
	removed := strs(commit["remove_message_ids"])
	sort.Strings(removed)
	insert, _ := commit["insert_message"].(map[string]any)
	writes, _ := commit["archive_writes"].([]any)
	return firstErr(
		same("commit conversation_id", commit["conversation_id"], e["conversation_id"]),
		same("commit remove_message_ids (sorted)", removed, strs(e["removed_ids"])),
		same("commit operation_id", commit["operation_id"], res["operation_id"]),
		same("commit insert_message.content", insert["content"], content),
		same("commit archive_writes", len(writes), 1),
	)
}

func checkInvalid(c *testCase, call caller) error {
	res, err := call(c)
	if err == nil {
		return fmt.Errorf("succeeded with %v, want an error starting %q", res, c.ErrorPrefix)
	}
	if !strings.HasPrefix(err.Error(), c.ErrorPrefix) {
		return fmt.Errorf("error %q, want one starting %q", err.Error(), c.ErrorPrefix)
	}
	return nil
}

func checkDeadline(c *testCase, call caller, h *host) error {
	res, err := call(c)
	if err != nil {
		return err
	}
	e := c.Expect
	return firstErr(
		same("failed", res["failed"], e["failed"]),
		same("failure_code", res["failure_code"], e["failure_code"]),
		same("history ids", ids(res["history"]), e["history_ids"]),
		same("llm_complete calls", float64(len(h.llm)), e["llm_calls"]),
		same("compaction_commit calls", float64(len(h.commits)), e["commits"]),
	)
}

func (s hostScript) summary() string {
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	_ = json.Unmarshal(s.LLM, &r)
	if len(r.Content) == 0 {
		return "\x00no summary in the script\x00"
	}
	return r.Content[0].Text
}

func strs(v any) []string {
	list, _ := v.([]any)
	out := []string{}
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
