// Package embeddingstest is a deterministic embeddings server for tests: a real
// HTTP server (httptest) speaking OpenAI's POST /v1/embeddings and
// Ollama's POST /api/embed, whose vectors put words of one synonym group
// ("car", "automobile", "vehicle") on the same axis, so a paraphrase with
// no word in common with its answer still lands close to it — what a
// real embedding model does, without a model. Faults (error statuses,
// out-of-order answers) are injected on demand.
package embeddingstest

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/clipfold/clipfold/hostfuncs/embeddings"
)

// DefaultDims is the vectors' length unless Server.Dims says otherwise.
const DefaultDims = 256

// Groups are the synonym groups: every word of a group maps to the
// group's first word before hashing.
var Groups = [][]string{
	{"car", "automobile", "vehicle", "auto", "sedan"},
	{"repair", "fix", "mend", "service", "overhaul"},
	{"garage", "workshop", "mechanic"},
	{"doctor", "physician", "clinic", "gp"},
	{"appointment", "booking", "reservation", "slot"},
	{"cancel", "abort", "scrap"},
	{"buy", "purchase", "order", "acquire"},
	{"cheap", "inexpensive", "affordable", "budget"},
	{"deploy", "release", "ship", "rollout", "launch"},
	{"fail", "crash", "outage", "broken", "down", "failure"},
	{"database", "postgres", "postgresql", "db", "datastore"},
	{"money", "cost", "price", "expense", "fee"},
	{"trip", "travel", "journey", "vacation", "holiday"},
	{"dog", "puppy", "hound", "pet"},
	{"big", "large", "huge", "enormous"},
	{"start", "begin", "commence"},
	{"finish", "end", "complete", "done"},
	{"week", "weekend", "friday", "monday", "saturday", "sunday"},
	{"birthday", "anniversary", "celebration", "party"},
	{"allergy", "allergic", "intolerance"},
	{"peanut", "nut", "groundnut"},
}

var canon = func() map[string]string {
	m := map[string]string{}
	for _, g := range Groups {
		for _, w := range g {
			m[w] = g[0]
		}
	}
	return m
}()

