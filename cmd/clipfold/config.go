package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/hostfuncs/llm"
	"github.com/clipfold/clipfold/hostfuncs/store"
	"github.com/clipfold/clipfold/internal/redact"
)

// hostKeys are the [summarization] keys that configure the host (which LLM
// to call), not the plug-in, as in the seeds' config.toml.
var hostKeys = []string{"provider", "name", "base_url", "api_key", "api_key_env"}

// settings is the effective configuration: the plug-in's config (every
// key of docs/spec.md#config, validated by core.Config.Set) and the LLM
// provider's.
type settings struct {
	provider  string // default llm.Extractive
	model     string
	baseURL   string
	apiKey    string
	apiKeyEnv string

	emb      embeddingsSettings
	embedder store.Embedder // built from emb by prepare (nil: none)

	cfg core.Config
	// set holds every config key given in the file or by a flag, as the JSON
	// value sent in each call's "config" (later sources replace earlier).
	set map[string][]byte
}

func newSettings() *settings {
	return &settings{provider: llm.Extractive, cfg: core.DefaultConfig(), set: map[string][]byte{}}
}

// configJSON is the "config" object every export call gets.
func (s *settings) configJSON() []byte {
	keys := make([]string, 0, len(s.set))
	for k := range s.set {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keyIndex(keys[i]) < keyIndex(keys[j]) })
	b := []byte{'{'}
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, k)
		b = append(b, ':')
		b = append(b, s.set[k]...)
	}
	return append(b, '}')
}

func keyIndex(k string) int {
	for i, key := range core.Keys {
		if key == k {
			return i
		}
	}
	return len(core.Keys)
}

// setValue validates v for a config key and records it. where names the
// source in errors ("config.toml: [summarization] chunk_size", "--chunk-size").
func (s *settings) setValue(key string, v core.Value, where string) error {
	if err := s.cfg.Set(key, v, where); err != nil {
		return configError(err)
	}
	s.set[key] = valueJSON(v)
	return nil
}

// setString is setValue for text (flags, --set KEY=VALUE).
func (s *settings) setString(key, text, where string) error {
	v, err := core.ParseValue(key, text, where)
	if err == nil {
		err = s.cfg.Set(key, v, where)
	}
	if err != nil {
		if errors.Is(err, core.ErrUnknownKey) {
			return usagef("%s: unknown configuration key %q; valid keys are %s", where, key, strings.Join(core.Keys, ", "))
		}
		return configError(err)
	}
	s.set[key] = valueJSON(v)
	return nil
}

// configError turns core's "invalid_input: key: …" into a usage error
// (exit 2) that names the key and the allowed range.
func configError(err error) error {
	var ce *core.Error
	if errors.As(err, &ce) {
		return usagef("%s: %s", ce.Field, ce.Msg)
	}
	return usagef("%v", err)
}

func valueJSON(v core.Value) []byte {
	switch v.Kind {
	case core.KindString:
		return mustMarshal(v.Str)
	case core.KindNumber:
		if v.Num == math.Trunc(v.Num) && math.Abs(v.Num) < 1e15 {
			return strconv.AppendInt(nil, int64(v.Num), 10)
		}
		return strconv.AppendFloat(nil, v.Num, 'g', -1, 64)
	case core.KindBool:
		return strconv.AppendBool(nil, v.Bool)
	case core.KindStrings:
		if v.List == nil {
			return []byte("[]")
		}
		return mustMarshal(v.List)
	}
	return []byte("null")
}

// tomlValue converts a decoded TOML value to a core.Value.
func tomlValue(x any) core.Value {
	switch t := x.(type) {
	case string:
		return core.Value{Kind: core.KindString, Str: t}
	case int64:
		return core.Value{Kind: core.KindNumber, Num: float64(t)}
	case float64:
		return core.Value{Kind: core.KindNumber, Num: t}
	case bool:
		return core.Value{Kind: core.KindBool, Bool: t}
	case []any:
		list := make([]string, 0, len(t))
		for _, e := range t {
			s, ok := e.(string)
			if !ok {
				return core.Value{Kind: core.KindOther}
			}
			list = append(list, s)
		}
		return core.Value{Kind: core.KindStrings, List: list}
	case nil:
		return core.Value{Kind: core.KindNull}
	}
	return core.Value{Kind: core.KindOther}
}

