package llm

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/clipfold/clipfold/core"
)

// seen is what a fake provider received.
type seen struct {
	method string
	path   string
	header http.Header
	body   map[string]any
}

// fakeProvider answers every request with status and body, recording the
// request for the test to check field by field.
func fakeProvider(t *testing.T, status int, body string) (*httptest.Server, *seen) {
	t.Helper()
	got := &seen{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.method = r.Method
		got.path = r.URL.Path
		got.header = r.Header.Clone()
		raw, err := io.ReadAll(r.Body)
		assert.NoError(t, err)
		assert.NoError(t, json.Unmarshal(raw, &got.body), "request body must be JSON: %s", raw)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

// summarizationRequest is shaped like the pipeline's (seed 000): a prompt,
// the previous summary as a system message, the conversation, the
// directive, temperature 0.
func summarizationRequest() *core.ModelRequest {
	return &core.ModelRequest{
		System: "You summarize.",
		Messages: []core.ModelMessage{
			{Role: core.RoleSystem, Content: "Previous summary of conversation:\nS0"},
			{Role: core.RoleUser, Content: "Why does the build fail?"},
			{Role: core.RoleAssistant, Content: "A missing import."},
			{Role: core.RoleSystem, Content: "Pinned instruction"},
			{Role: core.RoleUser, Content: "Summarize the conversation above."},
		},
		MaxTokens:   300,
		Temperature: 0,
	}
}

func msgs(v any) []map[string]any {
	list, _ := v.([]any)
	out := make([]map[string]any, 0, len(list))
	for _, m := range list {
		mm, _ := m.(map[string]any)
		out = append(out, mm)
	}
	return out
}

func msg(role, content string) map[string]any {
	return map[string]any{"role": role, "content": content}
}

func requireLLMError(t *testing.T, err error, code string, retryable bool) *core.LLMError {
	t.Helper()
	var le *core.LLMError
	require.ErrorAs(t, err, &le, "want *core.LLMError, got %T %v", err, err)
	assert.Equal(t, code, le.Code, "message: %s", le.Message)
	assert.Equal(t, retryable, le.Retryable)
	return le
}

const anthropicOK = `{"id":"msg_013Zva2CMHLNnXjNJJKqJ2EF","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929",
"content":[{"type":"text","text":"The build failed for a missing import."}],"stop_reason":"end_turn","stop_sequence":null,
"usage":{"input_tokens":2095,"output_tokens":503}}`

func TestAnthropicRequestAndResponse(t *testing.T) {
	for _, base := range []string{"", "/", "/v1", "/v1/"} {
		t.Run("base suffix "+base, func(t *testing.T) {
			srv, got := fakeProvider(t, 200, anthropicOK)
			c, err := New("anthropic", Config{BaseURL: srv.URL + base, APIKey: "sk-ant-test", Model: "claude-sonnet-4-5"})
			require.NoError(t, err)

			resp, err := c.Complete(context.Background(), summarizationRequest())
			require.NoError(t, err)
			assert.Equal(t, core.ModelResponse{
				Content:     []core.ContentBlock{{Type: "text", Text: "The build failed for a missing import."}},
				StopReason:  "end_turn",
				InputTokens: 2095, OutputTokens: 503,
			}, resp)

			assert.Equal(t, http.MethodPost, got.method)
			assert.Equal(t, "/v1/messages", got.path)
			assert.Equal(t, "sk-ant-test", got.header.Get("x-api-key"))
			assert.Equal(t, "2023-06-01", got.header.Get("anthropic-version"))
			assert.Equal(t, "application/json", got.header.Get("content-type"))
			assert.Empty(t, got.header.Get("Authorization"))

			assert.Equal(t, "claude-sonnet-4-5", got.body["model"], "Config.Model fills a request without one")
			assert.Equal(t, 300.0, got.body["max_tokens"])
			assert.Equal(t, 0.0, got.body["temperature"])
			// compaction-v2.AC2.2, AC2.4: every system-role message lifted
			// into system, after request.system, joined by "\n\n".
			assert.Equal(t, "You summarize.\n\nPrevious summary of conversation:\nS0\n\nPinned instruction", got.body["system"])
			assert.Equal(t, []map[string]any{
				msg("user", "Why does the build fail?"),
				msg("assistant", "A missing import."),
				msg("user", "Summarize the conversation above."),
			}, msgs(got.body["messages"]))
		})
	}
}

func TestAnthropicRequestModelWins(t *testing.T) {
	srv, got := fakeProvider(t, 200, anthropicOK)
	c, err := NewAnthropic(Config{BaseURL: srv.URL, APIKey: "k", Model: "config-model"})
	require.NoError(t, err)
	req := summarizationRequest()
	req.Model = "request-model"
	_, err = c.Complete(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, "request-model", got.body["model"])
	assert.Equal(t, "", summarizationRequest().Model, "the caller's request is not modified")
}

func TestAnthropicKey(t *testing.T) {
	t.Run("from ANTHROPIC_API_KEY", func(t *testing.T) {
		t.Setenv("ANTHROPIC_API_KEY", "sk-from-env")
		srv, got := fakeProvider(t, 200, anthropicOK)
		c, err := NewAnthropic(Config{BaseURL: srv.URL, Model: "m"})
		require.NoError(t, err)
		_, err = c.Complete(context.Background(), summarizationRequest())
		require.NoError(t, err)
		assert.Equal(t, "sk-from-env", got.header.Get("x-api-key"))
	})
	t.Run("from APIKeyEnv", func(t *testing.T) {
		t.Setenv("ANTHROPIC_API_KEY", "")
		t.Setenv("CLIPFOLD_TEST_KEY", "sk-custom")
		srv, got := fakeProvider(t, 200, anthropicOK)
		c, err := NewAnthropic(Config{BaseURL: srv.URL, APIKeyEnv: "CLIPFOLD_TEST_KEY", Model: "m"})
		require.NoError(t, err)
		_, err = c.Complete(context.Background(), summarizationRequest())
		require.NoError(t, err)
		assert.Equal(t, "sk-custom", got.header.Get("x-api-key"))
	})
	t.Run("missing: auth error naming the variable", func(t *testing.T) {
		t.Setenv("ANTHROPIC_API_KEY", "")
		_, err := New("anthropic", Config{})
		le := requireLLMError(t, err, core.LLMAuth, false)
		assert.Contains(t, le.Message, "ANTHROPIC_API_KEY")

		t.Setenv("CLIPFOLD_TEST_KEY", "")
		_, err = New("anthropic", Config{APIKeyEnv: "CLIPFOLD_TEST_KEY"})
		le = requireLLMError(t, err, core.LLMAuth, false)
		assert.Contains(t, le.Message, "CLIPFOLD_TEST_KEY")
	})
}

func TestMissingModel(t *testing.T) {
	srv, got := fakeProvider(t, 200, anthropicOK)
	for _, p := range []string{"anthropic", "ollama"} {
		c, err := New(p, Config{BaseURL: srv.URL, APIKey: "k"})
		require.NoError(t, err)
		_, err = c.Complete(context.Background(), summarizationRequest())
		le := requireLLMError(t, err, core.LLMInvalidRequest, false)
		assert.Contains(t, le.Message, "model")
	}
	assert.Empty(t, got.path, "nothing was sent")
}

const openAIOK = `{"id":"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT","object":"chat.completion","created":1741569952,"model":"gpt-4.1-2025-04-14",
"choices":[{"index":0,"message":{"role":"assistant","content":"A missing import broke the build.","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],
"usage":{"prompt_tokens":19,"completion_tokens":10,"total_tokens":29},"service_tier":"default"}`

func TestOpenAICompatRequestAndResponse(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	tests := []struct {
		name, provider, suffix, key string
	}{
		{"openai base with /v1 and key", "openai", "/v1", "sk-test"},
		{"openrouter-style base /api/v1/", "openai-compat", "/api/v1/", "sk-or-test"},
		{"llama.cpp base without /v1, no key", "openai-compat", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, got := fakeProvider(t, 200, openAIOK)
			c, err := New(tc.provider, Config{BaseURL: srv.URL + tc.suffix, APIKey: tc.key})
			require.NoError(t, err)
			req := summarizationRequest()
			req.Model = "gpt-4o-mini"
			resp, err := c.Complete(context.Background(), req)
			require.NoError(t, err)
			assert.Equal(t, core.ModelResponse{
				Content:     []core.ContentBlock{{Type: "text", Text: "A missing import broke the build."}},
				StopReason:  "end_turn",
				InputTokens: 19, OutputTokens: 10,
			}, resp)

			wantPath := strings.TrimSuffix(strings.TrimSuffix(tc.suffix, "/"), "/v1") + "/v1/chat/completions"
			assert.Equal(t, wantPath, got.path, "no /v1/v1")
			assert.Equal(t, "application/json", got.header.Get("Content-Type"))
			if tc.key != "" {
				assert.Equal(t, "Bearer "+tc.key, got.header.Get("Authorization"))
			} else {
				assert.NotContains(t, got.header, "Authorization")
			}
			assert.Empty(t, got.header.Get("x-api-key"))
			assert.Equal(t, "gpt-4o-mini", got.body["model"])
			assert.Equal(t, 300.0, got.body["max_tokens"])
			assert.Equal(t, 0.0, got.body["temperature"])
			assert.NotContains(t, got.body, "system")
			// compaction-v2.AC2.3: system first, system-role messages in place.
			assert.Equal(t, []map[string]any{
				msg("system", "You summarize."),
				msg("system", "Previous summary of conversation:\nS0"),
				msg("user", "Why does the build fail?"),
				msg("assistant", "A missing import."),
				msg("system", "Pinned instruction"),
				msg("user", "Summarize the conversation above."),
			}, msgs(got.body["messages"]))
		})
	}
}

func TestOpenAIKeyFromEnv(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-env")
	srv, got := fakeProvider(t, 200, openAIOK)
	c, err := NewOpenAICompat(Config{BaseURL: srv.URL})
	require.NoError(t, err)
	_, err = c.Complete(context.Background(), summarizationRequest())
	require.NoError(t, err)
	assert.Equal(t, "Bearer sk-env", got.header.Get("Authorization"))

	t.Setenv("OPENAI_API_KEY", "")
	_, err = New("openai", Config{})
	le := requireLLMError(t, err, core.LLMAuth, false)
	assert.Contains(t, le.Message, "OPENAI_API_KEY", "the real OpenAI endpoint needs a key")
}

const ollamaOK = `{"model":"llama3.2","created_at":"2023-12-12T14:13:43.416799Z","message":{"role":"assistant","content":"A missing import."},
"done":true,"done_reason":"stop","total_duration":5191566416,"load_duration":2154458,"prompt_eval_count":26,
"prompt_eval_duration":383809000,"eval_count":298,"eval_duration":4799921000}`

func TestOllamaRequestAndResponse(t *testing.T) {
	for _, suffix := range []string{"", "/", "/v1"} {
		t.Run("base suffix "+suffix, func(t *testing.T) {
			srv, got := fakeProvider(t, 200, ollamaOK)
			c, err := New("ollama", Config{BaseURL: srv.URL + suffix, Model: "llama3.2"})
			require.NoError(t, err)
			resp, err := c.Complete(context.Background(), summarizationRequest())
			require.NoError(t, err)
			assert.Equal(t, core.ModelResponse{
				Content:     []core.ContentBlock{{Type: "text", Text: "A missing import."}},
				StopReason:  "end_turn",
				InputTokens: 26, OutputTokens: 298,
			}, resp)

			assert.Equal(t, "/api/chat", got.path)
			assert.NotContains(t, got.header, "Authorization")
			assert.Equal(t, "llama3.2", got.body["model"])
			assert.Equal(t, false, got.body["stream"])
			assert.Equal(t, map[string]any{"temperature": 0.0, "num_predict": 300.0}, got.body["options"])
			assert.Equal(t, []map[string]any{
				msg("system", "You summarize."),
				msg("system", "Previous summary of conversation:\nS0"),
				msg("user", "Why does the build fail?"),
				msg("assistant", "A missing import."),
				msg("system", "Pinned instruction"),
				msg("user", "Summarize the conversation above."),
			}, msgs(got.body["messages"]))
		})
	}
}

func TestProviderErrors(t *testing.T) {
	tests := []struct {
		name, provider string
		status         int
		body           string
		code           string
		retryable      bool
		message        string
	}{
		{"anthropic 429 rate_limit_error", "anthropic", 429,
			`{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization of 50,000 input tokens per minute."},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`,
			core.LLMRateLimited, true, "This request would exceed the rate limit for your organization of 50,000 input tokens per minute."},
		{"anthropic 529 overloaded_error", "anthropic", 529,
			`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_1"}`,
			core.LLMUnavailable, true, "Overloaded"},
		{"anthropic 400 prompt is too long", "anthropic", 400,
			`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210944 tokens > 200000 maximum"}}`,
			core.LLMContextOverflow, false, "prompt is too long: 210944 tokens > 200000 maximum"},
		{"anthropic 401 authentication_error", "anthropic", 401,
			`{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`,
			core.LLMAuth, false, "invalid x-api-key"},
		{"openai 400 context_length_exceeded", "openai", 400,
			`{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`,
			core.LLMContextOverflow, false, "This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. Please reduce the length of the messages."},
		{"openai 401 invalid_api_key", "openai", 401,
			`{"error":{"message":"Incorrect API key provided: sk-abc***xyz. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
			core.LLMAuth, false, "Incorrect API key provided: sk-abc***xyz. You can find your API key at https://platform.openai.com/account/api-keys."},
		{"openai 500 server_error", "openai", 500,
			`{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`,
			core.LLMUnavailable, true, "The server had an error while processing your request. Sorry about that!"},
		{"ollama 404 model not found", "ollama", 404,
			`{"error":"model \"llama3.2\" not found, try pulling it first"}`,
			core.LLMInvalidRequest, false, `model "llama3.2" not found, try pulling it first`},
		{"ollama 500", "ollama", 500,
			`{"error":"llama runner process has terminated: exit status 2"}`,
			core.LLMUnavailable, true, "llama runner process has terminated: exit status 2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := fakeProvider(t, tc.status, tc.body)
			c, err := New(tc.provider, Config{BaseURL: srv.URL, APIKey: "k", Model: "m"})
			require.NoError(t, err)
			_, err = c.Complete(context.Background(), summarizationRequest())
			le := requireLLMError(t, err, tc.code, tc.retryable)
			assert.Equal(t, tc.message, le.Message)
		})
	}
}

func TestMalformedSuccess(t *testing.T) {
	srv, _ := fakeProvider(t, 200, `<html>captive portal</html>`)
	c, err := New("openai-compat", Config{BaseURL: srv.URL})
	require.NoError(t, err)
	_, err = c.Complete(context.Background(), summarizationRequest())
	le := requireLLMError(t, err, core.LLMOther, false)
	assert.Contains(t, le.Message, srv.URL+"/v1/chat/completions")

	srv2, _ := fakeProvider(t, 200, `{"id":"x","object":"list","data":[]}`)
	c, err = New("openai-compat", Config{BaseURL: srv2.URL})
	require.NoError(t, err)
	_, err = c.Complete(context.Background(), summarizationRequest())
	le = requireLLMError(t, err, core.LLMOther, false)
	assert.Contains(t, le.Message, "body.choices")
}

// slowServer holds every request until the client gives up (or the test
// ends).
func slowServer(t *testing.T) *httptest.Server {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Reading the body lets the server notice the client hanging up.
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first: Close waits for handlers
	return srv
}

func TestTimeouts(t *testing.T) {
	srv := slowServer(t)

	t.Run("configured Timeout", func(t *testing.T) {
		c, err := New("ollama", Config{BaseURL: srv.URL, Model: "m", Timeout: 100 * time.Millisecond})
		require.NoError(t, err)
		start := time.Now()
		_, err = c.Complete(context.Background(), summarizationRequest())
		le := requireLLMError(t, err, core.LLMTimeout, true)
		assert.Contains(t, le.Message, srv.URL)
		assert.Less(t, time.Since(start), 2*time.Second)
	})
	t.Run("request TimeoutMs is smaller", func(t *testing.T) {
		c, err := New("anthropic", Config{BaseURL: srv.URL, APIKey: "k", Model: "m", Timeout: time.Minute})
		require.NoError(t, err)
		req := summarizationRequest()
		req.TimeoutMs = 100
		start := time.Now()
		_, err = c.Complete(context.Background(), req)
		le := requireLLMError(t, err, core.LLMTimeout, true)
		assert.Contains(t, le.Message, "100ms")
		assert.Less(t, time.Since(start), 2*time.Second)
	})
	t.Run("configured Timeout is smaller than TimeoutMs", func(t *testing.T) {
		c, err := New("openai-compat", Config{BaseURL: srv.URL, Timeout: 100 * time.Millisecond})
		require.NoError(t, err)
		req := summarizationRequest()
		req.TimeoutMs = 60_000
		start := time.Now()
		_, err = c.Complete(context.Background(), req)
		requireLLMError(t, err, core.LLMTimeout, true)
		assert.Less(t, time.Since(start), 2*time.Second)
	})
	t.Run("caller's deadline", func(t *testing.T) {
		c, err := New("openai-compat", Config{BaseURL: srv.URL})
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, err = c.Complete(ctx, summarizationRequest())
		requireLLMError(t, err, core.LLMTimeout, true)
	})
	t.Run("http.Client Timeout", func(t *testing.T) {
		c, err := New("openai-compat", Config{BaseURL: srv.URL, HTTPClient: &http.Client{Timeout: 100 * time.Millisecond}})
		require.NoError(t, err)
		_, err = c.Complete(context.Background(), summarizationRequest())
		requireLLMError(t, err, core.LLMTimeout, true)
	})
	t.Run("caller cancels", func(t *testing.T) {
		c, err := New("openai-compat", Config{BaseURL: srv.URL})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		_, err = c.Complete(ctx, summarizationRequest())
		requireLLMError(t, err, core.LLMOther, false)
	})
}

func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there now

	for _, p := range []string{"anthropic", "openai-compat", "ollama"} {
		t.Run(p, func(t *testing.T) {
			c, err := New(p, Config{BaseURL: "http://" + addr, APIKey: "k", Model: "m"})
			require.NoError(t, err)
			_, err = c.Complete(context.Background(), summarizationRequest())
			le := requireLLMError(t, err, core.LLMUnavailable, true)
			assert.Contains(t, le.Message, "http://"+addr+"/")
		})
	}
}

func TestNew(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "k")
	t.Setenv("OPENAI_API_KEY", "k")
	for _, p := range Providers() {
		c, err := New(p, Config{})
		require.NoError(t, err, p)
		assert.NotNil(t, c, p)
	}
	_, err := New("gemini", Config{})
	require.Error(t, err)
	for _, p := range Providers() {
		assert.Contains(t, err.Error(), p)
	}
	assert.Contains(t, err.Error(), `"gemini"`)

	for _, base := range []string{"localhost:11434", "ftp://x", "http://", "::"} {
		_, err := New("ollama", Config{BaseURL: base})
		require.Error(t, err, base)
		assert.Contains(t, err.Error(), "BaseURL")
	}
	_, err = New("ollama", Config{Timeout: -time.Second})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Timeout")
}

func TestNilRequest(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "k")
	t.Setenv("OPENAI_API_KEY", "k")
	for _, p := range Providers() {
		c, err := New(p, Config{Model: "m"})
		require.NoError(t, err)
		_, err = c.Complete(context.Background(), nil)
		requireLLMError(t, err, core.LLMInvalidRequest, false)
	}
}

func TestExtractive(t *testing.T) {
	c, err := New("extractive", Config{})
	require.NoError(t, err)
	req := summarizationRequest()
	resp, err := c.Complete(context.Background(), req)
	require.NoError(t, err)
	require.Len(t, resp.Content, 1)
	assert.Equal(t, "text", resp.Content[0].Type)
	assert.NotEmpty(t, resp.Content[0].Text)
	assert.Equal(t, core.ExtractiveSummary(req), resp.Content[0].Text, "the extractive client is core.ExtractiveSummary")
	assert.Equal(t, "end_turn", resp.StopReason)
	assert.Positive(t, resp.InputTokens)
	assert.Equal(t, core.EstimateTokens(resp.Content[0].Text), resp.OutputTokens)

	again, err := c.Complete(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, resp, again, "deterministic")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.Complete(ctx, req)
	requireLLMError(t, err, core.LLMOther, false)
}
