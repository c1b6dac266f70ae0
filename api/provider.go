package api

import (
	"github.com/clipfold/clipfold/core"
	"github.com/tidwall/gjson"
)

// ProviderRequest is the providerRequest export: {provider, request} →
// {"url_path":"…","body":{…}}, the provider's wire request for a
// provider-neutral ModelRequest (compaction-v2.AC2.2–2.5).
func (e *Env) ProviderRequest(in []byte) ([]byte, error) {
	root, err := parseInput(in)
	if err != nil {
		return nil, err
	}
	provider, err := providerName(root)
	if err != nil {
		return nil, err
	}
	req, err := decodeModelRequest(root.Get("request"), "request", e.arena())
	if err != nil {
		return nil, err
	}
	path, body, err := core.ProviderRequest(provider, &req)
	if err != nil {
		return nil, err
	}
	b := append(make([]byte, 0, len(body)+64), `{"url_path":`...)
	b = core.AppendJSONString(b, path)
	b = append(b, `,"body":`...)
	b = append(b, body...)
	return append(b, '}'), nil
}

// ProviderResponse is the providerResponse export: {provider, status, body}
// → a ModelResponse, or an LLM failure object for a provider failure. body
// is the provider's JSON object, or a string holding it.
func (e *Env) ProviderResponse(in []byte) ([]byte, error) {
	root, err := parseInput(in)
	if err != nil {
		return nil, err
	}
	provider, err := providerName(root)
	if err != nil {
		return nil, err
	}
	st := root.Get("status")
	if !st.Exists() {
		return nil, required("status")
	}
	status, err := optInt(st, "status", 0, 100)
	if err != nil {
		return nil, err
	}
	bv := root.Get("body")
	var body []byte
	switch {
	case !bv.Exists():
		return nil, required("body")
	case bv.Type == gjson.String:
		body = []byte(bv.Str)
	default:
		body = rawBytes(bv.Raw)
	}
	resp, le, err := core.ProviderResponse(provider, status, body)
	if err != nil {
		return nil, err
	}
	if le != nil {
		return AppendErrorObject(nil, le.Code, le.Message, le.Retryable), nil
	}
	return AppendModelResponse(nil, &resp), nil
}

func providerName(root object) (string, error) {
	p := root.Get("provider")
	if !p.Exists() {
		return "", required("provider")
	}
	if p.Type != gjson.String {
		return "", wrongType("provider", "one of anthropic, openai, ollama", p)
	}
	switch p.Str {
	case core.ProviderAnthropic, core.ProviderOpenAI, core.ProviderOllama:
		return p.Str, nil
	}
	return "", core.Invalid("provider", "must be one of anthropic, openai, ollama, got "+clip(p.Raw, 40))
}
