package core

import (
	"math"
	"strconv"
	"strings"
)

// Config holds every [summarization] key of docs/spec.md#config. Field
// comments give the wire key; DefaultConfig gives the defaults. Build one with
// DefaultConfig and Set, never by hand, so validation cannot be skipped.
type Config struct {
	ChunkSize        int     // chunk_size, ≥ 1
	KeepRecent       int     // keep_recent, ≥ 0
	MaxSummaryTokens int     // max_summary_tokens, ≥ 1
	ClipFirst        int     // clip_first, ≥ 0
	ClipLast         int     // clip_last, ≥ 0
	Prompt           string  // prompt; "" means the default system prompt
	Scoring          Scoring // role weights, decay, bonuses, keywords

	CompactionTimeoutMs    int     // compaction_timeout (ms), ≥ 1
	CompactionMaxRetries   int     // compaction_max_retries, ≥ 0
	BackoffBaseMs          int     // backoff_base_ms, ≥ 0
	MaxChunkTokens         int     // max_chunk_tokens; 0 = unset (chunk by count)
	MaxConsecutiveFailures int     // max_consecutive_failures, ≥ 1
	BreakerCooldownMs      int     // breaker_cooldown_ms, ≥ 0
	ContextBudget          float64 // context_budget, (0, 1]
	ModelMaxTokens         int     // model_max_tokens, ≥ 1
	PrepareAt              float64 // prepare_at, (0, 1]: the soft threshold, a share of the limit
	TargetTokens           int     // target_tokens; 0 = unset
	Fallback               string  // fallback: "none" | "extractive"
	Summarizer             string  // summarizer: "llm" | "extractive" (in the plug-in, never llm_complete)
	Model                  string  // model
	PinSystem              bool    // pin_system
	MaxMessageChars        int     // max_message_chars, ≥ 1
	TokenEstimator         string  // token_estimator: "conservative" | "chars4"
	ImageTokens            int     // image_tokens, ≥ 0
	OverheadTokens         int     // overhead_tokens, ≥ 0
	// ClearToolResults is clear_tool_results: keep this many of the most
	// recent tool results whole and clear the older ones before anything
	// is summarized (ClearToolResultsUnset: no such stage).
	ClearToolResults int
	// ClearExcludeTools is clear_exclude_tools: the tools whose results
	// are never cleared.
	ClearExcludeTools []string
	// ChunkTokensAuto is max_chunk_tokens "auto": chunks sized to what
	// one summarization request holds (see ChunkTokens).
	ChunkTokensAuto bool
}

// ClearToolResultsUnset is ClearToolResults when clear_tool_results is
// not set (null): tool results are cleared only when the window
// guarantee needs it.
const ClearToolResultsUnset = -1

// Scoring holds the importance-scoring weights (seed 001).
type Scoring struct {
	RoleWeightSystem    float64
	RoleWeightUser      float64
	RoleWeightAssistant float64
	RecencyDecay        float64
	QuestionBonus       float64
	ToolCallBonus       float64
	KeywordBonus        float64
	ContentLengthWeight float64
	// Keywords as configured; lower holds them lower-cased and
	// de-duplicated, and match searches for them, both computed once by
	// SetKeywords and never changed afterwards (copies share them).
	Keywords []string
	lower    []string
	match    *keywordMatcher // nil: search the slow way (non-ASCII or > maxKeywords keywords)
}

// DefaultKeywords is the default important_keywords list.
var DefaultKeywords = []string{"error", "fail", "bug", "fix", "decision", "agreed", "constraint", "requirement"}

// DefaultScoring returns the seed's default scoring weights.
func DefaultScoring() Scoring {
	s := Scoring{
		RoleWeightSystem:    10.0,
		RoleWeightUser:      5.0,
		RoleWeightAssistant: 3.0,
		RecencyDecay:        0.95,
		QuestionBonus:       2.0,
		ToolCallBonus:       4.0,
		KeywordBonus:        1.5,
		ContentLengthWeight: 1.0,
	}
	s.SetKeywords(DefaultKeywords)
	return s
}

// SetKeywords replaces the important keywords.
func (s *Scoring) SetKeywords(kw []string) {
	s.Keywords = append([]string(nil), kw...)
	s.lower = nil
	seen := make(map[string]bool, len(kw))
	ascii := true
	for _, k := range kw {
		l := strings.ToLower(k)
		if l == "" || seen[l] {
			continue
		}
		seen[l] = true
		ascii = ascii && isASCII(l)
		s.lower = append(s.lower, l)
	}
	s.match = nil
	if ascii {
		s.match = newKeywordMatcher(s.lower)
	}
}

