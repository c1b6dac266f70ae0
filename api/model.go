package api

import (
	"errors"
	"math"
	"strconv"

	"github.com/clipfold/clipfold/core"
	"github.com/tidwall/gjson"
)

// ParseModelRequest reads a ModelRequest
// (docs/spec.md#model-requests-and-responses) from JSON bytes, as llm_complete
// receives it; errors name the field. Hosts use it to read the plug-in's
// requests with the plug-in's own decoder.
func ParseModelRequest(in []byte) (core.ModelRequest, error) {
	if !gjson.ValidBytes(in) {
		return core.ModelRequest{}, core.Invalid("request", "is not valid JSON")
	}
	return decodeModelRequest(gjson.ParseBytes(in), "request", nil)
}

// decodeModelRequest reads a ModelRequest
// (docs/spec.md#model-requests-and-responses) from r. Hosts use it on
// llm_complete's input; providerRequest uses it on its "request".
func decodeModelRequest(r gjson.Result, field string, a *arena) (core.ModelRequest, error) {
	var req core.ModelRequest
	if !r.Exists() {
		return req, required(field)
	}
	if !r.IsObject() {
		return req, wrongType(field, "a model request object", r)
	}
	return decodeModelFields(objectOf(r), -1, field, a)
}

// decodeModelFields is decodeModelRequest of the object o; n is its
// messages' count when known (the scanner counts a top-level array's
// elements), else -1. Members are looked up in o, found in one walk:
// gjson's Get on a 64 MiB request walks all of it for every member it
// does not have.
func decodeModelFields(o object, n int, field string, a *arena) (core.ModelRequest, error) {
	var req core.ModelRequest
	var err error
	if req.System, err = decodeContent(o.Get("system"), field+".system", a); err != nil {
		return req, err
	}
	if req.Model, err = optString(o.Get("model"), field+".model"); err != nil {
		return req, err
	}
	if req.MaxTokens, err = optInt(o.Get("max_tokens"), field+".max_tokens", 0, 1); err != nil {
		return req, err
	}
	if req.TimeoutMs, err = optInt(o.Get("timeout_ms"), field+".timeout_ms", 0, 0); err != nil {
		return req, err
	}
	if t := o.Get("temperature"); t.Exists() && t.Type != gjson.Null {
		if t.Type != gjson.Number || t.Num < 0 {
			return req, core.Invalid(field+".temperature", "must be a number ≥ 0, got "+typeName(t))
		}
		req.Temperature = t.Num
	}
	ms := o.Get("messages")
	if !ms.Exists() {
		return req, required(field + ".messages")
	}
	if !ms.IsArray() {
		return req, wrongType(field+".messages", "an array", ms)
	}
	// Each message is read in one pass over its members (the walker's,
	// walk.go; gjson's ForEach walks each element twice, to find its end
	// and then its members), paths are built on error only and each
	// content is kept (see keep): nothing is allocated per message but its
	// text. gjson's ForEach is the fallback for text the walker does not
	// expect (none that scanInput accepts).
	req.Messages = make([]core.ModelMessage, 0, max(n, 0))
	if req.Messages, err = walkModelMessages(ms.Raw, field, req.Messages, a); err == errNotWalked {
		req.Messages, err = modelMessagesGJSON(ms, field, req.Messages[:0], a)
	}
	return req, err
}

// errNotWalked: walkModelMessages met text it does not expect.
var errNotWalked = errors.New("not walked")

// walkModelMessages appends the messages of the array s to msgs.
func walkModelMessages(s, field string, msgs []core.ModelMessage, a *arena) ([]core.ModelMessage, error) {
	j := skipWS(s, 0)
	if at(s, j) != '[' {
		return msgs, errNotWalked
	}
	if j = skipWS(s, j+1); at(s, j) == ']' {
		return msgs, nil
	}
	for i := 0; ; i++ {
		var role, content gjson.Result
		var end int
		if at(s, j) == '{' {
			end = roleAndContent(s, j, &role, &content)
		} else {
			var m gjson.Result
			if end = valueAt(s, j, &m); end >= 0 {
				return msgs, wrongType(idx(field+".messages", i), "a message object", m)
			}
		}
		if end < 0 {
			return msgs, errNotWalked
		}
		m, err := modelMessage(role, content, field, i, a)
		if err != nil {
			return msgs, err
		}
		msgs = append(msgs, m)
		j = skipWS(s, end)
		switch at(s, j) {
		case ',':
			j = skipWS(s, j+1)
		case ']':
			return msgs, nil
		default:
			return msgs, errNotWalked
		}
	}
}