var stop = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the is are was were be been being am do does did doing have has had will would
shall should can could may might must i you he she it we they me him her us them my your his its our their this that
these those what which who whom when where why how of in on at to for from by with about as into over under again
and or but if then so not no yes please thanks thank just also very there here all any some`) {
		stop[w] = true
	}
}

// term maps a word to what is hashed: its synonym group when it (or the
// word less a common suffix) has one, else the word less a plural "s".
func term(w string) string {
	for _, suf := range []string{"", "s", "es", "ed", "d", "ing"} {
		if strings.HasSuffix(w, suf) {
			if c, ok := canon[strings.TrimSuffix(w, suf)]; ok {
				return c
			}
		}
	}
	if len(w) > 3 {
		w = strings.TrimSuffix(w, "s")
	}
	return w
}

// Vector is the deterministic embedding of text in model's space: every
// word (stop words dropped) adds ±1 on an axis picked by hashing the model
// and the word's term; the result has unit length. Two models give
// unrelated vectors for the same text. A text of stop words only is
// embedded by its stop words; a text with no word at all, by itself.
func Vector(model, text string, dims int) []float32 {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	var terms []string
	for _, w := range words {
		if !stop[w] {
			terms = append(terms, term(w))
		}
	}
	if len(terms) == 0 {
		terms = words
	}
	if len(terms) == 0 {
		terms = []string{text}
	}
	v := make([]float64, dims)
	for _, t := range terms {
		h := fnv.New64a()
		_, _ = io.WriteString(h, model+"\x00"+t)
		x := h.Sum64()
		sign := 1.0
		if x>>63 == 1 {
			sign = -1
		}
		v[int(x%uint64(dims))] += sign
	}
	var n float64
	for _, x := range v {
		n += x * x
	}
	n = math.Sqrt(n)
	out := make([]float32, dims)
	for i, x := range v {
		out[i] = float32(x / n)
	}
	return out
}

// Server is the embeddings server. Its methods are safe for concurrent use.
type Server struct {
	*httptest.Server
	Dims int // vector length (DefaultDims)

	mu       sync.Mutex
	requests [][]string
	failN    int // fail this many requests (-1: all)
	status   int
	body     string
	failIf   func(texts []string) bool
}

// NewServer starts a server, closed when the test ends.
func NewServer(t testing.TB) *Server {
	s := &Server{Dims: DefaultDims}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	t.Cleanup(s.Close)
	return s
}

// Embedder is an OpenAI-wire client of this server for model.
func (s *Server) Embedder(t testing.TB, model string) embeddings.Embedder {
	t.Helper()
	e, err := embeddings.NewOpenAI(embeddings.Config{BaseURL: s.URL, Model: model, APIKey: "sk-test", MaxRetries: -1})
	if err != nil {
		t.Fatalf("embeddingstest: %v", err)
	}
	return e
}

// Fail makes the next n requests (n < 0: every request until Heal) answer
// status with body (an OpenAI error object when body is "").
func (s *Server) Fail(n, status int, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if body == "" {
		body = fmt.Sprintf(`{"error":{"message":"injected failure %d","type":"server_error","param":null,"code":null}}`, status)
	}
	s.failN, s.status, s.body = n, status, body
}

// FailIf makes every request whose texts satisfy pred answer status (an
// OpenAI error object), until Heal.
func (s *Server) FailIf(pred func(texts []string) bool, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failIf, s.status = pred, status
	s.body = fmt.Sprintf(`{"error":{"message":"injected failure %d","type":"server_error","param":null,"code":null}}`, status)
}

// Heal ends Fail and FailIf.
func (s *Server) Heal() {
	s.Fail(0, 0, "")
	s.mu.Lock()
	s.failIf = nil
	s.mu.Unlock()
}

// Requests returns the texts of every request answered so far (failed
// ones included), in order.
func (s *Server) Requests() [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([][]string, len(s.requests))
	copy(out, s.requests)
	return out
}

// Texts returns every text sent so far, in order.
func (s *Server) Texts() []string {
	var out []string
	for _, r := range s.Requests() {
		out = append(out, r...)
	}
	return out
}

// Reset forgets the requests seen so far.
func (s *Server) Reset() {
	s.mu.Lock()
	s.requests = nil
	s.mu.Unlock()
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	ollama := r.URL.Path == "/api/embed"
	if r.Method != http.MethodPost || (r.URL.Path != "/v1/embeddings" && !ollama) {
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"error":{"message":"no such endpoint","type":"invalid_request_error"}}`)
		return
	}
	var req struct {
		Model string          `json:"model"`
		Input json.RawMessage `json:"input"`
	}
	var texts []string
	err := json.NewDecoder(r.Body).Decode(&req)
	if err == nil {
		var one string
		if json.Unmarshal(req.Input, &one) == nil {
			texts = []string{one}
		} else {
			err = json.Unmarshal(req.Input, &texts)
		}
	}
	s.mu.Lock()
	s.requests = append(s.requests, texts)
	fail := s.failN != 0 || (s.failIf != nil && s.failIf(texts))
	if s.failN > 0 {
		s.failN--
	}
	status, body := s.status, s.body
	dims := s.Dims
	s.mu.Unlock()
	switch {
	case fail:
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
		return
	case err != nil || req.Model == "" || len(texts) == 0:
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":{"message":"'$.input' or '$.model' is invalid","type":"invalid_request_error","param":null,"code":null}}`)
		return
	}
	if ollama {
		vs := make([][]float32, len(texts))
		for i, t := range texts {
			vs[i] = Vector(req.Model, t, dims)
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"model": req.Model, "embeddings": vs})
		return
	}
	// The data in reverse order: clients must order by index.
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	data := make([]item, len(texts))
	for i, t := range texts {
		data[len(texts)-1-i] = item{Object: "embedding", Index: i, Embedding: Vector(req.Model, t, dims)}
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model,
		"usage": map[string]int{"prompt_tokens": len(texts), "total_tokens": len(texts)}})
}
