package api

import (
	"strconv"

	"github.com/clipfold/clipfold/core"
	"github.com/tidwall/gjson"
)

// Version is the plug-in's version; ABI is the version of the export and
// host-function contract (docs/spec.md), bumped only on incompatible change.
const (
	Version = "0.1.0"
	ABI     = 1
)

// Env is what every export needs besides its input: the plug-in-wide
// default config (from the Extism manifest, or core.DefaultConfig) and a
// sink for warnings such as unknown config keys.
type Env struct {
	Base core.Config
	Warn func(string)

	breakers *core.Breakers // compress's circuit breakers, per conversation
	scratch  *scratch       // memory reused from call to call (ReuseMemory)
}

// DefaultEnv uses the defaults of docs/spec.md#config and drops warnings.
func DefaultEnv() *Env { return &Env{Base: core.DefaultConfig()} }

func (e *Env) config(root object) (core.Config, error) {
	return decodeConfig(root.Get("config"), &e.Base, e.Warn)
}

// messagesAndConfig reads the {messages, config} input most exports share.
func (e *Env) messagesAndConfig(in []byte) ([]core.Message, core.Config, error) {
	msgs, cfg, _, err := e.messagesConfigUsage(in, false)
	return msgs, cfg, err
}

// messagesConfigUsage reads {messages, config, usage?}; with withUsage
// unset, usage is not read.
func (e *Env) messagesConfigUsage(in []byte, withUsage bool) ([]core.Message, core.Config, core.Usage, error) {
	root, err := parseInput(in)
	if err != nil {
		return nil, core.Config{}, core.Usage{}, err
	}
	cfg, err := e.config(root)
	if err != nil {
		return nil, cfg, core.Usage{}, err
	}
	msgs, _, err := e.messages(root, "messages", msgRules{})
	if err != nil || !withUsage {
		return msgs, cfg, core.Usage{}, err
	}
	u, err := decodeUsage(root.Get("usage"), len(msgs))
	return msgs, cfg, u, err
}

// Score is the score export: {messages, config} → {"scores":[…]}.
func (e *Env) Score(in []byte) ([]byte, error) {
	msgs, cfg, err := e.messagesAndConfig(in)
	if err != nil {
		return nil, err
	}
	b := e.outBuffer(16 + len(msgs)*20)
	b = append(b, `{"scores":[`...)
	for i := range msgs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendFloat(b, core.Score(&msgs[i], i, len(msgs), &cfg.Scoring))
	}
	return append(b, "]}"...), nil
}

// Split is the split export: {messages, config, usage?} →
// {"to_compress":[…],"to_keep":[…],"prior_summary":msg|null}. usage is
// checked as for shouldCompact; a split by keep_recent does not depend
// on it.
func (e *Env) Split(in []byte) ([]byte, error) {
	msgs, cfg, _, err := e.messagesConfigUsage(in, true)
	if err != nil {
		return nil, err
	}
	res := core.Split(msgs, &cfg)
	b := e.outBuffer(len(in) + 64)
	b = append(b, `{"to_compress":`...)
	b = appendRawList(b, msgs, res.ToCompress)
	b = append(b, `,"to_keep":`...)
	b = appendRawList(b, msgs, res.ToKeep)
	b = append(b, `,"prior_summary":`...)
	if res.Prior >= 0 {
		b = append(b, msgs[res.Prior].Raw...)
	} else {
		b = append(b, "null"...)
	}
	return append(b, '}'), nil
}

// appendRawList writes the messages at idxs, each exactly as received.
func appendRawList(b []byte, msgs []core.Message, idxs []int) []byte {
	b = append(b, '[')
	for k, i := range idxs {
		if k > 0 {
			b = append(b, ',')
		}
		b = append(b, msgs[i].Raw...)
	}
	return append(b, ']')
}

// Chunk is the chunk export: {messages, config} → {"chunks":[[…],…]}, by
// chunk_size, or by max_chunk_tokens when set.
func (e *Env) Chunk(in []byte) ([]byte, error) {
	msgs, cfg, err := e.messagesAndConfig(in)
	if err != nil {
		return nil, err
	}
	chunks := core.Chunk(msgs, core.Identity(len(msgs)), cfg.ChunkSize, cfg.ChunkTokens(), &cfg)
	b := e.outBuffer(len(in) + 16 + 4*len(chunks))
	b = append(b, `{"chunks":[`...)
	for k, c := range chunks {
		if k > 0 {
			b = append(b, ',')
		}
		b = appendRawList(b, msgs, c)
	}
	return append(b, "]}"...), nil
}

