package llm

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/internal/providerhttp"
	"github.com/clipfold/clipfold/internal/redact"
	"github.com/clipfold/clipfold/internal/samehost"
)

// maxResponseBytes bounds what is read from a provider: a summary is a few
// KB, and a misbehaving server must not exhaust the host's memory.
const maxResponseBytes = 16 << 20

// httpClient is the one HTTP adapter; the providers differ only in the
// wire format (core's), the headers and the defaults. It is immutable once
// built, so one value serves concurrent compactions.
type httpClient struct {
	name      string // as given to New, for messages
	wire      string // core.ProviderAnthropic, ProviderOpenAI or ProviderOllama
	base      string // no trailing "/"
	header    http.Header
	model     string
	needModel bool // the provider rejects a request without a model
	timeout   time.Duration
	// http follows only redirects that keep the request on the base URL's
	// host and keep its method and body (package samehost): the key and
	// the conversation never go anywhere else.
	http *http.Client
}

// NewAnthropic returns the Anthropic Messages API adapter. It needs a key:
// without one (Config.APIKey, or the variable APIKeyEnv, default
// ANTHROPIC_API_KEY) it fails here with an auth error naming the variable,
// rather than on the first compaction.
func NewAnthropic(cfg Config) (Client, error) {
	c, err := newHTTP(Anthropic, core.ProviderAnthropic, cfg, DefaultAnthropicBaseURL)
	if err != nil {
		return nil, err
	}
	key, env := providerhttp.Key(cfg.APIKey, cfg.APIKeyEnv, "ANTHROPIC_API_KEY")
	if key == "" {
		return nil, missingKey(Anthropic, env)
	}
	c.header.Set("x-api-key", key)
	c.header.Set("anthropic-version", AnthropicVersion)
	c.needModel = true
	return c, nil
}

// NewOpenAICompat returns the chat-completions adapter for OpenAI and the
// servers that imitate it. The key (Config.APIKey, or APIKeyEnv, default
// OPENAI_API_KEY) is sent as a Bearer token only when there is one: local
// servers (llama.cpp, LM Studio, vLLM) usually need none. Only the real
// OpenAI endpoint, which always needs one, fails without a key.
func NewOpenAICompat(cfg Config) (Client, error) {
	c, err := newHTTP(OpenAICompat, core.ProviderOpenAI, cfg, DefaultOpenAIBaseURL)
	if err != nil {
		return nil, err
	}
	key, env := providerhttp.Key(cfg.APIKey, cfg.APIKeyEnv, "OPENAI_API_KEY")
	if key != "" {
		c.header.Set("Authorization", "Bearer "+key)
	} else if providerhttp.IsOpenAI(c.base) {
		return nil, missingKey(OpenAI, env)
	}
	return c, nil
}

// NewOllama returns the adapter for Ollama's native /api/chat (not its
// OpenAI-compatible /v1, which openai-compat covers). Ollama needs no key;
// one is sent as a Bearer token only when Config.APIKey or APIKeyEnv is
// set, for servers behind an authenticating proxy.
func NewOllama(cfg Config) (Client, error) {
	// A base URL copied from an OpenAI-compatible setup ends in "/v1",
	// which the native API does not have.
	cfg.BaseURL = strings.TrimSuffix(strings.TrimRight(cfg.BaseURL, "/"), "/v1")
	c, err := newHTTP(Ollama, core.ProviderOllama, cfg, DefaultOllamaBaseURL)
	if err != nil {
		return nil, err
	}
	if key, _ := providerhttp.Key(cfg.APIKey, cfg.APIKeyEnv, ""); key != "" {
		c.header.Set("Authorization", "Bearer "+key)
	}
	c.needModel = true
	return c, nil
}

func newHTTP(name, wire string, cfg Config, defaultBase string) (*httpClient, error) {
	base, err := providerhttp.BaseURL(cfg.BaseURL, defaultBase)
	if err != nil {
		return nil, fmt.Errorf("llm %s: BaseURL %w", name, err)
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("llm %s: Timeout %s: must not be negative", name, cfg.Timeout)
	}
	c := &httpClient{
		name:    name,
		wire:    wire,
		base:    base,
		header:  providerhttp.Header(),
		model:   cfg.Model,
		timeout: cfg.Timeout,
		http:    samehost.Client(cfg.HTTPClient),
	}
	if c.timeout == 0 {
		c.timeout = DefaultTimeout
	}
	return c, nil
}

func missingKey(provider, env string) *core.LLMError {
	return &core.LLMError{
		Code:    core.LLMAuth,
		Message: provider + ": no API key: set the environment variable " + env + " (or Config.APIKey)",
	}
}

