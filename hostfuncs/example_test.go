package hostfuncs_test

import (
	"context"
	"fmt"
	"log"

	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/hostfuncs"
)

// echoLLM is a Go program's own LLM: anything with Complete will do.
type echoLLM struct{}

func (echoLLM) Complete(_ context.Context, req *core.ModelRequest) (core.ModelResponse, error) {
	text := "summary of " + fmt.Sprint(len(req.Messages)) + " message(s): " + req.Messages[0].Content
	return core.ModelResponse{Content: []core.ContentBlock{{Type: "text", Text: text}}, StopReason: "end_turn"}, nil
}

// A Host answers the plug-in's host-function calls with the program's own
// LLM and store (none here); Bind(h) gives the Extism host functions of
// the same Host. Called directly, it shows the JSON the plug-in sends and
// gets back.
func ExampleHost_CallHost() {
	h := &hostfuncs.Host{LLM: echoLLM{}}
	out, err := h.CallHost("llm_complete", []byte(`{"system":"Summarize.","messages":[{"role":"user","content":"We pick up the car at Reno airport."}],"max_tokens":100}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(out))
	out, _ = h.CallHost("memory_list", []byte(`{"tier":"archival"}`))
	fmt.Println(string(out))
	// Output:
	// {"content":[{"type":"text","text":"summary of 1 message(s): We pick up the car at Reno airport."}],"stop_reason":"end_turn","usage":{"input_tokens":0,"output_tokens":0}}
	// {"error":{"code":"unavailable","message":"no store configured","retryable":false}}
}
