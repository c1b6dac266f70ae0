package core

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pvMsg is one message of a provider body as the provider reads it.
type pvMsg struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// pvBody is the union of the three providers' request fields, decoded
// with encoding/json so the test checks what a provider would parse, not
// the bytes we happened to write.
type pvBody struct {
	Model       *string  `json:"model"`
	MaxTokens   *int     `json:"max_tokens"`
	System      *string  `json:"system"`
	Messages    []pvMsg  `json:"messages"`
	Temperature *float64 `json:"temperature"`
	Stream      *bool    `json:"stream"`
	Options     *struct {
		Temperature *float64 `json:"temperature"`
		NumPredict  *int     `json:"num_predict"`
	} `json:"options"`
}

func pvDecode(t *testing.T, body []byte) (pvBody, map[string]json.RawMessage) {
	t.Helper()
	var b pvBody
	require.NoError(t, json.Unmarshal(body, &b), "body must be valid JSON: %s", body)
	var keys map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(body, &keys))
	return b, keys
}

func pvPtr[T any](v T) *T { return &v }

func pvSys(s string) ModelMessage  { return ModelMessage{Role: RoleSystem, Content: s} }
func pvUser(s string) ModelMessage { return ModelMessage{Role: RoleUser, Content: s} }
func pvAsst(s string) ModelMessage { return ModelMessage{Role: RoleAssistant, Content: s} }

