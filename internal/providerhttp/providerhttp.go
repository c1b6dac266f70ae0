// Package providerhttp is what the HTTP clients of hostfuncs/llm and
// hostfuncs/embeddings share about reaching a provider: the base URL they
// accept, where the API key comes from, when the real OpenAI endpoint
// needs one, and the headers of every request. Each client keeps its own
// wire format, endpoints and errors.
package providerhttp

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/clipfold/clipfold/internal/redact"
)

// ErrBaseURL is wrapped by the error of a client constructor that refuses
// its base URL (llm.ErrBaseURL and embeddings.ErrBaseURL are this value):
// errors.Is tells a URL to fix from every other failure.
var ErrBaseURL = errors.New("must be an http:// or https:// URL with a host")

// BaseURL is raw without its trailing slashes, or def when raw is empty.
// Anything but an http or https URL with a host is an error wrapping
// ErrBaseURL that names raw without its password or key.
func BaseURL(raw, def string) (string, error) {
	base := strings.TrimRight(raw, "/")
	if base == "" {
		base = def
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%q: %w", redact.URL(raw), ErrBaseURL)
	}
	return base, nil
}

// Key is the API key to send: key when set, else the value (spaces
// trimmed) of the environment variable env, or of defaultEnv when env is
// empty; and the variable's name, for a message saying where a missing
// key was looked for. With key, env and defaultEnv all empty there is no
// key and no variable.
func Key(key, env, defaultEnv string) (value, variable string) {
	variable = env
	if variable == "" {
		variable = defaultEnv
	}
	if key != "" {
		return key, variable
	}
	if variable == "" {
		return "", ""
	}
	return strings.TrimSpace(os.Getenv(variable)), variable
}

// IsOpenAI tells a base URL of OpenAI's own API, which answers nothing
// without a key; the servers that imitate it (llama.cpp, LM Studio, vLLM)
// usually need none, so only this one makes a missing key an error.
func IsOpenAI(base string) bool {
	u, err := url.Parse(base)
	return err == nil && u.Hostname() == "api.openai.com"
}

// Header is the headers every request starts with: JSON both ways, and
// clipfold as the user agent.
func Header() http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json")
	h.Set("User-Agent", "clipfold")
	return h
}
