package llm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/hostfuncs/llm"
)

// Summarize with an OpenAI-compatible server (here a stand-in on
// localhost, as llama.cpp, vLLM or LM Studio would be): the client sends
// core's provider-neutral request in the provider's wire format and reads
// the answer back.
func ExampleNew() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Model    string `json:"model"`
			Messages []struct {
				Role, Content string
			} `json:"messages"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		fmt.Printf("server: %s %s, model %s, %d messages\n", r.Method, r.URL.Path, body.Model, len(body.Messages))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"choices":[{"message":{"role":"assistant","content":"The rental car is picked up at Reno airport."},"finish_reason":"stop"}],
			"usage":{"prompt_tokens":31,"completion_tokens":11}}`)
	}))
	defer srv.Close()

	// No key: a local server needs none (only OpenAI's own endpoint does).
	c, err := llm.New(llm.OpenAICompat, llm.Config{BaseURL: srv.URL + "/v1", Model: "local-model"})
	if err != nil {
		log.Fatal(err)
	}
	resp, err := c.Complete(context.Background(), &core.ModelRequest{
		System:    "Summarize the conversation.",
		Messages:  []core.ModelMessage{{Role: core.RoleUser, Content: "We pick up the rental car at Reno airport, confirmation RX-4471."}},
		MaxTokens: 200,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("summary: %s (%d input tokens)\n", resp.Text(), resp.InputTokens)
	// Output:
	// server: POST /v1/chat/completions, model local-model, 2 messages
	// summary: The rental car is picked up at Reno airport. (31 input tokens)
}
