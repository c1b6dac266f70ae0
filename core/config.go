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
	if k, ok := intKeys[key]; ok {
		return setInt(k.at(c), v, field, k.min, k.optional)
	}
	if k, ok := floatKeys[key]; ok {
		return setFloat(k.at(c), v, field, k.min, k.max, k.positive)
	}
	if k, ok := choiceKeys[key]; ok {
		return setChoice(k.at(c), v, field, k.choices)
	}
	return c.setOther(key, v, field)
}

// intKey is an integer key: where Set stores it, its least value, and
// whether null resets it to 0 (unset) rather than leaving it.
type intKey struct {
	at       func(*Config) *int
	min      int
	optional bool
}

// intKeys are the keys setInt validates alone.
var intKeys = map[string]intKey{
	"chunk_size":               {func(c *Config) *int { return &c.ChunkSize }, 1, false},
	"keep_recent":              {func(c *Config) *int { return &c.KeepRecent }, 0, false},
	"max_summary_tokens":       {func(c *Config) *int { return &c.MaxSummaryTokens }, 1, false},
	"clip_first":               {func(c *Config) *int { return &c.ClipFirst }, 0, false},
	"clip_last":                {func(c *Config) *int { return &c.ClipLast }, 0, false},
	"compaction_timeout":       {func(c *Config) *int { return &c.CompactionTimeoutMs }, 1, false},
	"compaction_max_retries":   {func(c *Config) *int { return &c.CompactionMaxRetries }, 0, false},
	"backoff_base_ms":          {func(c *Config) *int { return &c.BackoffBaseMs }, 0, false},
	"max_consecutive_failures": {func(c *Config) *int { return &c.MaxConsecutiveFailures }, 1, false},
	"breaker_cooldown_ms":      {func(c *Config) *int { return &c.BreakerCooldownMs }, 0, false},
	"model_max_tokens":         {func(c *Config) *int { return &c.ModelMaxTokens }, 1, false},
	"target_tokens":            {func(c *Config) *int { return &c.TargetTokens }, 1, true},
	"max_message_chars":        {func(c *Config) *int { return &c.MaxMessageChars }, 1, false},
	"image_tokens":             {func(c *Config) *int { return &c.ImageTokens }, 0, false},
	"overhead_tokens":          {func(c *Config) *int { return &c.OverheadTokens }, 0, false},
}

// floatKey is a number key: where Set stores it, its range, and whether
// 0 is refused though the range holds it (a share that must be > 0).
type floatKey struct {
	at       func(*Config) *float64
	min, max float64
	positive bool
}

// floatKeys are the keys setFloat validates alone.
var floatKeys = map[string]floatKey{
	"role_weight_system":    {func(c *Config) *float64 { return &c.Scoring.RoleWeightSystem }, 0, math.MaxFloat64, false},
	"role_weight_user":      {func(c *Config) *float64 { return &c.Scoring.RoleWeightUser }, 0, math.MaxFloat64, false},
	"role_weight_assistant": {func(c *Config) *float64 { return &c.Scoring.RoleWeightAssistant }, 0, math.MaxFloat64, false},
	"recency_decay":         {func(c *Config) *float64 { return &c.Scoring.RecencyDecay }, 0, 1, false},
	"question_bonus":        {func(c *Config) *float64 { return &c.Scoring.QuestionBonus }, 0, math.MaxFloat64, false},
	"tool_call_bonus":       {func(c *Config) *float64 { return &c.Scoring.ToolCallBonus }, 0, math.MaxFloat64, false},
	"keyword_bonus":         {func(c *Config) *float64 { return &c.Scoring.KeywordBonus }, 0, math.MaxFloat64, false},
	"content_length_weight": {func(c *Config) *float64 { return &c.Scoring.ContentLengthWeight }, 0, math.MaxFloat64, false},
	"context_budget":        {func(c *Config) *float64 { return &c.ContextBudget }, 0, 1, true},
	"prepare_at":            {func(c *Config) *float64 { return &c.PrepareAt }, 0, 1, true},
}

// choiceKey is a key that takes one of two strings: where Set stores it,
// and the two.
type choiceKey struct {
	at      func(*Config) *string
	choices [2]string
}

// choiceKeys are the keys setChoice validates alone.
var choiceKeys = map[string]choiceKey{
	"fallback":        {func(c *Config) *string { return &c.Fallback }, [2]string{"none", "extractive"}},
	"summarizer":      {func(c *Config) *string { return &c.Summarizer }, [2]string{SummarizerLLM, SummarizerExtractive}},
	"token_estimator": {func(c *Config) *string { return &c.TokenEstimator }, [2]string{EstimatorConservative, EstimatorChars4}},
}

// setInt stores v, an integer ≥ min, in dst; null leaves dst as it is,
// or resets it to 0 when the key is optional.
func setInt(dst *int, v Value, field string, min int, optional bool) error {
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

// setFloat stores v, a number in [min, max] (and not 0 when positive),
// in dst; null leaves dst as it is.
func setFloat(dst *float64, v Value, field string, min, max float64, positive bool) error {
	if positive && v.Kind == KindNumber && v.Num == 0 {
		return Invalid(field, "must be a number in (0, 1], got 0")
	}
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

// setChoice stores v, one of choices, in dst; null leaves dst as it is.
func setChoice(dst *string, v Value, field string, choices [2]string) error {
	if v.Kind == KindNull {
		return nil
	}
	if v.Kind != KindString || (v.Str != choices[0] && v.Str != choices[1]) {
		return Invalid(field, `must be "`+choices[0]+`" or "`+choices[1]+`", got `+v.describe())
	}
	*dst = v.Str
	return nil
}

// setOther sets the keys whose rules are their own: strings that null
// clears, lists, a boolean, and integer keys that also take "auto" or
// whose null means unset.
func (c *Config) setOther(key string, v Value, field string) error {
	switch key {
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
	case "important_keywords":
		switch v.Kind {
		case KindNull:
			return nil
		case KindStrings:
			c.Scoring.SetKeywords(v.List)
			return nil
		}
		return Invalid(field, "must be an array of strings, got "+v.kindName())
	case "max_chunk_tokens":
		switch {
		case v.Kind == KindString && v.Str == ChunkTokensAuto:
			c.MaxChunkTokens, c.ChunkTokensAuto = 0, true
			return nil
		case v.Kind != KindNull && v.Kind != KindNumber:
			return Invalid(field, `must be an integer ≥ 1, "auto" or null, got `+v.describe())
		}
		if err := setInt(&c.MaxChunkTokens, v, field, 1, true); err != nil {
			return err
		}
		c.ChunkTokensAuto = false
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
	case "clear_tool_results":
		if v.Kind == KindNull {
			c.ClearToolResults = ClearToolResultsUnset
			return nil
		}
		return setInt(&c.ClearToolResults, v, field, 0, false)
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
