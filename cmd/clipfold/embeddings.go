package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/clipfold/clipfold/hostfuncs/embeddings"
	"github.com/clipfold/clipfold/hostfuncs/store"
	"github.com/clipfold/clipfold/internal/redact"
)

// embeddingsTimeout bounds each embeddings request of the command.
const embeddingsTimeout = 30 * time.Second

// embeddingsKeys are the keys of config.toml's [embeddings] section.
var embeddingsKeys = []string{"provider", "model", "base_url", "api_key_env"}

// embeddingsSettings choose the embeddings provider that makes search
// semantic (docs/spec.md#search): none by default.
type embeddingsSettings struct {
	provider  string // "" (none), embeddings.OpenAI or embeddings.Ollama
	model     string
	baseURL   string
	apiKeyEnv string
}

// loadEmbeddingsSection reads [embeddings] from a decoded TOML document:
// every key a string, unknown keys reported through warn and ignored.
func (es *embeddingsSettings) loadSection(path string, doc map[string]any, md toml.MetaData, warn func(string)) error {
	secAny, ok := doc["embeddings"]
	if !ok {
		return nil
	}
	sec, ok := secAny.(map[string]any)
	if !ok {
		return usagef("%s: embeddings must be a table ([embeddings])", path)
	}
	for _, k := range md.Keys() {
		if len(k) != 2 || k[0] != "embeddings" {
			continue
		}
		where := path + ": [embeddings] " + k[1]
		v, isString := sec[k[1]].(string)
		switch k[1] {
		case "provider", "model", "base_url", "api_key_env":
			if !isString {
				return usagef("%s: must be a string", where)
			}
		default:
			warn(fmt.Sprintf("%s: unknown key %q ignored (valid keys: %s)", path, "[embeddings] "+k[1], strings.Join(embeddingsKeys, ", ")))
			continue
		}
		switch k[1] {
		case "provider":
			es.provider = v
		case "model":
			es.model = v
		case "base_url":
			es.baseURL = v
		case "api_key_env":
			es.apiKeyEnv = v
		}
	}
	return nil
}

// registerEmbeddingsFlags adds the --embeddings-… flags; like the other
// configuration flags they are applied after --config, in command-line
// order.
func registerEmbeddingsFlags(fs *flag.FlagSet, pending *[]func(*settings) error) {
	set := func(name, usage string, apply func(*embeddingsSettings, string)) {
		fs.Func(name, usage, func(v string) error {
			*pending = append(*pending, func(s *settings) error { apply(&s.emb, v); return nil })
			return nil
		})
	}
	set("embeddings-provider", "embeddings `provider` for semantic search: "+strings.Join(embeddings.Providers(), ", ")+" (default none: lexical search only)",
		func(e *embeddingsSettings, v string) { e.provider = v })
	set("embeddings-model", "embedding model `name` (e.g. text-embedding-3-small, nomic-embed-text)",
		func(e *embeddingsSettings, v string) { e.model = v })
	set("embeddings-base-url", "the embeddings provider's base `URL` (e.g. http://localhost:11434 for ollama)",
		func(e *embeddingsSettings, v string) { e.baseURL = v })
	set("embeddings-api-key-env", "environment `variable` holding the embeddings API key (default OPENAI_API_KEY for openai)",
		func(e *embeddingsSettings, v string) { e.apiKeyEnv = v })
}

// embedder builds the embeddings client, or nil when none is configured.
func (es *embeddingsSettings) embedder() (store.Embedder, error) {
	if es.provider == "" {
		if es.model != "" || es.baseURL != "" || es.apiKeyEnv != "" {
			return nil, usagef("embeddings: a model, base URL or key variable is set but no provider: add --embeddings-provider (or provider in [embeddings]): %s",
				strings.Join(embeddings.Providers(), ", "))
		}
		return nil, nil
	}
	valid := false
	for _, p := range embeddings.Providers() {
		valid = valid || p == es.provider
	}
	if !valid {
		return nil, usagef("unknown embeddings provider %q: valid providers are %s", es.provider, strings.Join(embeddings.Providers(), ", "))
	}
	if strings.TrimSpace(es.model) == "" {
		return nil, usagef("embeddings provider %s needs a model: --embeddings-model NAME (or model in [embeddings]), e.g. text-embedding-3-small or nomic-embed-text", es.provider)
	}
	// 30 s a request: an embeddings request is small, and a server that
	// accepts connections but never answers must not hold the command
	// long after its compaction is done.
	e, err := embeddings.New(es.provider, embeddings.Config{Model: es.model, BaseURL: es.baseURL, APIKeyEnv: es.apiKeyEnv, Timeout: embeddingsTimeout})
	if err != nil {
		var ee *embeddings.Error
		if errors.As(err, &ee) && ee.Code == embeddings.CodeAuth {
			env := es.apiKeyEnv
			if env == "" {
				env = "OPENAI_API_KEY"
			}
			return nil, failf("embeddings provider %s needs an API key: set the environment variable %s "+
				"(or name another variable with --embeddings-api-key-env / api_key_env in [embeddings])", es.provider, env)
		}
		if errors.Is(err, embeddings.ErrBaseURL) {
			return nil, usagef("--embeddings-base-url %q: must be an http:// or https:// URL with a host", redact.URL(es.baseURL))
		}
		return nil, usagef("%v", err)
	}
	return e, nil
}

// embedArchived embeds what a compaction of conv archived, after its
// commit. A failure is a warning: the compaction stands, nothing is lost,
// and the next search with embeddings embeds what is missing.
func embedArchived(ctx context.Context, st store.Store, e store.Embedder, conv string) (int, error) {
	if e == nil {
		return 0, nil
	}
	return store.EmbedMissing(ctx, st, e, conv)
}
