package llm

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/internal/samehost/samehosttest"
)

// replies are the providers' successful answers: what a client that
// followed a redirect to the other server would take as the summary.
var replies = map[string]string{
	Anthropic:    anthropicOK,
	OpenAICompat: `{"choices":[{"message":{"role":"assistant","content":"stolen summary"},"finish_reason":"stop"}]}`,
	Ollama:       `{"message":{"role":"assistant","content":"stolen summary"},"done":true,"done_reason":"stop"}`,
}

// A redirect to another host (301, 302, 303, 307, 308) is an error naming
// both hosts; the other host gets no connection, so neither the key nor
// the prompt, and nothing it could answer is taken as a summary.
func TestCrossHostRedirectIsRefused(t *testing.T) {
	for _, p := range []string{Anthropic, OpenAICompat, Ollama} {
		for _, status := range samehosttest.Statuses {
			t.Run(fmt.Sprintf("%s %d", p, status), func(t *testing.T) {
				sink := samehosttest.NewSink(t, replies[p])
				redir := samehosttest.NewRedirector(t, status, sink.URL)
				c, err := New(p, Config{BaseURL: redir.URL, APIKey: "sk-secret", Model: "m"})
				require.NoError(t, err)
				resp, err := c.Complete(context.Background(), summarizationRequest())
				le := requireLLMError(t, err, core.LLMOther, false)
				assert.Empty(t, resp.Content, "no summary")
				assert.Contains(t, le.Message, redir.URL, "names the configured host")
				assert.Contains(t, le.Message, sink.URL, "names the other host")
				assert.NotContains(t, le.Message, "sk-secret")
				conns, reqs := sink.Reached()
				assert.Zero(t, conns, "the other host gets no connection")
				assert.Zero(t, reqs, "the other host gets no request")
				assert.Equal(t, 1, redir.Requests())
			})
		}
	}
}

// On the configured host, a 307 or 308 (method and body kept) is followed
// with the key; a 301, 302 or 303 (which would resend the POST as a GET
// without its body) is an error.
func TestSameHostRedirect(t *testing.T) {
	for _, status := range samehosttest.Statuses {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			var finalKey, finalBody string
			finals := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !strings.HasPrefix(r.URL.Path, "/moved/") {
					http.Redirect(w, r, "/moved"+r.URL.Path, status)
					return
				}
				finals++
				b, _ := io.ReadAll(r.Body)
				finalKey, finalBody = r.Header.Get("x-api-key"), string(b)
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, anthropicOK)
			}))
			defer srv.Close()
			c, err := New(Anthropic, Config{BaseURL: srv.URL, APIKey: "sk-secret", Model: "m"})
			require.NoError(t, err)
			resp, err := c.Complete(context.Background(), summarizationRequest())
			if status == http.StatusTemporaryRedirect || status == http.StatusPermanentRedirect {
				require.NoError(t, err)
				assert.Equal(t, "The build failed for a missing import.", resp.Content[0].Text)
				assert.Equal(t, "sk-secret", finalKey)
				assert.Contains(t, finalBody, "Why does the build fail?")
				return
			}
			le := requireLLMError(t, err, core.LLMOther, false)
			assert.Contains(t, le.Message, srv.URL+"/v1/messages")
			assert.Contains(t, le.Message, srv.URL+"/moved/v1/messages")
			assert.Zero(t, finals, "not followed")
		})
	}
}

// A caller's HTTPClient gets the policy too, and is not changed.
func TestRedirectPolicyWithCallersClient(t *testing.T) {
	sink := samehosttest.NewSink(t, replies[OpenAICompat])
	redir := samehosttest.NewRedirector(t, http.StatusTemporaryRedirect, sink.URL)
	hc := &http.Client{}
	c, err := New(OpenAICompat, Config{BaseURL: redir.URL, APIKey: "k", HTTPClient: hc})
	require.NoError(t, err)
	_, err = c.Complete(context.Background(), summarizationRequest())
	requireLLMError(t, err, core.LLMOther, false)
	_, reqs := sink.Reached()
	assert.Zero(t, reqs)
	assert.Nil(t, hc.CheckRedirect, "the caller's client is not modified")
}

// The password of a base URL never appears in an error.
func TestErrorsRedactTheBaseURL(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	for _, p := range []string{Anthropic, OpenAICompat, Ollama} {
		c, err := New(p, Config{BaseURL: "http://user:hunter2@" + addr, APIKey: "k", Model: "m"})
		require.NoError(t, err)
		_, err = c.Complete(context.Background(), summarizationRequest())
		le := requireLLMError(t, err, core.LLMUnavailable, true)
		assert.Contains(t, le.Message, "http://user:xxxxx@"+addr+"/", p)
		assert.NotContains(t, le.Message, "hunter2", p)
	}
	_, err = New(Anthropic, Config{BaseURL: "ftp://user:hunter2@h", APIKey: "k"})
	require.ErrorIs(t, err, ErrBaseURL) // a URL to fix, told apart without reading the text
	assert.NotContains(t, err.Error(), "hunter2")
	_, err = New(Anthropic, Config{APIKeyEnv: "CLIPFOLD_TEST_UNSET_KEY"})
	require.Error(t, err)
	assert.NotErrorIs(t, err, ErrBaseURL)
}
