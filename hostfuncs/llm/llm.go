// Package llm is the Go host's side of clipfold's llm_complete host
// function (docs/spec.md#host-functions): real LLM adapters behind one small
// interface.
//
//   - anthropic: the Anthropic Messages API.
//   - openai / openai-compat: OpenAI chat completions and everything that
//     speaks it (OpenRouter, vLLM, llama.cpp server, LM Studio, …).
//   - ollama: Ollama's native /api/chat.
//   - extractive: the offline default, core.ExtractiveSummary; no network.
//
// The HTTP bodies are built and read by core.ProviderRequest and
// core.ProviderResponse, the same code the plug-in exports to hosts in
// other languages, so every host sends and understands exactly the same
// bytes. This package only adds what core cannot do: HTTP, keys, URLs,
// deadlines and transport errors.
//
// Every failure a Client returns is a *core.LLMError with an LLM error code
// (docs/spec.md#model-requests-and-responses) and
// a retryable flag, because the compress pipeline decides on retries,
// back-off and re-chunking from those alone.
package llm

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/internal/providerhttp"
)

// Client completes one provider-neutral model request.
//
// A provider failure (HTTP error, error body, timeout, unreachable server)
// is returned as a *core.LLMError; Complete never returns another error
// type, so callers can hand the error to the plug-in as is.
type Client interface {
	Complete(ctx context.Context, req *core.ModelRequest) (core.ModelResponse, error)
}

// Config configures an HTTP adapter. Every field is optional; the zero
// Config talks to the provider's public endpoint with the key from the
// provider's usual environment variable.
type Config struct {
	// BaseURL is the server's root, e.g. "https://api.anthropic.com",
	// "https://openrouter.ai/api/v1" or "http://localhost:11434". It may
	// or may not already end in the API's version segment ("/v1"): the
	// adapter never doubles it.
	BaseURL string
	// APIKey is the key itself. When empty it is read from the environment
	// variable APIKeyEnv.
	APIKey string
	// APIKeyEnv names the environment variable holding the key; it
	// defaults to ANTHROPIC_API_KEY (anthropic) or OPENAI_API_KEY (openai,
	// openai-compat). Ollama reads a key only when APIKey or APIKeyEnv is
	// set (e.g. behind an authenticating proxy).
	APIKeyEnv string
	// Model is used when a request names none.
	Model string
	// Timeout caps each call (default DefaultTimeout). A request's
	// TimeoutMs, the plug-in's remaining deadline, caps it further.
	Timeout time.Duration
	// HTTPClient sends the requests (default: a new http.Client). Its own
	// Timeout, if set, also applies.
	HTTPClient *http.Client
}

// Defaults.
const (
	DefaultAnthropicBaseURL = "https://api.anthropic.com"
	DefaultOpenAIBaseURL    = "https://api.openai.com/v1"
	DefaultOllamaBaseURL    = "http://localhost:11434"
	// AnthropicVersion is the anthropic-version header the Messages API
	// requires; 2023-06-01 is the version the Messages API shipped with.
	AnthropicVersion = "2023-06-01"
	// DefaultTimeout matches the default compaction_timeout
	// (docs/spec.md#config): one call should never outlive a whole compaction.
	DefaultTimeout = 120 * time.Second
)

// Provider names New accepts.
const (
	Anthropic    = "anthropic"
	OpenAI       = "openai"
	OpenAICompat = "openai-compat"
	Ollama       = "ollama"
	Extractive   = "extractive"
)

// Providers lists the names New accepts, in the order help texts show them.
func Providers() []string {
	return []string{Anthropic, OpenAI, OpenAICompat, Ollama, Extractive}
}

// ErrBaseURL is what the error of New (or NewAnthropic, NewOpenAICompat,
// NewOllama) wraps when it refuses Config.BaseURL: errors.Is(err,
// ErrBaseURL). It is embeddings.ErrBaseURL too.
var ErrBaseURL = providerhttp.ErrBaseURL

// New builds the Client for provider. "openai" and "openai-compat" are the
// same adapter; "extractive" ignores cfg.
func New(provider string, cfg Config) (Client, error) {
	switch provider {
	case Anthropic:
		return NewAnthropic(cfg)
	case OpenAI, OpenAICompat:
		return NewOpenAICompat(cfg)
	case Ollama:
		return NewOllama(cfg)
	case Extractive:
		return NewExtractive(), nil
	}
	return nil, fmt.Errorf("llm provider %q: unknown; valid providers are %s",
		provider, strings.Join(Providers(), ", "))
}