func TestProviderRequestAnthropic(t *testing.T) {
	tests := []struct {
		name       string
		req        ModelRequest
		wantSystem *string // nil: the "system" key must be absent
		wantMsgs   []pvMsg
		wantMax    int
	}{
		{
			// compaction-v2.AC2.2: a system-role message is lifted out of
			// messages and joined with request.system.
			name: "AC2.2 system message lifted and joined",
			req: ModelRequest{
				System:    "You summarize.",
				Messages:  []ModelMessage{pvSys("Previous summary of conversation:\nS0"), pvUser("hello"), pvAsst("hi")},
				Model:     "claude-sonnet-4-5",
				MaxTokens: 512,
			},
			wantSystem: pvPtr("You summarize.\n\nPrevious summary of conversation:\nS0"),
			wantMsgs:   []pvMsg{{"user", "hello"}, {"assistant", "hi"}},
			wantMax:    512,
		},
		{
			// compaction-v2.AC2.4: several system messages, wherever they
			// are, joined in order after request.system by "\n\n".
			name: "AC2.4 every system message joined in order",
			req: ModelRequest{
				System:   "P",
				Messages: []ModelMessage{pvSys("A"), pvUser("u1"), pvSys("B"), pvAsst("a1"), pvSys("C"), pvUser("u2")},
				Model:    "m", MaxTokens: 100,
			},
			wantSystem: pvPtr("P\n\nA\n\nB\n\nC"),
			wantMsgs:   []pvMsg{{"user", "u1"}, {"assistant", "a1"}, {"user", "u2"}},
			wantMax:    100,
		},
		{
			name: "AC2.4 no request.system: system messages alone",
			req: ModelRequest{
				Messages: []ModelMessage{pvSys("A"), pvSys("B"), pvUser("u")},
				Model:    "m", MaxTokens: 100,
			},
			wantSystem: pvPtr("A\n\nB"),
			wantMsgs:   []pvMsg{{"user", "u"}},
			wantMax:    100,
		},
		{
			// compaction-v2.AC2.5: a request with no system-role message is
			// sent as before: system as given, messages untouched.
			name: "AC2.5 backward compatible without system messages",
			req: ModelRequest{
				System:   "Be brief.",
				Messages: []ModelMessage{pvUser("q"), pvAsst("a"), pvUser("q2")},
				Model:    "m", MaxTokens: 10,
			},
			wantSystem: pvPtr("Be brief."),
			wantMsgs:   []pvMsg{{"user", "q"}, {"assistant", "a"}, {"user", "q2"}},
			wantMax:    10,
		},
		{
			name: "no system at all: key omitted; max_tokens defaults to 1024",
			req: ModelRequest{
				Messages: []ModelMessage{pvUser("q")},
				Model:    "m",
			},
			wantSystem: nil,
			wantMsgs:   []pvMsg{{"user", "q"}},
			wantMax:    DefaultAnthropicMaxTokens,
		},
		{
			name: "lifting a system message merges the user turns around it",
			req: ModelRequest{
				Messages: []ModelMessage{pvUser("u1"), pvSys("S"), pvUser("u2"), pvAsst("a1"), pvAsst("a2"), pvUser("u3")},
				Model:    "m", MaxTokens: 5,
			},
			wantSystem: pvPtr("S"),
			wantMsgs:   []pvMsg{{"user", "u1\n\nu2"}, {"assistant", "a1\n\na2"}, {"user", "u3"}},
			wantMax:    5,
		},
		{
			name: "starting with an assistant turn gets a user turn in front",
			req: ModelRequest{
				System:   "P",
				Messages: []ModelMessage{pvSys("S"), pvAsst("a1"), pvUser("u1")},
				Model:    "m", MaxTokens: 5,
			},
			wantSystem: pvPtr("P\n\nS"),
			wantMsgs:   []pvMsg{{"user", ContinuationPlaceholder}, {"assistant", "a1"}, {"user", "u1"}},
			wantMax:    5,
		},
		{
			name: "empty and blank messages are dropped, blank system skipped",
			req: ModelRequest{
				System:   "  ",
				Messages: []ModelMessage{pvUser(""), pvSys(" \n"), pvUser("u1"), pvAsst(""), pvUser("u2")},
				Model:    "m", MaxTokens: 5,
			},
			wantSystem: nil,
			wantMsgs:   []pvMsg{{"user", "u1\n\nu2"}},
			wantMax:    5,
		},
		{
			name: "only system messages: one placeholder user turn",
			req: ModelRequest{
				Messages: []ModelMessage{pvSys("S")},
				Model:    "m", MaxTokens: 5,
			},
			wantSystem: pvPtr("S"),
			wantMsgs:   []pvMsg{{"user", ContinuationPlaceholder}},
			wantMax:    5,
		},
		{
			name:       "no messages at all: one placeholder user turn",
			req:        ModelRequest{System: "P", Model: "m", MaxTokens: 5},
			wantSystem: pvPtr("P"),
			wantMsgs:   []pvMsg{{"user", ContinuationPlaceholder}},
			wantMax:    5,
		},
		{
			name: "a final assistant prefill loses trailing white space",
			req: ModelRequest{
				Messages: []ModelMessage{pvUser("u"), pvAsst("The summary: \n")},
				Model:    "m", MaxTokens: 5,
			},
			wantSystem: nil,
			wantMsgs:   []pvMsg{{"user", "u"}, {"assistant", "The summary:"}},
			wantMax:    5,
		},
		{
			name: "content is escaped and survives the round trip",
			req: ModelRequest{
				System:   "say \"hi\"\tnow",
				Messages: []ModelMessage{pvUser("line1\nline2 \\ é 😀 \u2028 \x01")},
				Model:    "m", MaxTokens: 5,
			},
			wantSystem: pvPtr("say \"hi\"\tnow"),
			wantMsgs:   []pvMsg{{"user", "line1\nline2 \\ é 😀 \u2028 \x01"}},
			wantMax:    5,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path, body, err := ProviderRequest("anthropic", &tc.req)
			require.NoError(t, err)
			assert.Equal(t, "/v1/messages", path)
			b, keys := pvDecode(t, body)
			require.NotNil(t, b.Model)
			assert.Equal(t, tc.req.Model, *b.Model)
			require.NotNil(t, b.MaxTokens)
			assert.Equal(t, tc.wantMax, *b.MaxTokens)
			if tc.wantSystem == nil {
				assert.NotContains(t, keys, "system")
			} else {
				require.NotNil(t, b.System)
				assert.Equal(t, *tc.wantSystem, *b.System)
			}
			assert.Equal(t, tc.wantMsgs, b.Messages)
			for _, m := range b.Messages {
				assert.NotEqual(t, "system", m.Role, "anthropic messages never carry a system role")
				assert.NotEmpty(t, m.Content)
			}
			require.NotNil(t, b.Temperature)
			assert.Equal(t, tc.req.Temperature, *b.Temperature)
			assert.Len(t, keys, 4+pvBoolInt(tc.wantSystem != nil), "keys: %v", keys)
		})
	}
}

func pvBoolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestProviderRequestOpenAIAndOllama(t *testing.T) {
	tests := []struct {
		name     string
		req      ModelRequest
		wantMsgs []pvMsg
	}{
		{
			// compaction-v2.AC2.3: system-role messages go through as
			// {"role":"system"} in place; request.system is prepended.
			name: "AC2.3 system messages kept in place, system first",
			req: ModelRequest{
				System:   "You summarize.",
				Messages: []ModelMessage{pvSys("Previous summary of conversation:\nS0"), pvUser("u1"), pvSys("B"), pvAsst("a1"), pvUser("directive")},
				Model:    "gpt-4o-mini", MaxTokens: 256,
			},
			wantMsgs: []pvMsg{
				{"system", "You summarize."},
				{"system", "Previous summary of conversation:\nS0"},
				{"user", "u1"},
				{"system", "B"},
				{"assistant", "a1"},
				{"user", "directive"},
			},
		},
		{
			name: "AC2.3 no request.system: no extra system message",
			req: ModelRequest{
				Messages: []ModelMessage{pvUser("u1"), pvSys("S"), pvAsst("a1")},
				Model:    "m", MaxTokens: 1,
			},
			wantMsgs: []pvMsg{{"user", "u1"}, {"system", "S"}, {"assistant", "a1"}},
		},
		{
			// compaction-v2.AC2.5: without system-role messages the body is
			// what it always was.
			name: "AC2.5 backward compatible without system messages",
			req: ModelRequest{
				System:   "Be brief.",
				Messages: []ModelMessage{pvUser("q"), pvAsst("a")},
				Model:    "m", MaxTokens: 1,
			},
			wantMsgs: []pvMsg{{"system", "Be brief."}, {"user", "q"}, {"assistant", "a"}},
		},
		{
			name: "empty content is dropped",
			req: ModelRequest{
				System:   "",
				Messages: []ModelMessage{pvUser(""), pvSys(" "), pvUser("u"), pvAsst("\n")},
				Model:    "m", MaxTokens: 1,
			},
			wantMsgs: []pvMsg{{"user", "u"}},
		},
		{
			name:     "nothing at all: one placeholder user message",
			req:      ModelRequest{Model: "m", MaxTokens: 1},
			wantMsgs: []pvMsg{{"user", ContinuationPlaceholder}},
		},
	}
	for _, tc := range tests {
		t.Run("openai "+tc.name, func(t *testing.T) {
			path, body, err := ProviderRequest("openai", &tc.req)
			require.NoError(t, err)
			assert.Equal(t, "/v1/chat/completions", path)
			b, keys := pvDecode(t, body)
			require.NotNil(t, b.Model)
			assert.Equal(t, tc.req.Model, *b.Model)
			assert.Equal(t, tc.wantMsgs, b.Messages)
			require.NotNil(t, b.MaxTokens)
			assert.Equal(t, tc.req.MaxTokens, *b.MaxTokens)
			require.NotNil(t, b.Temperature)
			assert.Equal(t, 0.0, *b.Temperature)
			assert.NotContains(t, keys, "system")
			assert.Len(t, keys, 4)
		})
		t.Run("ollama "+tc.name, func(t *testing.T) {
			path, body, err := ProviderRequest("ollama", &tc.req)
			require.NoError(t, err)
			assert.Equal(t, "/api/chat", path)
			b, keys := pvDecode(t, body)
			require.NotNil(t, b.Model)
			assert.Equal(t, tc.req.Model, *b.Model)
			assert.Equal(t, tc.wantMsgs, b.Messages)
			require.NotNil(t, b.Stream)
			assert.False(t, *b.Stream)
			require.NotNil(t, b.Options)
			require.NotNil(t, b.Options.Temperature)
			assert.Equal(t, 0.0, *b.Options.Temperature)
			require.NotNil(t, b.Options.NumPredict)
			assert.Equal(t, tc.req.MaxTokens, *b.Options.NumPredict)
			assert.Len(t, keys, 4) // model, messages, stream, options
		})
	}
}