// loadConfigFile reads the [summarization] section of a TOML file (the
// seeds' config.toml) into s. Other sections are ignored; unknown keys in
// [summarization] are reported through warn and ignored.
func (s *settings) loadConfigFile(path string, warn func(string)) error {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return usagef("--config: %s does not exist", path)
		}
		return fmt.Errorf("--config: %w", err)
	}
	var doc map[string]any
	md, err := toml.Decode(string(data), &doc)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return usagef("%s:%d:%d: invalid TOML: %s", path, pe.Position.Line, pe.Position.Col, pe.Message)
		}
		return usagef("%s: invalid TOML: %v", path, err)
	}
	if err := s.emb.loadSection(path, doc, md, warn); err != nil {
		return err
	}
	// A [summarization] key written before any section header is a
	// top-level key: read as it is, the file would silently use the
	// defaults for it.
	for _, k := range md.Keys() {
		if len(k) != 1 {
			continue
		}
		if _, isTable := doc[k[0]].(map[string]any); !isTable && (isHostKey(k[0]) || keyIndex(k[0]) < len(core.Keys)) {
			return usagef("%s: %s is outside any section; it belongs under [summarization]", path, k[0])
		}
	}
	secAny, ok := doc["summarization"]
	if !ok {
		if _, hasEmb := doc["embeddings"]; !hasEmb {
			warn(fmt.Sprintf("%s: no [summarization] section; using the defaults", path))
		}
		return nil
	}
	sec, ok := secAny.(map[string]any)
	if !ok {
		return usagef("%s: summarization must be a table ([summarization])", path)
	}
	// Keys in file order, so warnings and errors come in reading order.
	var keys []string
	for _, k := range md.Keys() {
		if len(k) == 2 && k[0] == "summarization" {
			keys = append(keys, k[1])
		}
	}
	for _, k := range keys {
		x := sec[k]
		where := path + ": [summarization] " + k
		if isHostKey(k) {
			v, ok := x.(string)
			if !ok {
				return usagef("%s: must be a string", where)
			}
			switch k {
			case "provider":
				s.provider = v
			case "name":
				s.model = v
			case "base_url":
				s.baseURL = v
			case "api_key":
				s.apiKey = v
			case "api_key_env":
				s.apiKeyEnv = v
			}
			continue
		}
		if keyIndex(k) == len(core.Keys) {
			if _, isTable := x.(map[string]any); isTable {
				continue // a sub-table such as [summarization.x]: not ours
			}
			warn(fmt.Sprintf("%s: unknown key %q ignored", path, "[summarization] "+k))
			continue
		}
		if err := s.setValue(k, tomlValue(x), where); err != nil {
			return err
		}
		if k == "model" {
			s.model, _ = x.(string)
		}
	}
	return nil
}

func isHostKey(k string) bool {
	for _, h := range hostKeys {
		if h == k {
			return true
		}
	}
	return false
}

// configFlags registers the flags every command that calls the plug-in
// shares. Flag values are collected and applied after --config, in
// command-line order, so flags override the file.
type configFlags struct {
	path    string
	pending []func(*settings) error
}

// keyFlag registers --name as an override of a config key
// (docs/spec.md#config).
func (cf *configFlags) keyFlag(fs *flag.FlagSet, name, key, usage string) {
	fs.Func(name, usage, func(v string) error {
		cf.pending = append(cf.pending, func(s *settings) error { return s.setString(key, v, "--"+name) })
		return nil
	})
}

func (cf *configFlags) register(fs *flag.FlagSet, provider bool) {
	fs.StringVar(&cf.path, "config", "", "read the [summarization] and [embeddings] sections of this TOML `file`")
	registerEmbeddingsFlags(fs, &cf.pending)
	if provider {
		fs.Func("provider", "LLM `provider`: "+strings.Join(llm.Providers(), ", ")+" (default extractive: offline, no key)", func(v string) error {
			cf.pending = append(cf.pending, func(s *settings) error { s.provider = v; return nil })
			return nil
		})
		fs.Func("model", "model `name` sent to the provider", func(v string) error {
			cf.pending = append(cf.pending, func(s *settings) error {
				s.model = v
				return s.setString("model", v, "--model")
			})
			return nil
		})
		fs.Func("base-url", "the provider's base `URL` (e.g. http://localhost:11434 for ollama)", func(v string) error {
			cf.pending = append(cf.pending, func(s *settings) error { s.baseURL = v; return nil })
			return nil
		})
		fs.Func("api-key-env", "environment `variable` holding the API key", func(v string) error {
			cf.pending = append(cf.pending, func(s *settings) error { s.apiKeyEnv = v; return nil })
			return nil
		})
		cf.keyFlag(fs, "chunk-size", "chunk_size", "messages per summarization call (chunk_size)")
		cf.keyFlag(fs, "keep-recent", "keep_recent", "recent messages kept verbatim (keep_recent)")
		cf.keyFlag(fs, "max-summary-tokens", "max_summary_tokens", "token budget of each summary (max_summary_tokens)")
		cf.keyFlag(fs, "target-tokens", "target_tokens", "compress only what is needed to get under this many estimated tokens (target_tokens)")
		cf.keyFlag(fs, "fallback", "fallback", `"extractive": summarize offline when the LLM fails, instead of failing (fallback)`)
		cf.keyFlag(fs, "summarizer", "summarizer", `"llm" or "extractive" (in the plug-in, dated, no LLM call); default extractive with --provider extractive, else llm (summarizer)`)
	}
	fs.Func("set", "set any [summarization] `key=value` (repeatable), e.g. --set clip_first=1", func(v string) error {
		k, val, ok := strings.Cut(v, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return errors.New("want KEY=VALUE")
		}
		k = strings.TrimSpace(k)
		cf.pending = append(cf.pending, func(s *settings) error {
			if isHostKey(k) {
				return usagef("--set %s: use --provider, --model, --base-url or --api-key-env for the provider", k)
			}
			if err := s.setString(k, val, "--set "+k); err != nil {
				return err
			}
			if k == "model" {
				s.model = val
			}
			return nil
		})
		return nil
	})
}

