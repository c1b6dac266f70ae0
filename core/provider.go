package core

import (
	"math"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// Provider wire formats (docs/spec.md#model-requests-and-responses,
// docs/spec.md#providerrequest, docs/spec.md#providerresponse).
//
// Every host — the Go adapters in hostfuncs/llm, the Node and Python
// harnesses through the plug-in's exports — builds its HTTP bodies here, so
// the provider quirks (Anthropic's separate system field and strict turn
// order, OpenAI's in-place system messages, Ollama's options object) are
// written down exactly once. Nothing here does I/O; gjson is used only to
// read, and nothing of it crosses the API.

// Provider names accepted by ProviderRequest and ProviderResponse.
const (
	ProviderAnthropic = "anthropic"
	ProviderOpenAI    = "openai"
	ProviderOllama    = "ollama"
)

// ContinuationPlaceholder is the user turn put in front of an Anthropic
// conversation that would otherwise start with an assistant turn (or be
// empty): the Messages API rejects both, and a neutral marker tells the
// model nothing it could mistake for content.
const ContinuationPlaceholder = "(conversation continues)"

// DefaultAnthropicMaxTokens is sent when the request sets no max_tokens:
// Anthropic requires the field, the other providers have their own default.
const DefaultAnthropicMaxTokens = 1024

// Paths of each provider's chat endpoint, relative to its base URL.
const (
	anthropicPath = "/v1/messages"
	openAIPath    = "/v1/chat/completions"
	ollamaPath    = "/api/chat"
)

// ProviderRequest translates a provider-neutral request into the body the
// provider's chat endpoint accepts, and the path of that endpoint.
//
//   - anthropic: every system-role message is lifted out of messages and
//     joined with req.System by "\n\n" (req.System first) into the
//     top-level "system" (compaction-v2.AC2.2, AC2.4, AC2.5); what remains
//     is made acceptable to the Messages API: empty messages dropped,
//     consecutive same-role turns merged, a user turn first, never zero
//     messages, max_tokens always set.
//   - openai: req.System becomes the first system message; system-role
//     messages stay where they are, in order (AC2.3, AC2.5).
//   - ollama: the openai message list in Ollama's native /api/chat body.
//
// Messages whose content is empty or only white space are dropped for every
// provider: some reject them outright, and they carry nothing to summarize.
func ProviderRequest(provider string, req *ModelRequest) (urlPath string, body []byte, err error) {
	var path string
	switch provider {
	case ProviderAnthropic:
		path = anthropicPath
	case ProviderOpenAI:
		path = openAIPath
	case ProviderOllama:
		path = ollamaPath
	default:
		return "", nil, Invalid("provider", "must be anthropic, openai or ollama, got "+strconv.Quote(provider))
	}
	if req == nil {
		return "", nil, Invalid("request", "missing")
	}
	if math.IsNaN(req.Temperature) || math.IsInf(req.Temperature, 0) {
		return "", nil, Invalid("request.temperature", "must be a finite number")
	}
	for i := range req.Messages {
		switch req.Messages[i].Role {
		case RoleUser, RoleAssistant, RoleSystem:
		default:
			return "", nil, Invalid("request.messages["+strconv.Itoa(i)+"].role",
				"must be user, assistant or system, got "+req.Messages[i].Role.String())
		}
	}
	switch provider {
	case ProviderAnthropic:
		return path, anthropicBody(req), nil
	case ProviderOpenAI:
		return path, openAIBody(req), nil
	}
	return path, ollamaBody(req), nil
}

func isBlank(s string) bool { return strings.TrimSpace(s) == "" }

// anthropicBody builds a Messages API body. Anthropic takes the system
// prompt as a separate parameter and rejects system turns, empty text,
// a conversation starting with an assistant turn and an empty list.
func anthropicBody(req *ModelRequest) []byte {
	// System messages are gathered and runs of same-role turns merged as
	// lists, each joined once: appending to a growing string per message
	// is quadratic (200,000 one-line user turns took minutes).
	var system []string
	if !isBlank(req.System) {
		system = append(system, req.System)
	}
	type span struct {
		role     Role
		from, to int // the turn's texts: texts[from:to]
	}
	var spans []span
	texts := make([]string, 0, len(req.Messages))
	for _, m := range req.Messages {
		if isBlank(m.Content) {
			continue
		}
		if m.Role == RoleSystem {
			system = append(system, m.Content)
			continue
		}
		if n := len(spans); n > 0 && spans[n-1].role == m.Role {
			spans[n-1].to++
		} else {
			spans = append(spans, span{m.Role, len(texts), len(texts) + 1})
		}
		texts = append(texts, m.Content)
	}
	turns := make([]ModelMessage, 0, len(spans)+1)
	if len(spans) == 0 || spans[0].role != RoleUser {
		turns = append(turns, ModelMessage{Role: RoleUser, Content: ContinuationPlaceholder})
	}
	for _, s := range spans {
		turns = append(turns, ModelMessage{Role: s.role, Content: strings.Join(texts[s.from:s.to], "\n\n")})
	}
	// A final assistant turn is a prefill, and Anthropic rejects a prefill
	// that ends in white space.
	if last := &turns[len(turns)-1]; last.Role == RoleAssistant {
		last.Content = strings.TrimRight(last.Content, " \t\r\n")
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = DefaultAnthropicMaxTokens
	}

	var w jsonWriter
	w.raw(`{"model":`)
	w.str(req.Model)
	w.raw(`,"max_tokens":`)
	w.int(maxTokens)
	if len(system) > 0 {
		w.raw(`,"system":`)
		w.str(strings.Join(system, "\n\n"))
	}
	w.raw(`,"messages":`)
	writeMessages(&w, turns)
	w.raw(`,"temperature":`)
	writeFloat(&w, req.Temperature)
	w.raw("}")
	return w.b
}

// chatMessages is the OpenAI-style list shared by openai and ollama:
// req.System first, then every non-empty message in place.
func chatMessages(req *ModelRequest) []ModelMessage {
	out := make([]ModelMessage, 0, len(req.Messages)+1)
	if !isBlank(req.System) {
		out = append(out, ModelMessage{Role: RoleSystem, Content: req.System})
	}
	for _, m := range req.Messages {
		if !isBlank(m.Content) {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		// Both APIs reject an empty list.
		out = append(out, ModelMessage{Role: RoleUser, Content: ContinuationPlaceholder})
	}
	return out
}

func openAIBody(req *ModelRequest) []byte {
	var w jsonWriter
	w.raw(`{"model":`)
	w.str(req.Model)
	w.raw(`,"messages":`)
	writeMessages(&w, chatMessages(req))
	// max_tokens ≤ 0 means "not set": leave the server's default rather
	// than send a value every server rejects.
	if req.MaxTokens > 0 {
		w.raw(`,"max_tokens":`)
		w.int(req.MaxTokens)
	}
	w.raw(`,"temperature":`)
	writeFloat(&w, req.Temperature)
	w.raw("}")
	return w.b
}

func ollamaBody(req *ModelRequest) []byte {
	var w jsonWriter
	w.raw(`{"model":`)
	w.str(req.Model)
	w.raw(`,"messages":`)
	writeMessages(&w, chatMessages(req))
	// stream defaults to true in Ollama; one JSON object is what we parse.
	w.raw(`,"stream":false,"options":{"temperature":`)
	writeFloat(&w, req.Temperature)
	if req.MaxTokens > 0 {
		w.raw(`,"num_predict":`)
		w.int(req.MaxTokens)
	}
	w.raw("}}")
	return w.b
}

func writeMessages(w *jsonWriter, msgs []ModelMessage) {
	w.raw("[")
	for i, m := range msgs {
		if i > 0 {
			w.raw(",")
		}
		w.raw(`{"role":`)
		w.str(m.Role.String())
		w.raw(`,"content":`)
		w.str(m.Content)
		w.raw("}")
	}
	w.raw("]")
}

// writeFloat writes f as the shortest JSON number that round-trips; the
// caller has rejected NaN and infinities, which JSON cannot express.
func writeFloat(w *jsonWriter, f float64) {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		w.b = strconv.AppendInt(w.b, int64(f), 10)
		return
	}
	w.b = strconv.AppendFloat(w.b, f, 'g', -1, 64)
}

// ProviderResponse reads a provider's HTTP response (status and body) into
// a provider-neutral ModelResponse.
//
// A failure the provider reports — a non-2xx status, or an error object in
// the body — is returned as an *LLMError with an LLM error code
// (docs/spec.md#model-requests-and-responses) and the provider's own message,
// classified from the provider's error type/code, the message (context-length
// errors are recognised by their wording, as providers use plain 400s for
// them) and the status. A 2xx body that is not the provider's success shape is
// the third return, an invalid_input (or invalid_json) *Error naming the
// field.
func ProviderResponse(provider string, status int, body []byte) (ModelResponse, *LLMError, error) {
	switch provider {
	case ProviderAnthropic, ProviderOpenAI, ProviderOllama:
	default:
		return ModelResponse{}, nil, Invalid("provider", "must be anthropic, openai or ollama, got "+strconv.Quote(provider))
	}
	if status < 100 || status > 599 {
		return ModelResponse{}, nil, Invalid("status", "must be an HTTP status (100-599), got "+strconv.Itoa(status))
	}
	valid := gjson.ValidBytes(body)
	var root gjson.Result
	if valid {
		root = gjson.ParseBytes(body)
	}
	if status < 200 || status > 299 {
		return ModelResponse{}, providerError(status, root, valid, body), nil
	}
	if !valid {
		return ModelResponse{}, nil, &Error{Code: CodeInvalidJSON, Field: "body", Msg: "not valid JSON"}
	}
	if !root.IsObject() {
		return ModelResponse{}, nil, Invalid("body", "must be a JSON object")
	}
	if e := bodyError(root); e.Exists() && e.Type != gjson.Null {
		return ModelResponse{}, providerError(status, root, true, body), nil
	}
	switch provider {
	case ProviderAnthropic:
		return anthropicResponse(root)
	case ProviderOpenAI:
		return openAIResponse(root)
	}
	return ollamaResponse(root)
}

// bodyError finds the error object of an error body: "error" in every
// provider's format (an object for Anthropic, OpenAI and most compatible
// servers, a string for Ollama), or vLLM's top-level {"object":"error"}.
func bodyError(root gjson.Result) gjson.Result {
	if e := root.Get("error"); e.Exists() {
		return e
	}
	if root.Get("object").String() == "error" || root.Get("type").String() == "error" {
		return root
	}
	return gjson.Result{}
}

func anthropicResponse(root gjson.Result) (ModelResponse, *LLMError, error) {
	content := root.Get("content")
	if !content.IsArray() {
		return ModelResponse{}, nil, Invalid("body.content", "must be an array of content blocks")
	}
	// Paths are built on error only, and each block's strings are its own
	// (a view into the body would make TinyGo's collector walk the whole
	// body per block at every collection: minutes for 200,000 blocks).
	var r ModelResponse
	var bad error
	i := 0
	field := func(sub string) string { return "body.content[" + strconv.Itoa(i) + "]" + sub }
	content.ForEach(func(_, b gjson.Result) bool {
		t := b.Get("type")
		if t.Type != gjson.String {
			bad = Invalid(field(".type"), "must be a string")
			return false
		}
		var blk ContentBlock
		if t.Str == "text" {
			txt := b.Get("text")
			if txt.Type != gjson.String {
				bad = Invalid(field(".text"), "must be a string")
				return false
			}
			blk = ContentBlock{Type: "text", Text: strings.Clone(txt.Str)}
		} else {
			blk = ContentBlock{Type: strings.Clone(t.Str)}
		}
		r.Content = append(r.Content, blk)
		i++
		return true
	})
	if bad != nil {
		return ModelResponse{}, nil, bad
	}
	r.StopReason = root.Get("stop_reason").String()
	// Anthropic counts tokens read from and written to its prompt cache
	// apart from input_tokens; the context held all three.
	u := root.Get("usage")
	r.InputTokens = int(u.Get("input_tokens").Int() + u.Get("cache_creation_input_tokens").Int() + u.Get("cache_read_input_tokens").Int())
	r.OutputTokens = int(u.Get("output_tokens").Int())
	return r, nil, nil
}

func openAIResponse(root gjson.Result) (ModelResponse, *LLMError, error) {
	choices := root.Get("choices")
	choice := choices.Get("0")
	if !choices.IsArray() || !choice.Exists() {
		return ModelResponse{}, nil, Invalid("body.choices", "must be a non-empty array")
	}
	msg := choice.Get("message")
	if !msg.IsObject() {
		return ModelResponse{}, nil, Invalid("body.choices[0].message", "must be an object")
	}
	text, err := contentText(msg.Get("content"), "body.choices[0].message.content")
	if err != nil {
		return ModelResponse{}, nil, err
	}
	r := ModelResponse{Content: []ContentBlock{{Type: "text", Text: text}}}
	r.StopReason = mapFinishReason(choice.Get("finish_reason").String())
	r.InputTokens = int(root.Get("usage.prompt_tokens").Int())
	r.OutputTokens = int(root.Get("usage.completion_tokens").Int())
	return r, nil, nil
}

func ollamaResponse(root gjson.Result) (ModelResponse, *LLMError, error) {
	msg := root.Get("message")
	if !msg.IsObject() {
		return ModelResponse{}, nil, Invalid("body.message", "must be an object")
	}
	text, err := contentText(msg.Get("content"), "body.message.content")
	if err != nil {
		return ModelResponse{}, nil, err
	}
	r := ModelResponse{Content: []ContentBlock{{Type: "text", Text: text}}}
	if dr := root.Get("done_reason"); dr.Exists() && dr.String() != "" {
		r.StopReason = mapFinishReason(dr.String())
	} else if root.Get("done").Bool() {
		// Ollama before 0.1.33 did not send done_reason.
		r.StopReason = "end_turn"
	}
	r.InputTokens = int(root.Get("prompt_eval_count").Int())
	r.OutputTokens = int(root.Get("eval_count").Int())
	return r, nil, nil
}

// contentText reads a chat message's content: a string, null (OpenAI sends
// null with a refusal or tool calls: no text), or a content-part array,
// which some compatible servers send, its text parts joined with "\n".
func contentText(c gjson.Result, field string) (string, error) {
	switch {
	case !c.Exists() || c.Type == gjson.Null:
		return "", nil
	case c.Type == gjson.String:
		return c.Str, nil
	case c.IsArray():
		var parts []string
		c.ForEach(func(_, p gjson.Result) bool {
			if p.Type == gjson.String {
				parts = append(parts, p.Str)
			} else if p.Get("type").String() == "text" {
				parts = append(parts, p.Get("text").String())
			}
			return true
		})
		return strings.Join(parts, "\n"), nil
	}
	return "", Invalid(field, "must be a string, null or an array of content parts")
}

// mapFinishReason maps OpenAI/Ollama finish reasons onto Anthropic's stop
// reasons, the vocabulary of ModelResponse; unknown reasons pass through.
func mapFinishReason(s string) string {
	switch s {
	case "stop":
		return "end_turn"
	case "length":
		return "max_tokens"
	case "tool_calls", "function_call":
		return "tool_use"
	case "content_filter":
		return "refusal"
	}
	return s
}

// providerError classifies a failed response. The provider's error type
// or code is the most precise signal, then the few statuses with a fixed
// meaning, then the message's wording (context-length errors come as plain
// 400s), then the status class.
func providerError(status int, root gjson.Result, valid bool, body []byte) *LLMError {
	var errType, code, msg string
	if valid {
		e := bodyError(root)
		switch {
		case e.Type == gjson.String: // Ollama: {"error":"..."}
			msg = e.Str
		case e.IsObject():
			msg = e.Get("message").String()
			errType = e.Get("type").String()
			code = e.Get("code").String() // a string (OpenAI) or a number (OpenRouter, vLLM)
		}
	}
	if msg == "" && valid {
		// FastAPI-style servers answer {"detail": "..."}, some proxies {"message": "..."}.
		for _, k := range [2]string{"message", "detail"} {
			if v := root.Get(k); v.Type == gjson.String && v.Str != "" {
				msg = v.Str
				break
			}
		}
	}
	if msg == "" {
		msg = "HTTP " + strconv.Itoa(status)
		if snippet := strings.TrimSpace(string(body)); snippet != "" {
			msg += ": " + ClampText(snippet, 200)
		}
	}
	return classify(status, errType, code, msg)
}

func classify(status int, errType, code, msg string) *LLMError {
	e := func(c string, retry bool) *LLMError { return &LLMError{Code: c, Message: msg, Retryable: retry} }
	for _, k := range [2]string{code, errType} {
		switch k {
		case "rate_limit_error", "rate_limit_exceeded":
			return e(LLMRateLimited, true)
		case "insufficient_quota":
			// A 429 too, but waiting does not refill a spent quota.
			return e(LLMRateLimited, false)
		case "overloaded_error", "api_error", "server_error":
			return e(LLMUnavailable, true)
		case "timeout_error":
			return e(LLMTimeout, true)
		case "authentication_error", "permission_error", "invalid_api_key", "billing_error":
			return e(LLMAuth, false)
		case "context_length_exceeded", "exceed_context_size_error", "request_too_large":
			return e(LLMContextOverflow, false)
		}
	}
	switch status {
	case 429:
		return e(LLMRateLimited, true)
	case 401, 403:
		return e(LLMAuth, false)
	case 408, 504:
		return e(LLMTimeout, true)
	}
	if isContextError(msg) {
		return e(LLMContextOverflow, false)
	}
	switch {
	case status == 413:
		// Request larger than the provider takes: as with a context
		// overflow, only a smaller request helps.
		return e(LLMContextOverflow, false)
	case status >= 500:
		return e(LLMUnavailable, true)
	case status >= 400:
		return e(LLMInvalidRequest, false)
	}
	return e(LLMOther, false)
}

// contextPhrases are how providers word a prompt that does not fit:
// Anthropic ("prompt is too long: 201234 tokens > 200000 maximum", "input
// length and `max_tokens` exceed context limit"), OpenAI and vLLM ("This
// model's maximum context length is …"), llama.cpp ("the request exceeds
// the available context size"), Ollama ("input length exceeds the context
// length").
var contextPhrases = [...]string{
	"prompt is too long",
	"context_length_exceeded",
	"maximum context length",
	"context length",
	"context limit",
	"context size",
	"context window",
}

func isContextError(msg string) bool {
	m := strings.ToLower(msg)
	for _, p := range contextPhrases {
		if strings.Contains(m, p) {
			return true
		}
	}
	return false
}