// EstimateTokens is the estimateTokens export: {text, config?} or
// {messages, config?} → {"tokens":n}: the estimate of
// docs/spec.md#counting-tokens-and-the-window under config's token_estimator
// (for messages: tool inputs and outputs, image_tokens per image, per-message
// framing). overhead_tokens is not added: hosts compute it with this export.
func (e *Env) EstimateTokens(in []byte) ([]byte, error) {
	root, err := parseInput(in)
	if err != nil {
		return nil, err
	}
	cfg, err := e.config(root)
	if err != nil {
		return nil, err
	}
	var n int
	if t := root.Get("text"); t.Exists() {
		if t.Type != gjson.String {
			return nil, wrongType("text", "a string", t)
		}
		n = core.TextTokens(t.Str, &cfg)
	} else if root.Get("messages").Exists() {
		msgs, _, err := e.messages(root, "messages", msgRules{})
		if err != nil {
			return nil, err
		}
		n = core.HistoryTokens(msgs, &cfg)
	} else {
		return nil, core.Invalid("text", "text or messages is required")
	}
	return append(strconv.AppendInt([]byte(`{"tokens":`), int64(n), 10), '}'), nil
}

// ShouldCompact is the shouldCompact export: {messages, config, usage?}
// → {"due":bool,"tokens":n,"limit":n,"prepare_limit":n}; tokens per
// docs/spec.md#counting-tokens-and-the-window (core.ContextTokens).
func (e *Env) ShouldCompact(in []byte) ([]byte, error) {
	msgs, cfg, usage, err := e.messagesConfigUsage(in, true)
	if err != nil {
		return nil, err
	}
	due, tokens, limit := core.ShouldCompact(msgs, &cfg, &usage)
	b := append([]byte(nil), `{"due":`...)
	b = strconv.AppendBool(b, due)
	b = append(b, `,"tokens":`...)
	b = strconv.AppendInt(b, int64(tokens), 10)
	b = append(b, `,"limit":`...)
	b = strconv.AppendInt(b, int64(limit), 10)
	b = append(b, `,"prepare_limit":`...)
	b = strconv.AppendInt(b, int64(cfg.PrepareLimit(limit)), 10)
	return append(b, '}'), nil
}

// BuildSummarizationRequest is the buildSummarizationRequest export:
// {system_prompt, previous_summary, messages, model, max_tokens, config} →
// ModelRequest. model and max_tokens default to config's model and
// max_summary_tokens; system_prompt to config's prompt.
func (e *Env) BuildSummarizationRequest(in []byte) ([]byte, error) {
	root, cfg, sys, model, maxTokens, err := e.requestInput(in)
	if err != nil {
		return nil, err
	}
	prev, err := optString(root.Get("previous_summary"), "previous_summary")
	if err != nil {
		return nil, err
	}
	msgs, _, err := e.messages(root, "messages", msgRules{})
	if err != nil {
		return nil, err
	}
	req := core.BuildSummarizationRequest(sys, prev, msgs, model, maxTokens, cfg.MaxMessageChars)
	return AppendModelRequest(e.outBuffer(len(in)+len(core.DefaultDirective)+256), &req), nil
}

// requestInput reads what both request builders share: the input, its
// config, and system_prompt / model / max_tokens with their defaults.
func (e *Env) requestInput(in []byte) (root object, cfg core.Config, sys, model string, maxTokens int, err error) {
	if root, err = parseInput(in); err != nil {
		return
	}
	if cfg, err = e.config(root); err != nil {
		return
	}
	sys, model, maxTokens, err = requestParams(root, &cfg)
	return
}