// registerSearch registers what search reads: --config (its [embeddings]
// section) and the --embeddings-… flags.
func (cf *configFlags) registerSearch(fs *flag.FlagSet) {
	fs.StringVar(&cf.path, "config", "", "read the [embeddings] section of this TOML `file`")
	registerEmbeddingsFlags(fs, &cf.pending)
}

// resolve builds the settings: defaults, then --config, then the flags.
func (cf *configFlags) resolve(warn func(string)) (*settings, error) {
	s := newSettings()
	if cf.path != "" {
		if err := s.loadConfigFile(cf.path, warn); err != nil {
			return nil, err
		}
	}
	for _, f := range cf.pending {
		if err := f(s); err != nil {
			return nil, err
		}
	}
	if s.model != "" {
		if _, ok := s.set["model"]; !ok {
			s.set["model"] = mustMarshal(s.model)
			s.cfg.Model = s.model
		}
	}
	// The offline provider summarizes inside the plug-in, from the
	// messages themselves (dated lines, batches marked "extractive"),
	// rather than through llm_complete with an undated request.
	if s.provider == llm.Extractive {
		if _, ok := s.set["summarizer"]; !ok {
			s.set["summarizer"] = mustMarshal(core.SummarizerExtractive)
			s.cfg.Summarizer = core.SummarizerExtractive
		}
	} else if _, size := s.set["chunk_size"]; !size {
		// A model summarizes: unless the configuration sizes the chunks,
		// each request holds as much as it can (max_chunk_tokens "auto"),
		// so a compaction makes few calls, one after the other (each folds
		// in the summary before it).
		if _, tok := s.set["max_chunk_tokens"]; !tok {
			if err := s.setValue("max_chunk_tokens", core.Value{Kind: core.KindString, Str: core.ChunkTokensAuto}, "max_chunk_tokens"); err != nil {
				return nil, err
			}
		}
	}
	return s, nil
}

// client builds the LLM client for the settings.
func (s *settings) client() (llm.Client, error) {
	valid := false
	for _, p := range llm.Providers() {
		if p == s.provider {
			valid = true
		}
	}
	if !valid {
		return nil, usagef("unknown provider %q: valid providers are %s", s.provider, strings.Join(llm.Providers(), ", "))
	}
	c, err := llm.New(s.provider, llm.Config{
		BaseURL:   s.baseURL,
		APIKey:    s.apiKey,
		APIKeyEnv: s.apiKeyEnv,
		Model:     s.model,
		Timeout:   time.Duration(s.cfg.CompactionTimeoutMs) * time.Millisecond,
	})
	if err != nil {
		var le *core.LLMError
		if errors.As(err, &le) && le.Code == core.LLMAuth {
			env := s.apiKeyEnv
			if env == "" {
				env = map[string]string{llm.Anthropic: "ANTHROPIC_API_KEY"}[s.provider]
				if env == "" {
					env = "OPENAI_API_KEY"
				}
			}
			return nil, failf("provider %s needs an API key: set the environment variable %s "+
				"(or name another variable with --api-key-env / api_key_env in [summarization])", s.provider, env)
		}
		if errors.Is(err, llm.ErrBaseURL) {
			return nil, usagef("--base-url %q: must be an http:// or https:// URL with a host", redact.URL(s.baseURL))
		}
		return nil, usagef("%v", err)
	}
	return c, nil
}
