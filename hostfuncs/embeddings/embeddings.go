// Package embeddings turns texts into embedding vectors, for the semantic half
// of clipfold's search (docs/spec.md#search: when an embeddings
// provider is configured, lexical and vector ranks are fused).
//
//   - openai: OpenAI's POST /v1/embeddings and every server that imitates
//     it (vLLM, llama.cpp server, LM Studio, LocalAI, OpenRouter, …).
//   - ollama: Ollama's native POST /api/embeddings.
//
// An Embedder is safe for concurrent use. Every failure it returns is an
// *Error naming the provider, the URL, the HTTP status and the provider's
// own message, with a code (auth, rate_limit, bad_request, …) and
// whether retrying could help. Callers never need embeddings to succeed:
// the stores fall back to lexical search, and a compaction never waits on
// them (see hostfuncs/store).
package embeddings

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/clipfold/clipfold/internal/providerhttp"
	"github.com/clipfold/clipfold/internal/redact"
)

// Embedder turns texts into vectors, one per text, in order. Every vector
// of one call has the same length. Model names the vectors' space: the
// stores keep vectors per model and never compare two models' vectors.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	Model() string
}

// Provider names New accepts.
const (
	OpenAI = "openai"
	Ollama = "ollama"
)

// Providers lists the names New accepts, in the order help texts show them.
func Providers() []string { return []string{OpenAI, Ollama} }

// Defaults.
const (
	DefaultOpenAIBaseURL = "https://api.openai.com/v1"
	DefaultOllamaBaseURL = "http://localhost:11434"
	// DefaultTimeout bounds each HTTP request (a batch of texts).
	DefaultTimeout = 60 * time.Second
	// DefaultBatchSize is how many texts one request carries at most.
	// OpenAI accepts up to 2,048 inputs per request, but a smaller batch
	// keeps a request's size and time modest and a retry cheap.
	DefaultBatchSize = 64
	// DefaultMaxRetries is how often a request that failed transiently
	// (rate limit, 5xx, connection error, timeout) is sent again.
	DefaultMaxRetries = 2
	// DefaultMaxInputChars cuts each text to this many characters before
	// it is sent: text-embedding-3 reads at most 8,191 tokens, and 6,000
	// characters stay under that even for scripts of one token per
	// character. Search embeds the beginning of a very long message.
	DefaultMaxInputChars = 6000
)

// Config configures an embeddings provider. Model is required; the rest
// is optional.
type Config struct {
	// Model is the embedding model, e.g. "text-embedding-3-small" or
	// "nomic-embed-text".
	Model string
	// BaseURL is the server's root, e.g. "https://api.openai.com/v1",
	// "http://localhost:8080" or "http://localhost:11434". It may or may
	// not end in "/v1": the adapter never doubles it.
	BaseURL string
	// APIKey is the key itself. When empty it is read from the
	// environment variable APIKeyEnv (default OPENAI_API_KEY for openai;
	// ollama reads a key only when APIKeyEnv is set).
	APIKey    string
	APIKeyEnv string
	// Timeout bounds each request (default DefaultTimeout).
	Timeout time.Duration
	// BatchSize caps the texts per request (default DefaultBatchSize).
	BatchSize int
	// MaxRetries caps the retries of a transient failure (default
	// DefaultMaxRetries; negative: none).
	MaxRetries int
	// MaxInputChars cuts longer texts (default DefaultMaxInputChars;
	// negative: no cut).
	MaxInputChars int
	// HTTPClient sends the requests (default: a new http.Client).
	HTTPClient *http.Client
}

// New builds the Embedder for provider.
func New(provider string, cfg Config) (Embedder, error) {
	switch provider {
	case OpenAI:
		return NewOpenAI(cfg)
	case Ollama:
		return NewOllama(cfg)
	}
	return nil, fmt.Errorf("embeddings provider %q: unknown; valid providers are %s", provider, strings.Join(Providers(), ", "))
}

// Error codes.
const (
	CodeAuth        = "auth"         // 401, 403, or no key where one is needed
	CodeRateLimit   = "rate_limit"   // 429 (retryable unless the quota is spent)
	CodeBadRequest  = "bad_request"  // 400, 404, 413, 422: a bad model, input or URL
	CodeUnavailable = "unavailable"  // 5xx, or the server cannot be reached
	CodeTimeout     = "timeout"      // no answer in time
	CodeBadResponse = "bad_response" // a 2xx that is not what the API answers
)

// Error is a failed embeddings request.
type Error struct {
	Provider  string // "openai" or "ollama"
	URL       string // the endpoint (redacted), empty when the request was never sent
	Status    int    // the HTTP status, 0 when there was none
	Code      string // one of the Code… constants
	Message   string // the provider's own message, or what went wrong
	Retryable bool
	err       error // the cause Unwrap returns (ErrBaseURL for a refused base URL), if any
}

// ErrBaseURL is what the *Error of New (or NewOpenAI, NewOllama) wraps
// when it refuses Config.BaseURL: errors.Is(err, ErrBaseURL). It is
// llm.ErrBaseURL too.
var ErrBaseURL = providerhttp.ErrBaseURL

// Unwrap returns the cause of the failure, if there is one beside the
// message.
func (e *Error) Unwrap() error { return e.err }

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("embeddings ")
	b.WriteString(e.Provider)
	if e.URL != "" {
		b.WriteString(" (")
		b.WriteString(e.URL)
		b.WriteString(")")
	}
	b.WriteString(": ")
	b.WriteString(e.Code)
	if e.Status != 0 {
		fmt.Fprintf(&b, ", HTTP %d", e.Status)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	// The provider's message may echo a URL; a URL field set by hand
	// may carry a password.
	return redact.Text(b.String())
}