// roleAndContent reads the message object that opens at s[i]: its first
// "role" and "content" values. It returns the index after the object, or
// -1 when the text is not as expected.
func roleAndContent(s string, i int, role, content *gjson.Result) int {
	j := skipWS(s, i+1)
	if at(s, j) == '}' {
		return j + 1
	}
	var v gjson.Result
	for {
		if at(s, j) != '"' {
			return -1
		}
		k, kend := keyAt(s, j)
		if kend < 0 {
			return -1
		}
		if j = skipWS(s, kend); at(s, j) != ':' {
			return -1
		}
		j = skipWS(s, j+1)
		end := valueAt(s, j, &v)
		if end < 0 {
			return -1
		}
		switch {
		case k == "role" && !role.Exists():
			*role = v
		case k == "content" && !content.Exists():
			*content = v
		}
		switch j = skipWS(s, end); at(s, j) {
		case ',':
			j = skipWS(s, j+1)
		case '}':
			return j + 1
		default:
			return -1
		}
	}
}

// modelMessagesGJSON is walkModelMessages through gjson's ForEach: its
// fallback and the reference TestModelMessagesWalkerMatchesGJSON holds it
// to.
func modelMessagesGJSON(ms gjson.Result, field string, msgs []core.ModelMessage, a *arena) ([]core.ModelMessage, error) {
	i := 0
	var err error
	var role, content gjson.Result // the message's first "role" and "content"
	member := func(k, v gjson.Result) bool {
		switch {
		case k.Str == "role" && !role.Exists():
			role = v
		case k.Str == "content" && !content.Exists():
			content = v
		}
		return true
	}
	ms.ForEach(func(_, m gjson.Result) bool {
		if !m.IsObject() {
			err = wrongType(idx(field+".messages", i), "a message object", m)
			return false
		}
		role, content = gjson.Result{}, gjson.Result{}
		m.ForEach(member)
		var mm core.ModelMessage
		if mm, err = modelMessage(role, content, field, i, a); err != nil {
			return false
		}
		msgs = append(msgs, mm)
		i++
		return true
	})
	return msgs, err
}

// modelMessage is message i of a model request from its role and content.
func modelMessage(role, content gjson.Result, field string, i int, a *arena) (core.ModelMessage, error) {
	rl, ok := core.ParseRole(role.Str)
	if role.Type != gjson.String || !ok || rl == core.RoleTool {
		return core.ModelMessage{}, core.Invalid(idx(field+".messages", i)+".role", "must be one of system, user, assistant, got "+clip(role.Raw, 40))
	}
	if content.Type == gjson.String {
		return core.ModelMessage{Role: rl, Content: a.keep(content.Str)}, nil // the common case, without building the path
	}
	text, err := decodeContent(content, idx(field+".messages", i)+".content", a)
	return core.ModelMessage{Role: rl, Content: text}, err
}

// AppendModelRequest writes req as ModelRequest JSON
// (docs/spec.md#model-requests-and-responses).
func AppendModelRequest(b []byte, req *core.ModelRequest) []byte {
	b = append(b, `{"system":`...)
	b = core.AppendJSONString(b, req.System)
	b = append(b, `,"messages":[`...)
	for i := range req.Messages {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"role":"`...)
		b = append(b, req.Messages[i].Role.String()...)
		b = append(b, `","content":`...)
		b = core.AppendJSONString(b, req.Messages[i].Content)
		b = append(b, '}')
	}
	b = append(b, `],"model":`...)
	b = core.AppendJSONString(b, req.Model)
	b = append(b, `,"max_tokens":`...)
	b = strconv.AppendInt(b, int64(req.MaxTokens), 10)
	b = append(b, `,"temperature":`...)
	b = appendFloat(b, req.Temperature)
	if req.TimeoutMs > 0 {
		b = append(b, `,"timeout_ms":`...)
		b = strconv.AppendInt(b, int64(req.TimeoutMs), 10)
	}
	return append(b, '}')
}

