package embeddings_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/clipfold/clipfold/hostfuncs/embeddings"
	"github.com/clipfold/clipfold/internal/samehost/samehosttest"
)

// A redirect to another host is an error naming both hosts, not retried;
// the other host gets no connection (neither the key nor the texts).
func TestCrossHostRedirectIsRefused(t *testing.T) {
	answers := map[string]string{
		embeddings.OpenAI: `{"data":[{"index":0,"embedding":[1,2,3]}]}`,
		embeddings.Ollama: `{"embeddings":[[1,2,3]]}`,
	}
	for _, p := range embeddings.Providers() {
		for _, status := range samehosttest.Statuses {
			t.Run(fmt.Sprintf("%s %d", p, status), func(t *testing.T) {
				sink := samehosttest.NewSink(t, answers[p])
				redir := samehosttest.NewRedirector(t, status, sink.URL)
				e, err := embeddings.New(p, embeddings.Config{BaseURL: redir.URL, Model: "m", APIKey: "sk-secret"})
				require.NoError(t, err)
				vecs, err := e.Embed(context.Background(), []string{"private text"})
				ee := requireError(t, err, embeddings.CodeBadRequest, 0, false)
				assert.Nil(t, vecs)
				assert.Contains(t, ee.Message, redir.URL, "names the configured host")
				assert.Contains(t, ee.Message, sink.URL, "names the other host")
				conns, reqs := sink.Reached()
				assert.Zero(t, conns)
				assert.Zero(t, reqs)
				assert.Equal(t, 1, redir.Requests(), "a refused redirect is not retried")
			})
		}
	}
}

// On the same host a 307 or 308 is followed with the key and the body; a
// 301, 302 or 303 is an error.
func TestSameHostRedirect(t *testing.T) {
	for _, status := range samehosttest.Statuses {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			var key, body string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !strings.HasPrefix(r.URL.Path, "/moved/") {
					http.Redirect(w, r, "/moved"+r.URL.Path, status)
					return
				}
				b, _ := io.ReadAll(r.Body)
				key, body = r.Header.Get("Authorization"), string(b)
				_, _ = io.WriteString(w, `{"data":[{"index":0,"embedding":[1,2,3]}]}`)
			}))
			defer srv.Close()
			e, err := embeddings.NewOpenAI(embeddings.Config{BaseURL: srv.URL, Model: "m", APIKey: "sk-secret"})
			require.NoError(t, err)
			vecs, err := e.Embed(context.Background(), []string{"private text"})
			if status == http.StatusTemporaryRedirect || status == http.StatusPermanentRedirect {
				require.NoError(t, err)
				assert.Equal(t, [][]float32{{1, 2, 3}}, vecs)
				assert.Equal(t, "Bearer sk-secret", key)
				assert.Contains(t, body, "private text")
				return
			}
			ee := requireError(t, err, embeddings.CodeBadRequest, 0, false)
			assert.Contains(t, ee.Message, srv.URL+"/v1/embeddings")
			assert.Contains(t, ee.Message, srv.URL+"/moved/v1/embeddings")
			assert.Empty(t, body)
		})
	}
}

// Neither the URL field nor the text of an error holds the base URL's
// password or a key-like query parameter.
func TestErrorsAreRedacted(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	addr := strings.TrimPrefix(dead.URL, "http://")
	dead.Close()
	e, err := embeddings.NewOllama(embeddings.Config{BaseURL: "http://me:hunter2@" + addr, Model: "m", MaxRetries: -1})
	require.NoError(t, err)
	_, err = e.Embed(context.Background(), []string{"x"})
	ee := requireError(t, err, embeddings.CodeUnavailable, 0, true)
	assert.NotContains(t, err.Error(), "hunter2")
	assert.NotContains(t, ee.URL, "hunter2")
	assert.Contains(t, err.Error(), "http://me:xxxxx@"+addr+"/api/embed")

	_, err = embeddings.NewOpenAI(embeddings.Config{BaseURL: "ftp://me:hunter2@h", Model: "m"})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "hunter2")

	hand := &embeddings.Error{Provider: "openai", URL: "https://h/v1?api_key=sk-1", Code: embeddings.CodeAuth, Message: "see https://u:p@h/"}
	assert.Equal(t, "embeddings openai (https://h/v1?api_key=xxxxx): auth: see https://u:xxxxx@h/", hand.Error())
}