func TestProviderRequestNumbers(t *testing.T) {
	req := ModelRequest{Messages: []ModelMessage{pvUser("u")}, Model: "m", Temperature: 0.7}
	_, body, err := ProviderRequest("openai", &req)
	require.NoError(t, err)
	b, keys := pvDecode(t, body)
	assert.Equal(t, 0.7, *b.Temperature)
	assert.NotContains(t, keys, "max_tokens", "no max_tokens: the server's default")

	_, body, err = ProviderRequest("ollama", &req)
	require.NoError(t, err)
	b, _ = pvDecode(t, body)
	assert.Equal(t, 0.7, *b.Options.Temperature)
	assert.Nil(t, b.Options.NumPredict)

	req.Temperature = 1
	_, body, err = ProviderRequest("anthropic", &req)
	require.NoError(t, err)
	assert.Contains(t, string(body), `"temperature":1}`)
}

// The summarization request the pipeline builds (seed 000) reaches
// Anthropic with the previous summary folded into system, after the prompt
// (compaction-v2.AC2.2), and OpenAI with it as the second system message
// (AC2.3).
func TestProviderRequestSummarization(t *testing.T) {
	msgs := []Message{
		{Role: RoleUser, Content: "Fix the bug?"},
		{Role: RoleAssistant, Content: "Fixed."},
	}
	req := BuildSummarizationRequest("", "S0", msgs, "m", 300, 0)

	_, body, err := ProviderRequest("anthropic", &req)
	require.NoError(t, err)
	b, _ := pvDecode(t, body)
	assert.Equal(t, DefaultSystemPrompt+"\n\n"+PreviousSummaryPrefix+"S0", *b.System)
	assert.Equal(t, []pvMsg{{"user", "Fix the bug?"}, {"assistant", "Fixed."}, {"user", DefaultDirective}}, b.Messages)
	assert.Equal(t, 300, *b.MaxTokens)
	assert.Equal(t, 0.0, *b.Temperature)

	_, body, err = ProviderRequest("openai", &req)
	require.NoError(t, err)
	b, _ = pvDecode(t, body)
	assert.Equal(t, []pvMsg{
		{"system", DefaultSystemPrompt},
		{"system", PreviousSummaryPrefix + "S0"},
		{"user", "Fix the bug?"}, {"assistant", "Fixed."}, {"user", DefaultDirective},
	}, b.Messages)
}

func TestProviderRequestErrors(t *testing.T) {
	ok := ModelRequest{Messages: []ModelMessage{pvUser("u")}, Model: "m"}
	tests := []struct {
		name, provider string
		req            *ModelRequest
		field          string
	}{
		{"unknown provider", "gemini", &ok, "provider"},
		{"empty provider", "", &ok, "provider"},
		{"nil request", "openai", nil, "request"},
		{"tool role", "anthropic", &ModelRequest{Messages: []ModelMessage{pvUser("u"), {Role: RoleTool, Content: "x"}}}, "request.messages[1].role"},
		{"zero role", "openai", &ModelRequest{Messages: []ModelMessage{{Content: "x"}}}, "request.messages[0].role"},
		{"NaN temperature", "ollama", &ModelRequest{Temperature: math.NaN()}, "request.temperature"},
		{"infinite temperature", "anthropic", &ModelRequest{Temperature: math.Inf(1)}, "request.temperature"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ProviderRequest(tc.provider, tc.req)
			var e *Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, CodeInvalidInput, e.Code)
			assert.Equal(t, tc.field, e.Field)
		})
	}
}