// appendFloat writes f as a JSON number; ±Inf (possible only with absurd
// weights) is clamped to the largest finite value, NaN written as 0.
func appendFloat(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		f = 0
	case math.IsInf(f, 1):
		f = math.MaxFloat64
	case math.IsInf(f, -1):
		f = -math.MaxFloat64
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}

// decodeModelOutcome reads llm_complete's output: a ModelResponse, or the
// error object {"error":{code,message,retryable}}.
func decodeModelOutcome(r gjson.Result) (core.ModelResponse, *core.LLMError, error) {
	var resp core.ModelResponse
	if !r.IsObject() {
		return resp, nil, wrongType("response", "an object", r)
	}
	if e := r.Get("error"); e.Exists() && e.Type != gjson.Null {
		return resp, decodeLLMError(e), nil
	}
	content := r.Get("content")
	switch {
	case content.Type == gjson.String:
		resp.Content = []core.ContentBlock{{Type: "text", Text: content.Str}}
	case content.IsArray():
		content.ForEach(func(_, blk gjson.Result) bool {
			resp.Content = append(resp.Content, core.ContentBlock{Type: keep(blk.Get("type").String()), Text: keep(blk.Get("text").String())})
			return true
		})
	case !content.Exists() || content.Type == gjson.Null:
	default:
		return resp, nil, wrongType("response.content", "an array of content blocks", content)
	}
	resp.StopReason = r.Get("stop_reason").String()
	resp.InputTokens = int(r.Get("usage.input_tokens").Int())
	resp.OutputTokens = int(r.Get("usage.output_tokens").Int())
	return resp, nil, nil
}

// decodeLLMError reads an {"code","message","retryable"} error object. A
// bare string is taken as the message of an "other" error.
func decodeLLMError(e gjson.Result) *core.LLMError {
	if e.Type == gjson.String {
		return &core.LLMError{Code: core.LLMOther, Message: e.Str}
	}
	le := &core.LLMError{Code: e.Get("code").String(), Message: e.Get("message").String(), Retryable: e.Get("retryable").Bool()}
	if le.Code == "" {
		le.Code = core.LLMOther
	}
	return le
}

// AppendModelResponse writes resp as ModelResponse JSON
// (docs/spec.md#model-requests-and-responses).
func AppendModelResponse(b []byte, resp *core.ModelResponse) []byte {
	b = append(b, `{"content":[`...)
	for i, c := range resp.Content {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":`...)
		b = core.AppendJSONString(b, c.Type)
		b = append(b, `,"text":`...)
		b = core.AppendJSONString(b, c.Text)
		b = append(b, '}')
	}
	b = append(b, `],"stop_reason":`...)
	b = core.AppendJSONString(b, resp.StopReason)
	b = append(b, `,"usage":{"input_tokens":`...)
	b = strconv.AppendInt(b, int64(resp.InputTokens), 10)
	b = append(b, `,"output_tokens":`...)
	b = strconv.AppendInt(b, int64(resp.OutputTokens), 10)
	return append(b, "}}"...)
}

// AppendErrorObject writes {"error":{"code","message","retryable"}}, the
// shape of every host-function failure and of a failed providerResponse.
func AppendErrorObject(b []byte, code, message string, retryable bool) []byte {
	b = append(b, `{"error":{"code":`...)
	b = core.AppendJSONString(b, code)
	b = append(b, `,"message":`...)
	b = core.AppendJSONString(b, message)
	b = append(b, `,"retryable":`...)
	b = strconv.AppendBool(b, retryable)
	return append(b, "}}"...)
}