func requestParams(root object, cfg *core.Config) (sys, model string, maxTokens int, err error) {
	sys = cfg.Prompt
	if v := root.Get("system_prompt"); v.Exists() && v.Type != gjson.Null {
		if sys, err = optString(v, "system_prompt"); err != nil {
			return
		}
	}
	model = cfg.Model
	if v := root.Get("model"); v.Exists() && v.Type != gjson.Null {
		if model, err = optString(v, "model"); err != nil {
			return
		}
	}
	maxTokens, err = optInt(root.Get("max_tokens"), "max_tokens", cfg.MaxSummaryTokens, 1)
	return
}

// BuildResummarizationRequest is the buildResummarizationRequest export:
// {system_prompt, batch_contents, model, max_tokens, config} → ModelRequest.
func (e *Env) BuildResummarizationRequest(in []byte) ([]byte, error) {
	root, _, sys, model, maxTokens, err := e.requestInput(in)
	if err != nil {
		return nil, err
	}
	bc, n := root.array("batch_contents")
	if !bc.Exists() {
		return nil, required("batch_contents")
	}
	if !bc.IsArray() {
		return nil, wrongType("batch_contents", "an array of strings", bc)
	}
	contents := make([]string, 0, max(n, 0))
	a := e.arena()
	i := 0
	bc.ForEach(func(_, v gjson.Result) bool {
		if v.Type != gjson.String {
			err = wrongType(idx("batch_contents", i), "a string", v)
			return false
		}
		contents = append(contents, a.keep(v.Str))
		i++
		return true
	})
	if err != nil {
		return nil, err
	}
	req := core.BuildResummarizationRequest(sys, contents, model, maxTokens)
	return AppendModelRequest(e.outBuffer(len(in)+len(core.DefaultDirective)+256), &req), nil
}

// BuildClipArchive is the buildClipArchive export: {batches, config,
// total_messages_compressed} → {"content":"…"}. The total defaults to the
// sum of the batches' message_count.
func (e *Env) BuildClipArchive(in []byte) ([]byte, error) {
	root, err := parseInput(in)
	if err != nil {
		return nil, err
	}
	cfg, err := e.config(root)
	if err != nil {
		return nil, err
	}
	br, n := root.array("batches")
	batches, err := decodeBatches(br, n, "batches", e.arena())
	if err != nil {
		return nil, err
	}
	sum := 0
	for i := range batches {
		sum += batches[i].MessageCount
	}
	total, err := optInt(root.Get("total_messages_compressed"), "total_messages_compressed", sum, 0)
	if err != nil {
		return nil, err
	}
	text := core.BuildClipArchive(batches, cfg.ClipFirst, cfg.ClipLast, total)
	b := append(make([]byte, 0, len(text)+32), `{"content":`...)
	b = core.AppendJSONString(b, text)
	return append(b, '}'), nil
}

// VersionInfo is the version export: {} → {"version":"…","abi":1}.
func (e *Env) VersionInfo(in []byte) ([]byte, error) {
	if len(in) > 0 {
		if _, err := parseInput(in); err != nil {
			return nil, err
		}
	}
	b := append([]byte(nil), `{"version":`...)
	b = core.AppendJSONString(b, Version)
	b = append(b, `,"abi":`...)
	b = strconv.AppendInt(b, ABI, 10)
	return append(b, '}'), nil
}

// ExtractiveSummary is the extractiveSummary export: a ModelRequest →
// a ModelResponse summarized by core's deterministic extractive
// summarizer. Hosts in any language use it as their offline "LLM".
func (e *Env) ExtractiveSummary(in []byte) ([]byte, error) {
	root, err := parseInput(in)
	if err != nil {
		return nil, err
	}
	_, n := root.array("messages")
	req, err := decodeModelFields(root, n, "request", e.arena())
	if err != nil {
		return nil, err
	}
	text := core.ExtractiveSummary(&req)
	resp := core.ModelResponse{Content: []core.ContentBlock{{Type: "text", Text: text}}, StopReason: "end_turn",
		InputTokens: core.EstimateTokens(req.System) + requestTokens(&req), OutputTokens: core.EstimateTokens(text)}
	return AppendModelResponse(make([]byte, 0, len(text)+128), &resp), nil
}

func requestTokens(r *core.ModelRequest) int {
	n := 0
	for i := range r.Messages {
		n += core.EstimateTokens(r.Messages[i].Content)
	}
	return n
}