// endpoint joins the base URL and core's path without doubling a version
// segment: "https://openrouter.ai/api/v1" + "/v1/chat/completions" is
// ".../api/v1/chat/completions", and "http://localhost:8080" +
// "/v1/chat/completions" keeps its "/v1".
func endpoint(base, path string) string {
	if i := strings.IndexByte(path[1:], '/'); i >= 0 {
		if seg := path[:i+1]; strings.HasSuffix(base, seg) {
			path = path[len(seg):]
		}
	}
	return base + path
}

// Complete sends req to the provider. The call is bounded by the smallest
// of ctx's deadline, the configured Timeout and req.TimeoutMs (the time
// the plug-in has left): a call must never outlive its compaction.
func (c *httpClient) Complete(ctx context.Context, req *core.ModelRequest) (core.ModelResponse, error) {
	if req == nil {
		return core.ModelResponse{}, &core.LLMError{Code: core.LLMInvalidRequest, Message: "request: missing"}
	}
	r := *req
	if r.Model == "" {
		r.Model = c.model
	}
	if r.Model == "" && c.needModel {
		return core.ModelResponse{}, &core.LLMError{Code: core.LLMInvalidRequest,
			Message: c.name + ": model: not set (set the request's model, the [summarization] model key, or Config.Model)"}
	}
	path, body, err := core.ProviderRequest(c.wire, &r)
	if err != nil {
		return core.ModelResponse{}, &core.LLMError{Code: core.LLMInvalidRequest, Message: c.name + ": " + err.Error()}
	}
	target := endpoint(c.base, path)
	shown := redact.URL(target) // what messages say: no password, no key

	timeout := c.timeout
	if r.TimeoutMs > 0 {
		if d := time.Duration(r.TimeoutMs) * time.Millisecond; d < timeout {
			timeout = d
		}
	}
	if dl, ok := ctx.Deadline(); ok {
		if d := time.Until(dl); d < timeout {
			timeout = d.Round(time.Millisecond) // for the message only
		}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return core.ModelResponse{}, &core.LLMError{Code: core.LLMInvalidRequest, Message: c.name + ": " + shown + ": " + redact.Text(err.Error())}
	}
	hreq.Header = c.header.Clone()
	resp, err := c.http.Do(hreq)
	if err != nil {
		return core.ModelResponse{}, c.transportError(ctx, err, shown, timeout)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return core.ModelResponse{}, c.transportError(ctx, err, shown, timeout)
	}
	if len(data) > maxResponseBytes {
		return core.ModelResponse{}, &core.LLMError{Code: core.LLMOther,
			Message: c.name + ": response from " + shown + " is larger than " + strconv.Itoa(maxResponseBytes) + " bytes"}
	}
	out, llmErr, err := core.ProviderResponse(c.wire, resp.StatusCode, data)
	if llmErr != nil {
		llmErr.Message = redact.Text(llmErr.Message) // a provider may echo the URL it was asked
		return core.ModelResponse{}, llmErr
	}
	if err != nil {
		// A 2xx that is not the provider's format: a misconfigured base URL
		// or proxy. Retrying the same request will not fix it.
		return core.ModelResponse{}, &core.LLMError{Code: core.LLMOther,
			Message: c.name + ": unexpected response from " + shown + ": " + err.Error()}
	}
	return out, nil
}

// transportError maps an error of the HTTP exchange itself. A deadline is
// a timeout (the pipeline re-chunks smaller); a server that cannot be
// reached is unavailable (worth retrying: it may be restarting). Both name
// the URL (redacted), because a wrong base URL is the usual cause. A
// redirect the client refused is neither: the base URL is wrong, and
// sending the request again will not change that.
func (c *httpClient) transportError(ctx context.Context, err error, target string, timeout time.Duration) *core.LLMError {
	var re *samehost.RedirectError
	if errors.As(err, &re) {
		return &core.LLMError{Code: core.LLMOther, Message: c.name + ": " + re.Error()}
	}
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) ||
		(errors.As(err, &ne) && ne.Timeout()):
		return &core.LLMError{Code: core.LLMTimeout, Retryable: true,
			Message: c.name + ": no response from " + target + " within " + timeout.String()}
	case errors.Is(err, context.Canceled):
		return &core.LLMError{Code: core.LLMOther, Message: c.name + ": request to " + target + " canceled"}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // its text repeats the method and URL
	}
	why := redact.Text(err.Error())
	var cv *tls.CertificateVerificationError
	if errors.As(err, &cv) {
		// A certificate problem does not go away by retrying.
		return &core.LLMError{Code: core.LLMUnavailable, Message: c.name + ": cannot reach " + target + ": " + why}
	}
	return &core.LLMError{Code: core.LLMUnavailable, Retryable: true,
		Message: c.name + ": cannot reach " + target + ": " + why}
}
