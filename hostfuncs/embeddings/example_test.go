package embeddings_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/clipfold/clipfold/hostfuncs/embeddings"
)

// Embed texts with an OpenAI-compatible embeddings server (here a
// stand-in on localhost that answers three-number vectors): one vector
// per text, in order.
func ExampleNew() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		fmt.Printf("server: %s %s, model %s, %d texts\n", r.Method, r.URL.Path, body.Model, len(body.Input))
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var out struct {
			Data []item `json:"data"`
		}
		for i, text := range body.Input {
			out.Data = append(out.Data, item{i, []float32{float32(len(text)), 1, 0}})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	}))
	defer srv.Close()

	e, err := embeddings.New(embeddings.OpenAI, embeddings.Config{BaseURL: srv.URL, Model: "nomic-embed-text"})
	if err != nil {
		log.Fatal(err)
	}
	vecs, err := e.Embed(context.Background(), []string{"rental car", "peanut allergy"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(e.Model(), vecs)
	// Output:
	// server: POST /v1/embeddings, model nomic-embed-text, 2 texts
	// nomic-embed-text [[10 1 0] [14 1 0]]
}