// DefaultConfig returns a Config with every default of docs/spec.md#config.
func DefaultConfig() Config {
	return Config{
		ChunkSize:              20,
		KeepRecent:             5,
		MaxSummaryTokens:       1024,
		ClipFirst:              2,
		ClipLast:               2,
		Scoring:                DefaultScoring(),
		CompactionTimeoutMs:    120000,
		CompactionMaxRetries:   2,
		BackoffBaseMs:          100,
		MaxConsecutiveFailures: 3,
		BreakerCooldownMs:      60000,
		ContextBudget:          0.8,
		ModelMaxTokens:         200000,
		PrepareAt:              DefaultPrepareAt,
		Fallback:               "none",
		Summarizer:             SummarizerLLM,
		PinSystem:              true,
		MaxMessageChars:        20000,
		TokenEstimator:         EstimatorConservative,
		ImageTokens:            1600,
		ClearToolResults:       ClearToolResultsUnset,
	}
}

// ValueKind tells which field of a Value is set.
type ValueKind uint8

const (
	KindNull ValueKind = iota
	KindString
	KindNumber
	KindBool
	KindStrings // a list of strings
	KindOther   // an object, or a list holding something other than strings
)

// Value is one configuration value as a decoder found it, independent of
// the source format (JSON, TOML, an Extism manifest string). Config.Set
// does all validation, so every source gets the same rules and messages.
type Value struct {
	Kind ValueKind
	Str  string
	Num  float64
	Bool bool
	List []string
}

// Keys lists every configuration key Set accepts, in the order of
// docs/spec.md#config.
var Keys = []string{
	"chunk_size", "keep_recent", "max_summary_tokens", "clip_first", "clip_last", "prompt",
	"role_weight_system", "role_weight_user", "role_weight_assistant", "recency_decay",
	"question_bonus", "tool_call_bonus", "keyword_bonus", "content_length_weight",
	"important_keywords", "compaction_timeout", "compaction_max_retries", "backoff_base_ms",
	"max_chunk_tokens", "max_consecutive_failures", "breaker_cooldown_ms", "context_budget",
	"model_max_tokens", "prepare_at", "target_tokens", "fallback", "summarizer", "model", "pin_system", "max_message_chars",
	"token_estimator", "image_tokens", "overhead_tokens", "clear_tool_results", "clear_exclude_tools",
}

// Values of the summarizer key.
const (
	SummarizerLLM        = "llm"
	SummarizerExtractive = "extractive"
)

// ErrUnknownKey is returned by Set for a key clipfold does not know.
// Callers warn and go on: unknown keys are never fatal.
var ErrUnknownKey = &Error{Code: CodeInvalidInput, Msg: "unknown configuration key"}

// MaxInt bounds integer keys so that arithmetic on them cannot overflow,
// on 32-bit targets too (TinyGo's wasm has a 32-bit int).
const MaxInt = 1<<31 - 1

