// Package fakellm is an OpenAI-compatible chat completions server that
// stands in for a summarizer in tests and benchmarks: it answers every
// request after a latency (fixed, or drawn from a range), with a short
// summary of what it was sent, and counts the requests it answered.
// Gate holds answers back until a test lets them go.
package fakellm

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Server is the handler; serve it with httptest.NewServer or
// http.Server. The zero value answers at once.
type Server struct {
	// Latency is how long each answer takes; with MaxLatency above it,
	// each takes a duration drawn uniformly from [Latency, MaxLatency].
	Latency, MaxLatency time.Duration
	// Gate, when set, holds each answer until a value is received from
	// it (or the request is cancelled).
	Gate chan struct{}
	// Started, when set, receives the number of each request as it
	// arrives (never blocking: requests beyond its room are not told).
	Started chan int

	calls    atomic.Int64
	answered atomic.Int64
	mu       sync.Mutex
	rng      *rand.Rand
}

// Calls is how many requests arrived; Answered how many were answered.
func (s *Server) Calls() int    { return int(s.calls.Load()) }
func (s *Server) Answered() int { return int(s.answered.Load()) }

func (s *Server) latency() time.Duration {
	if s.MaxLatency <= s.Latency {
		return s.Latency
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rng == nil {
		s.rng = rand.New(rand.NewPCG(1, 2))
	}
	return s.Latency + time.Duration(s.rng.Int64N(int64(s.MaxLatency-s.Latency)+1))
}

// ServeHTTP answers POST …/chat/completions.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	n := int(s.calls.Add(1))
	if s.Started != nil {
		select {
		case s.Started <- n:
		default:
		}
	}
	var req struct {
		MaxTokens           int `json:"max_tokens"`
		MaxCompletionTokens int `json:"max_completion_tokens"`
		Messages            []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	body, err := io.ReadAll(r.Body)
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err != nil {
		http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
		return
	}
	if s.Gate != nil {
		select {
		case <-s.Gate:
		case <-r.Context().Done():
			return
		}
	}
	select {
	case <-time.After(s.latency()):
	case <-r.Context().Done():
		return
	}
	// A summary that says what it was sent: the request's messages and
	// the first words of the longest one.
	longest := ""
	for _, m := range req.Messages {
		if t, ok := m.Content.(string); ok && len(t) > len(longest) && m.Role != "system" {
			longest = t
		}
	}
	words := strings.Fields(longest)
	if len(words) > 24 {
		words = words[:24]
	}
	text := fmt.Sprintf("Summary of %d request messages (answer %d): %s", len(req.Messages), n, strings.Join(words, " "))
	// As a model does, it stops at max_tokens (counted here as two
	// characters a token: under any tokenizer's count of this text).
	if limit := max(req.MaxTokens, req.MaxCompletionTokens); limit > 0 && len(text) > 2*limit {
		text = strings.ToValidUTF8(text[:2*limit], "")
	}
	out, _ := json.Marshal(map[string]any{
		"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": text}, "finish_reason": "stop"}},
		"usage":   map[string]any{"prompt_tokens": len(body) / 4, "completion_tokens": len(text) / 4},
	})
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
	s.answered.Add(1)
}