// Success bodies below are the examples of each provider's API reference.
const (
	pvAnthropicOK = `{
  "id": "msg_013Zva2CMHLNnXjNJJKqJ2EF",
  "type": "message",
  "role": "assistant",
  "model": "claude-sonnet-4-5-20250929",
  "content": [
    {"type": "thinking", "thinking": "Let me think.", "signature": "EqQB"},
    {"type": "text", "text": "Hi! My name is Claude."}
  ],
  "stop_reason": "end_turn",
  "stop_sequence": null,
  "usage": {"input_tokens": 2095, "output_tokens": 503, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
}`
	pvOpenAIOK = `{
  "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
  "object": "chat.completion",
  "created": 1741569952,
  "model": "gpt-4.1-2025-04-14",
  "choices": [
    {
      "index": 0,
      "message": {"role": "assistant", "content": "Hello! How can I assist you today?", "refusal": null, "annotations": []},
      "logprobs": null,
      "finish_reason": "stop"
    }
  ],
  "usage": {"prompt_tokens": 19, "completion_tokens": 10, "total_tokens": 29,
    "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
    "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}},
  "service_tier": "default"
}`
	pvOllamaOK = `{
  "model": "llama3.2",
  "created_at": "2023-12-12T14:13:43.416799Z",
  "message": {"role": "assistant", "content": "Hello! How are you today?"},
  "done": true,
  "done_reason": "stop",
  "total_duration": 5191566416,
  "load_duration": 2154458,
  "prompt_eval_count": 26,
  "prompt_eval_duration": 383809000,
  "eval_count": 298,
  "eval_duration": 4799921000
}`
)

// A prompt served partly from Anthropic's cache held every token the
// three usage counts name: usage that left the cached ones out would let
// a cached context look small.
func TestProviderResponseAnthropicCacheTokens(t *testing.T) {
	body := strings.Replace(pvAnthropicOK, `"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0`,
		`"cache_creation_input_tokens": 300, "cache_read_input_tokens": 40000`, 1)
	r, lerr, err := ProviderResponse("anthropic", 200, []byte(body))
	if err != nil || lerr != nil {
		t.Fatalf("ProviderResponse: %v %v", err, lerr)
	}
	if r.InputTokens != 2095+300+40000 {
		t.Fatalf("InputTokens = %d, want %d (input, cache creation and cache reads)", r.InputTokens, 2095+300+40000)
	}
}