// Set validates v for key and stores it. field is the path used in error
// messages (e.g. "config.chunk_size"); "" means key itself. A null value
// resets an optional key (prompt, max_chunk_tokens, target_tokens,
// clear_tool_results, clear_exclude_tools) and
// leaves any other key at its current value.
func (c *Config) Set(key string, v Value, field string) error {
	if field == "" {
		field = key
	}
	intKey := func(dst *int, min int, optional bool) error {
		if v.Kind == KindNull {
			if optional {
				*dst = 0
			}
			return nil
		}
		n, err := intOf(v, field, min)
		if err != nil {
			return err
		}
		*dst = n
		return nil
	}
	floatKey := func(dst *float64, min, max float64) error {
		if v.Kind == KindNull {
			return nil
		}
		if v.Kind != KindNumber {
			return Invalid(field, "must be a number, got "+v.kindName())
		}
		if math.IsNaN(v.Num) || v.Num < min || v.Num > max {
			return Invalid(field, "must be "+rangeText(min, max)+", got "+fmtNum(v.Num))
		}
		*dst = v.Num
		return nil
	}
	s := &c.Scoring
	switch key {
	case "chunk_size":
		return intKey(&c.ChunkSize, 1, false)
	case "keep_recent":
		return intKey(&c.KeepRecent, 0, false)
	case "max_summary_tokens":
		return intKey(&c.MaxSummaryTokens, 1, false)
	case "clip_first":
		return intKey(&c.ClipFirst, 0, false)
	case "clip_last":
		return intKey(&c.ClipLast, 0, false)
	case "prompt":
		switch v.Kind {
		case KindNull:
			c.Prompt = ""
		case KindString:
			c.Prompt = v.Str
		default:
			return Invalid(field, "must be a string or null, got "+v.kindName())
		}
		return nil
	case "role_weight_system":
		return floatKey(&s.RoleWeightSystem, 0, math.MaxFloat64)
	case "role_weight_user":
		return floatKey(&s.RoleWeightUser, 0, math.MaxFloat64)
	case "role_weight_assistant":
		return floatKey(&s.RoleWeightAssistant, 0, math.MaxFloat64)
	case "recency_decay":
		return floatKey(&s.RecencyDecay, 0, 1)
	case "question_bonus":
		return floatKey(&s.QuestionBonus, 0, math.MaxFloat64)
	case "tool_call_bonus":
		return floatKey(&s.ToolCallBonus, 0, math.MaxFloat64)
	case "keyword_bonus":
		return floatKey(&s.KeywordBonus, 0, math.MaxFloat64)
	case "content_length_weight":
		return floatKey(&s.ContentLengthWeight, 0, math.MaxFloat64)
	case "important_keywords":
		switch v.Kind {
		case KindNull:
			return nil
		case KindStrings:
			s.SetKeywords(v.List)
			return nil
		}
		return Invalid(field, "must be an array of strings, got "+v.kindName())
	case "compaction_timeout":
		return intKey(&c.CompactionTimeoutMs, 1, false)
	case "compaction_max_retries":
		return intKey(&c.CompactionMaxRetries, 0, false)
	case "backoff_base_ms":
		return intKey(&c.BackoffBaseMs, 0, false)
	case "max_chunk_tokens":
		switch {
		case v.Kind == KindString && v.Str == ChunkTokensAuto:
			c.MaxChunkTokens, c.ChunkTokensAuto = 0, true
			return nil
		case v.Kind != KindNull && v.Kind != KindNumber:
			return Invalid(field, `must be an integer ≥ 1, "auto" or null, got `+v.describe())
		}
		if err := intKey(&c.MaxChunkTokens, 1, true); err != nil {
			return err
		}
		c.ChunkTokensAuto = false
		return nil
	case "max_consecutive_failures":
		return intKey(&c.MaxConsecutiveFailures, 1, false)
	case "breaker_cooldown_ms":
		return intKey(&c.BreakerCooldownMs, 0, false)
	case "context_budget":
		if v.Kind == KindNumber && v.Num == 0 {
			return Invalid(field, "must be a number in (0, 1], got 0")
		}
		return floatKey(&c.ContextBudget, 0, 1)
	case "model_max_tokens":
		return intKey(&c.ModelMaxTokens, 1, false)
	case "prepare_at":
		if v.Kind == KindNumber && v.Num == 0 {
			return Invalid(field, "must be a number in (0, 1], got 0")
		}
		return floatKey(&c.PrepareAt, 0, 1)
	case "target_tokens":
		return intKey(&c.TargetTokens, 1, true)
	case "fallback":
		if v.Kind == KindNull {
			return nil
		}
		if v.Kind != KindString || (v.Str != "none" && v.Str != "extractive") {
			return Invalid(field, `must be "none" or "extractive", got `+v.describe())
		}
		c.Fallback = v.Str
		return nil
	case "summarizer":
		if v.Kind == KindNull {
			return nil
		}
		if v.Kind != KindString || (v.Str != SummarizerLLM && v.Str != SummarizerExtractive) {
			return Invalid(field, `must be "llm" or "extractive", got `+v.describe())
		}
		c.Summarizer = v.Str
		return nil
	case "model":
		switch v.Kind {
		case KindNull:
			c.Model = ""
		case KindString:
			c.Model = v.Str
		default:
			return Invalid(field, "must be a string, got "+v.kindName())
		}
		return nil
	case "pin_system":
		switch v.Kind {
		case KindNull:
			return nil
		case KindBool:
			c.PinSystem = v.Bool
			return nil
		}
		return Invalid(field, "must be true or false, got "+v.kindName())
	case "max_message_chars":
		return intKey(&c.MaxMessageChars, 1, false)
	case "token_estimator":
		if v.Kind == KindNull {
			return nil
		}
		if v.Kind != KindString || (v.Str != EstimatorConservative && v.Str != EstimatorChars4) {
			return Invalid(field, `must be "conservative" or "chars4", got `+v.describe())
		}
		c.TokenEstimator = v.Str
		return nil
	case "image_tokens":
		return intKey(&c.ImageTokens, 0, false)
	case "overhead_tokens":
		return intKey(&c.OverheadTokens, 0, false)
	case "clear_tool_results":
		if v.Kind == KindNull {
			c.ClearToolResults = ClearToolResultsUnset
			return nil
		}
		return intKey(&c.ClearToolResults, 0, false)
	case "clear_exclude_tools":
		switch v.Kind {
		case KindNull:
			c.ClearExcludeTools = nil
			return nil
		case KindStrings:
			c.ClearExcludeTools = append([]string(nil), v.List...)
			return nil
		}
		return Invalid(field, "must be an array of tool names, got "+v.kindName())
	}
	return ErrUnknownKey
}