func TestProviderResponseSuccess(t *testing.T) {
	tests := []struct {
		name, provider, body string
		want                 ModelResponse
	}{
		{"anthropic", "anthropic", pvAnthropicOK, ModelResponse{
			Content:     []ContentBlock{{Type: "thinking"}, {Type: "text", Text: "Hi! My name is Claude."}},
			StopReason:  "end_turn",
			InputTokens: 2095, OutputTokens: 503,
		}},
		{"anthropic max_tokens", "anthropic",
			`{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"cut"}],"stop_reason":"max_tokens","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":2}}`,
			ModelResponse{Content: []ContentBlock{{Type: "text", Text: "cut"}}, StopReason: "max_tokens", InputTokens: 1, OutputTokens: 2}},
		{"anthropic empty content", "anthropic",
			`{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":0}}`,
			ModelResponse{StopReason: "end_turn", InputTokens: 1}},
		{"openai", "openai", pvOpenAIOK, ModelResponse{
			Content:     []ContentBlock{{Type: "text", Text: "Hello! How can I assist you today?"}},
			StopReason:  "end_turn",
			InputTokens: 19, OutputTokens: 10,
		}},
		{"openai length", "openai",
			`{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"trunc"},"finish_reason":"length"}],"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12}}`,
			ModelResponse{Content: []ContentBlock{{Type: "text", Text: "trunc"}}, StopReason: "max_tokens", InputTokens: 5, OutputTokens: 7}},
		{"openai refusal: null content", "openai",
			`{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"I can't help with that."},"finish_reason":"content_filter"}]}`,
			ModelResponse{Content: []ContentBlock{{Type: "text", Text: ""}}, StopReason: "refusal"}},
		{"openai-compatible content parts", "openai",
			`{"choices":[{"index":0,"message":{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},"finish_reason":"stop"}]}`,
			ModelResponse{Content: []ContentBlock{{Type: "text", Text: "a\nb"}}, StopReason: "end_turn"}},
		{"ollama", "ollama", pvOllamaOK, ModelResponse{
			Content:     []ContentBlock{{Type: "text", Text: "Hello! How are you today?"}},
			StopReason:  "end_turn",
			InputTokens: 26, OutputTokens: 298,
		}},
		{"ollama length", "ollama",
			`{"model":"llama3.2","created_at":"2024-01-01T00:00:00Z","message":{"role":"assistant","content":"x"},"done":true,"done_reason":"length","prompt_eval_count":3,"eval_count":4}`,
			ModelResponse{Content: []ContentBlock{{Type: "text", Text: "x"}}, StopReason: "max_tokens", InputTokens: 3, OutputTokens: 4}},
		{"ollama without done_reason (old server)", "ollama",
			`{"model":"llama2","message":{"role":"assistant","content":"x"},"done":true}`,
			ModelResponse{Content: []ContentBlock{{Type: "text", Text: "x"}}, StopReason: "end_turn"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, llmErr, err := ProviderResponse(tc.provider, 200, []byte(tc.body))
			require.NoError(t, err)
			require.Nil(t, llmErr)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestProviderResponseErrors(t *testing.T) {
	tests := []struct {
		name, provider string
		status         int
		body           string
		code           string
		retryable      bool
		message        string
	}{
		// Anthropic: https://docs.anthropic.com/en/api/errors
		{"anthropic 429 rate_limit_error", "anthropic", 429,
			`{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization of 50,000 input tokens per minute."},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`,
			LLMRateLimited, true, "This request would exceed the rate limit for your organization of 50,000 input tokens per minute."},
		{"anthropic 529 overloaded_error", "anthropic", 529,
			`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_1"}`,
			LLMUnavailable, true, "Overloaded"},
		{"anthropic 500 api_error", "anthropic", 500,
			`{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`,
			LLMUnavailable, true, "Internal server error"},
		{"anthropic 504 timeout_error", "anthropic", 504,
			`{"type":"error","error":{"type":"timeout_error","message":"Request timed out"}}`,
			LLMTimeout, true, "Request timed out"},
		{"anthropic 401 authentication_error", "anthropic", 401,
			`{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},"request_id":"req_1"}`,
			LLMAuth, false, "invalid x-api-key"},
		{"anthropic 403 permission_error", "anthropic", 403,
			`{"type":"error","error":{"type":"permission_error","message":"Your API key does not have permission to use the specified resource."}}`,
			LLMAuth, false, "Your API key does not have permission to use the specified resource."},
		{"anthropic 400 prompt is too long", "anthropic", 400,
			`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210944 tokens > 200000 maximum"},"request_id":"req_1"}`,
			LLMContextOverflow, false, "prompt is too long: 210944 tokens > 200000 maximum"},
		{"anthropic 400 context limit", "anthropic", 400,
			`{"type":"error","error":{"type":"invalid_request_error","message":"input length and ` + "`max_tokens`" + ` exceed context limit: 199000 + 4096 > 200000, decrease input length or ` + "`max_tokens`" + ` and try again"}}`,
			LLMContextOverflow, false, "input length and `max_tokens` exceed context limit: 199000 + 4096 > 200000, decrease input length or `max_tokens` and try again"},
		{"anthropic 413 request_too_large", "anthropic", 413,
			`{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}`,
			LLMContextOverflow, false, "Request exceeds the maximum allowed number of bytes."},
		{"anthropic 400 invalid_request_error", "anthropic", 400,
			`{"type":"error","error":{"type":"invalid_request_error","message":"messages: roles must alternate between \"user\" and \"assistant\""}}`,
			LLMInvalidRequest, false, `messages: roles must alternate between "user" and "assistant"`},
		{"anthropic 404 not_found_error", "anthropic", 404,
			`{"type":"error","error":{"type":"not_found_error","message":"model: claude-nope"}}`,
			LLMInvalidRequest, false, "model: claude-nope"},
		{"anthropic error event with 200", "anthropic", 200,
			`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			LLMUnavailable, true, "Overloaded"},

		// OpenAI: https://platform.openai.com/docs/guides/error-codes
		{"openai 400 context_length_exceeded", "openai", 400,
			`{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`,
			LLMContextOverflow, false, "This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. Please reduce the length of the messages."},
		{"openai 401 invalid_api_key", "openai", 401,
			`{"error":{"message":"Incorrect API key provided: sk-abc***xyz. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
			LLMAuth, false, "Incorrect API key provided: sk-abc***xyz. You can find your API key at https://platform.openai.com/account/api-keys."},
		{"openai 429 rate_limit_exceeded", "openai", 429,
			`{"error":{"message":"Rate limit reached for gpt-4o in organization org-abc on requests per min (RPM): Limit 500, Used 500, Requested 1. Please try again in 120ms.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
			LLMRateLimited, true, "Rate limit reached for gpt-4o in organization org-abc on requests per min (RPM): Limit 500, Used 500, Requested 1. Please try again in 120ms."},
		{"openai 429 insufficient_quota is not worth retrying", "openai", 429,
			`{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`,
			LLMRateLimited, false, "You exceeded your current quota, please check your plan and billing details."},
		{"openai 500 server_error", "openai", 500,
			`{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`,
			LLMUnavailable, true, "The server had an error while processing your request. Sorry about that!"},
		{"openai 503", "openai", 503,
			`{"error":{"message":"The engine is currently overloaded, please try again later","type":"server_error","param":null,"code":null}}`,
			LLMUnavailable, true, "The engine is currently overloaded, please try again later"},
		{"openai 404 model_not_found", "openai", 404,
			`{"error":{"message":"The model ` + "`gpt-9`" + ` does not exist or you do not have access to it.","type":"invalid_request_error","param":null,"code":"model_not_found"}}`,
			LLMInvalidRequest, false, "The model `gpt-9` does not exist or you do not have access to it."},
		{"openrouter numeric code", "openai", 402,
			`{"error":{"code":402,"message":"Insufficient credits. Add more using https://openrouter.ai/credits","metadata":{}}}`,
			LLMInvalidRequest, false, "Insufficient credits. Add more using https://openrouter.ai/credits"},
		{"vllm 400 maximum context length", "openai", 400,
			`{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}`,
			LLMContextOverflow, false, "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion."},
		{"llama.cpp exceed_context_size_error", "openai", 400,
			`{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5000,"n_ctx":4096}}`,
			LLMContextOverflow, false, "the request exceeds the available context size, try increasing it"},
		{"openai 408", "openai", 408, `{"error":{"message":"Request timed out.","type":"timeout","code":null}}`,
			LLMTimeout, true, "Request timed out."},
		{"fastapi detail", "openai", 404, `{"detail":"Not Found"}`, LLMInvalidRequest, false, "Not Found"},

		// Ollama: https://github.com/ollama/ollama/blob/main/docs/api.md#errors
		{"ollama 404 model not found", "ollama", 404,
			`{"error":"model \"llama3.2\" not found, try pulling it first"}`,
			LLMInvalidRequest, false, `model "llama3.2" not found, try pulling it first`},
		{"ollama 500", "ollama", 500,
			`{"error":"llama runner process has terminated: exit status 2"}`,
			LLMUnavailable, true, "llama runner process has terminated: exit status 2"},
		{"ollama 400 context", "ollama", 400,
			`{"error":"the input length exceeds the context length"}`,
			LLMContextOverflow, false, "the input length exceeds the context length"},
		{"ollama 429", "ollama", 429, `{"error":"server busy, please try again.  maximum pending requests exceeded"}`,
			LLMRateLimited, true, "server busy, please try again.  maximum pending requests exceeded"},
		{"ollama error with 200", "ollama", 200, `{"error":"an error was encountered while running the model"}`,
			LLMOther, false, "an error was encountered while running the model"},

		// Whatever sits in front of the provider.
		{"proxy 502 html", "openai", 502, `<html><body><h1>502 Bad Gateway</h1></body></html>`,
			LLMUnavailable, true, "HTTP 502: <html><body><h1>502 Bad Gateway</h1></body></html>"},
		{"empty 503", "anthropic", 503, ``, LLMUnavailable, true, "HTTP 503"},
		{"redirect", "anthropic", 302, ``, LLMOther, false, "HTTP 302"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, llmErr, err := ProviderResponse(tc.provider, tc.status, []byte(tc.body))
			require.NoError(t, err)
			require.NotNil(t, llmErr)
			assert.Equal(t, tc.code, llmErr.Code)
			assert.Equal(t, tc.retryable, llmErr.Retryable)
			assert.Equal(t, tc.message, llmErr.Message)
			assert.Equal(t, ModelResponse{}, got)
		})
	}
}

func TestProviderResponseMalformed(t *testing.T) {
	tests := []struct {
		name, provider string
		status         int
		body           string
		code, field    string
	}{
		{"unknown provider", "gemini", 200, `{}`, CodeInvalidInput, "provider"},
		{"status 0", "openai", 0, `{}`, CodeInvalidInput, "status"},
		{"status 600", "openai", 600, `{}`, CodeInvalidInput, "status"},
		{"not JSON", "openai", 200, `{"choices":[`, CodeInvalidJSON, "body"},
		{"not an object", "anthropic", 200, `[1,2]`, CodeInvalidInput, "body"},
		{"openai without choices", "openai", 200, `{"id":"c","object":"chat.completion"}`, CodeInvalidInput, "body.choices"},
		{"openai empty choices", "openai", 200, `{"choices":[]}`, CodeInvalidInput, "body.choices"},
		{"openai choice without message", "openai", 200, `{"choices":[{"index":0,"text":"legacy completion"}]}`, CodeInvalidInput, "body.choices[0].message"},
		{"openai content a number", "openai", 200, `{"choices":[{"message":{"content":5}}]}`, CodeInvalidInput, "body.choices[0].message.content"},
		{"anthropic without content", "anthropic", 200, `{"id":"msg_1","type":"message"}`, CodeInvalidInput, "body.content"},
		{"anthropic block without type", "anthropic", 200, `{"content":[{"text":"x"}]}`, CodeInvalidInput, "body.content[0].type"},
		{"anthropic text block without text", "anthropic", 200, `{"content":[{"type":"text","text":"a"},{"type":"text"}]}`, CodeInvalidInput, "body.content[1].text"},
		{"ollama without message", "ollama", 200, `{"model":"llama3.2","done":true}`, CodeInvalidInput, "body.message"},
		{"ollama content an object", "ollama", 200, `{"message":{"content":{}}}`, CodeInvalidInput, "body.message.content"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, llmErr, err := ProviderResponse(tc.provider, tc.status, []byte(tc.body))
			assert.Nil(t, llmErr)
			var e *Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, tc.code, e.Code)
			assert.Equal(t, tc.field, e.Field)
		})
	}
}