// SetString sets key from its text form, as an Extism manifest config map
// or an environment variable gives it ("20", "0.9", "true", "a,b" or a JSON
// array of strings for important_keywords).
func (c *Config) SetString(key, s, field string) error {
	v, err := ParseValue(key, s, field)
	if err != nil {
		return err
	}
	return c.Set(key, v, field)
}

// ParseValue reads the text form of key's value (a TOML file's, a
// command-line flag's, the manifest config's) as the Value Set takes:
// a string for the string keys, a boolean for pin_system, a
// comma-separated list for the list keys, else a number ("" or "null":
// null). It is the one place that knows each key's kind, so hosts that
// send a text value on as JSON ask it rather than keep a list of their own.
func ParseValue(key, s, field string) (Value, error) {
	switch key {
	case "prompt", "fallback", "summarizer", "model", "token_estimator":
		return Value{Kind: KindString, Str: s}, nil
	case "max_chunk_tokens":
		if strings.TrimSpace(s) == ChunkTokensAuto {
			return Value{Kind: KindString, Str: ChunkTokensAuto}, nil
		}
	case "pin_system":
		b, err := strconv.ParseBool(strings.TrimSpace(s))
		if err != nil {
			return Value{}, Invalid(orKey(field, key), "must be true or false, got "+strconv.Quote(s))
		}
		return Value{Kind: KindBool, Bool: b}, nil
	case "important_keywords", "clear_exclude_tools":
		return Value{Kind: KindStrings, List: splitKeywords(s)}, nil
	}
	t := strings.TrimSpace(s)
	if t == "" || t == "null" {
		return Value{Kind: KindNull}, nil
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil {
		if !isKnownKey(key) {
			return Value{}, ErrUnknownKey
		}
		return Value{}, Invalid(orKey(field, key), "must be a number, got "+strconv.Quote(s))
	}
	return Value{Kind: KindNumber, Num: f}, nil
}

func isKnownKey(key string) bool {
	for _, k := range Keys {
		if k == key {
			return true
		}
	}
	return false
}

func orKey(field, key string) string {
	if field == "" {
		return key
	}
	return field
}

// splitKeywords reads "a, b" or `["a","b"]`.
func splitKeywords(s string) []string {
	t := strings.TrimSpace(s)
	t = strings.TrimPrefix(t, "[")
	t = strings.TrimSuffix(t, "]")
	var out []string
	for _, p := range strings.Split(t, ",") {
		p = strings.TrimSpace(p)
		p = strings.Trim(p, `"'`)
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

func intOf(v Value, field string, min int) (int, error) {
	if v.Kind != KindNumber {
		return 0, Invalid(field, "must be an integer ≥ "+strconv.Itoa(min)+", got "+v.kindName())
	}
	n := v.Num
	if math.IsNaN(n) || n != math.Trunc(n) {
		return 0, Invalid(field, "must be an integer ≥ "+strconv.Itoa(min)+", got "+fmtNum(n))
	}
	if n < float64(min) {
		return 0, Invalid(field, "must be an integer ≥ "+strconv.Itoa(min)+", got "+fmtNum(n))
	}
	if n > MaxInt {
		return 0, Invalid(field, "must be at most "+strconv.Itoa(MaxInt)+", got "+fmtNum(n))
	}
	return int(n), nil
}

func rangeText(min, max float64) string {
	if max == math.MaxFloat64 {
		return "a number ≥ " + fmtNum(min)
	}
	return "a number in [" + fmtNum(min) + ", " + fmtNum(max) + "]"
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func (v Value) kindName() string {
	switch v.Kind {
	case KindNull:
		return "null"
	case KindString:
		return "a string"
	case KindNumber:
		return "a number"
	case KindBool:
		return "a boolean"
	case KindStrings:
		return "an array"
	}
	return "an object or mixed array"
}

func (v Value) describe() string {
	if v.Kind == KindString {
		return strconv.Quote(v.Str)
	}
	return v.kindName()
}
