package embeddings_test

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/clipfold/clipfold/hostfuncs/embeddings"
	"github.com/clipfold/clipfold/hostfuncs/embeddings/embeddingstest"
)

// request is what a fake provider received.
type request struct {
	Method string
	Path   string
	Header http.Header
	Body   map[string]any
}

// reply answers one request.
type reply func(w http.ResponseWriter, req request)

// provider is an httptest server answering requests with replies in turn
// (the last one repeats), recording each request.
type provider struct {
	*httptest.Server
	mu      sync.Mutex
	seen    []request
	replies []reply
}

func newProvider(t *testing.T, replies ...reply) *provider {
	t.Helper()
	p := &provider{replies: replies}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, err := io.ReadAll(r.Body)
		assert.NoError(t, err)
		req := request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone()}
		assert.NoError(t, json.Unmarshal(raw, &req.Body), "request body must be JSON: %s", raw)
		p.mu.Lock()
		i := len(p.seen)
		p.seen = append(p.seen, req)
		rep := p.replies[min(i, len(p.replies)-1)]
		p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		rep(w, req)
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *provider) requests() []request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]request(nil), p.seen...)
}

func status(code int, body string) reply {
	return func(w http.ResponseWriter, _ request) {
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	}
}

func inputs(req request) []string {
	var out []string
	for _, x := range req.Body["input"].([]any) {
		out = append(out, x.(string))
	}
	return out
}

// vec is the test vector of a text: its length, then 1, 2.
func vec(text string) []float32 { return []float32{float32(len(text)), 1, 2} }

// openAIOK answers in OpenAI's format, data in reverse order.
func openAIOK(w http.ResponseWriter, req request) {
	in := inputs(req)
	var data []string
	for i := len(in) - 1; i >= 0; i-- {
		b, _ := json.Marshal(vec(in[i]))
		data = append(data, fmt.Sprintf(`{"object":"embedding","index":%d,"embedding":%s}`, i, b))
	}
	fmt.Fprintf(w, `{"object":"list","data":[%s],"model":%q,"usage":{"prompt_tokens":5,"total_tokens":5}}`,
		strings.Join(data, ","), req.Body["model"])
}

// ollamaOK answers in Ollama's /api/embed format.
func ollamaOK(w http.ResponseWriter, req request) {
	var vs [][]float32
	for _, t := range inputs(req) {
		vs = append(vs, vec(t))
	}
	b, _ := json.Marshal(vs)
	fmt.Fprintf(w, `{"model":%q,"embeddings":%s,"total_duration":14143917,"load_duration":1019500,"prompt_eval_count":8}`, req.Body["model"], b)
}

func requireError(t *testing.T, err error, code string, status int, retryable bool) *embeddings.Error {
	t.Helper()
	var e *embeddings.Error
	require.ErrorAs(t, err, &e, "want *embeddings.Error, got %T %v", err, err)
	assert.Equal(t, code, e.Code, "%v", e)
	assert.Equal(t, status, e.Status, "%v", e)
	assert.Equal(t, retryable, e.Retryable, "%v", e)
	return e
}

func TestOpenAIRequestAndResponse(t *testing.T) {
	for _, suffix := range []string{"", "/", "/v1", "/v1/"} {
		t.Run("base suffix "+suffix, func(t *testing.T) {
			p := newProvider(t, openAIOK)
			e, err := embeddings.New("openai", embeddings.Config{BaseURL: p.URL + suffix, APIKey: "sk-test", Model: "text-embedding-3-small"})
			require.NoError(t, err)
			assert.Equal(t, "text-embedding-3-small", e.Model())
			texts := []string{"a", "bb", "ccc"}
			got, err := e.Embed(context.Background(), texts)
			require.NoError(t, err)
			assert.Equal(t, [][]float32{vec("a"), vec("bb"), vec("ccc")}, got, "ordered by index, not by position in data")
			reqs := p.requests()
			require.Len(t, reqs, 1)
			r := reqs[0]
			assert.Equal(t, http.MethodPost, r.Method)
			assert.Equal(t, "/v1/embeddings", r.Path, "never /v1/v1")
			assert.Equal(t, "Bearer sk-test", r.Header.Get("Authorization"))
			assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
			assert.Equal(t, map[string]any{"model": "text-embedding-3-small", "input": []any{"a", "bb", "ccc"}, "encoding_format": "float"}, r.Body)
		})
	}
}

func TestOpenAIBase64Embedding(t *testing.T) {
	p := newProvider(t, func(w http.ResponseWriter, req request) {
		b := make([]byte, 12)
		for i, x := range []float32{0.5, -1, 2} {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
		fmt.Fprintf(w, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":%q}],"model":"m"}`, base64.StdEncoding.EncodeToString(b))
	})
	e, err := embeddings.NewOpenAI(embeddings.Config{BaseURL: p.URL, Model: "m"})
	require.NoError(t, err)
	got, err := e.Embed(context.Background(), []string{"x"})
	require.NoError(t, err)
	assert.Equal(t, [][]float32{{0.5, -1, 2}}, got)
	assert.Empty(t, p.requests()[0].Header.Get("Authorization"), "a local server without a key gets no Authorization header")
}

func TestOllamaRequestAndResponse(t *testing.T) {
	for _, suffix := range []string{"", "/", "/v1", "/api"} {
		t.Run("base suffix "+suffix, func(t *testing.T) {
			p := newProvider(t, ollamaOK)
			e, err := embeddings.New("ollama", embeddings.Config{BaseURL: p.URL + suffix, Model: "nomic-embed-text"})
			require.NoError(t, err)
			got, err := e.Embed(context.Background(), []string{"one", "three"})
			require.NoError(t, err)
			assert.Equal(t, [][]float32{vec("one"), vec("three")}, got)
			r := p.requests()[0]
			assert.Equal(t, "/api/embed", r.Path)
			assert.Empty(t, r.Header.Get("Authorization"))
			assert.Equal(t, map[string]any{"model": "nomic-embed-text", "input": []any{"one", "three"}}, r.Body)
		})
	}
	t.Run("key behind a proxy", func(t *testing.T) {
		p := newProvider(t, ollamaOK)
		t.Setenv("PROXY_KEY", "k1")
		e, err := embeddings.NewOllama(embeddings.Config{BaseURL: p.URL, Model: "m", APIKeyEnv: "PROXY_KEY"})
		require.NoError(t, err)
		_, err = e.Embed(context.Background(), []string{"x"})
		require.NoError(t, err)
		assert.Equal(t, "Bearer k1", p.requests()[0].Header.Get("Authorization"))
	})
}

func TestBatching(t *testing.T) {
	for _, provider := range []string{"openai", "ollama"} {
		t.Run(provider, func(t *testing.T) {
			p := newProvider(t, map[string]reply{"openai": openAIOK, "ollama": ollamaOK}[provider])
			e, err := embeddings.New(provider, embeddings.Config{BaseURL: p.URL, Model: "m"})
			require.NoError(t, err)
			texts := make([]string, 150)
			for i := range texts {
				texts[i] = strings.Repeat("x", i+1)
			}
			got, err := e.Embed(context.Background(), texts)
			require.NoError(t, err)
			require.Len(t, got, 150)
			for i, v := range got {
				assert.Equal(t, vec(texts[i]), v, "text %d", i)
			}
			var sizes []int
			for _, r := range p.requests() {
				sizes = append(sizes, len(inputs(r)))
			}
			assert.Equal(t, []int{64, 64, 22}, sizes, "DefaultBatchSize texts per request at most")
		})
	}
	p := newProvider(t, openAIOK)
	e, err := embeddings.NewOpenAI(embeddings.Config{BaseURL: p.URL, Model: "m", BatchSize: 2})
	require.NoError(t, err)
	_, err = e.Embed(context.Background(), []string{"a", "b", "c"})
	require.NoError(t, err)
	assert.Len(t, p.requests(), 2)
}

func TestEmptyInput(t *testing.T) {
	p := newProvider(t, openAIOK)
	e, err := embeddings.NewOpenAI(embeddings.Config{BaseURL: p.URL, Model: "m"})
	require.NoError(t, err)
	got, err := e.Embed(context.Background(), nil)
	require.NoError(t, err)
	assert.Empty(t, got)
	_, err = e.Embed(context.Background(), []string{"fine", "  "})
	ee := requireError(t, err, embeddings.CodeBadRequest, 0, false)
	assert.Contains(t, ee.Message, "texts[1] is empty")
	assert.Empty(t, p.requests(), "nothing is sent for no text or a blank one")
}

func TestLongTextIsCut(t *testing.T) {
	p := newProvider(t, openAIOK)
	e, err := embeddings.NewOpenAI(embeddings.Config{BaseURL: p.URL, Model: "m", MaxInputChars: 5})
	require.NoError(t, err)
	_, err = e.Embed(context.Background(), []string{"ééééééééé", "abc", "bad \xff utf8"})
	require.NoError(t, err)
	assert.Equal(t, []string{"ééééé", "abc", "bad \uFFFD"}, inputs(p.requests()[0]))
	e, err = embeddings.NewOpenAI(embeddings.Config{BaseURL: p.URL, Model: "m"})
	require.NoError(t, err)
	_, err = e.Embed(context.Background(), []string{strings.Repeat("w", 10000)})
	require.NoError(t, err)
	assert.Len(t, inputs(p.requests()[1])[0], embeddings.DefaultMaxInputChars)
}

// The error bodies are the providers' own (OpenAI's error object, Ollama's
// error string): the message reaches the caller with the status and a
// code saying what to fix.
func TestProviderErrors(t *testing.T) {
	cases := []struct {
		name, provider string
		status         int
		body           string
		code           string
		retryable      bool
		message        string
	}{
		{"bad key", "openai", 401, `{"error":{"message":"Incorrect API key provided: sk-bad. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
			embeddings.CodeAuth, false, "Incorrect API key provided"},
		{"forbidden", "openai", 403, `{"error":{"message":"You are not allowed to sample from this model","type":"invalid_request_error","param":null,"code":null}}`,
			embeddings.CodeAuth, false, "not allowed"},
		{"rate limit", "openai", 429, `{"error":{"message":"Rate limit reached for text-embedding-3-small in organization org-x on requests per min (RPM): Limit 3000, Used 3000, Requested 1.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
			embeddings.CodeRateLimit, true, "Rate limit reached"},
		{"quota spent", "openai", 429, `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`,
			embeddings.CodeRateLimit, false, "exceeded your current quota"},
		{"bad model", "openai", 404, `{"error":{"message":"The model ` + "`text-embedding-4`" + ` does not exist or you do not have access to it.","type":"invalid_request_error","param":null,"code":"model_not_found"}}`,
			embeddings.CodeBadRequest, false, "does not exist"},
		{"too long", "openai", 400, `{"error":{"message":"This model's maximum context length is 8192 tokens, however you requested 9000 tokens.","type":"invalid_request_error","param":null,"code":null}}`,
			embeddings.CodeBadRequest, false, "maximum context length"},
		{"server error", "openai", 500, `{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`,
			embeddings.CodeUnavailable, true, "server had an error"},
		{"vllm", "openai", 400, `{"object":"error","message":"The model does not support Embeddings API","type":"BadRequestError","param":null,"code":400}`,
			embeddings.CodeBadRequest, false, "does not support Embeddings API"},
		{"fastapi", "openai", 422, `{"detail":"input must not be empty"}`, embeddings.CodeBadRequest, false, "input must not be empty"},
		{"proxy html", "openai", 502, `<html><body>502 Bad Gateway</body></html>`, embeddings.CodeUnavailable, true, "502 Bad Gateway"},
		{"ollama bad model", "ollama", 404, `{"error":"model \"nomic-embed-txt\" not found, try pulling it first"}`,
			embeddings.CodeBadRequest, false, `model "nomic-embed-txt" not found`},
		{"ollama not an embedding model", "ollama", 400, `{"error":"\"llama3.2\" does not support embeddings"}`,
			embeddings.CodeBadRequest, false, "does not support embeddings"},
		{"ollama overloaded", "ollama", 503, `{"error":"server busy, please try again.  maximum pending requests exceeded"}`,
			embeddings.CodeUnavailable, true, "server busy"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newProvider(t, status(tc.status, tc.body))
			e, err := embeddings.New(tc.provider, embeddings.Config{BaseURL: p.URL, Model: "m", MaxRetries: -1})
			require.NoError(t, err)
			_, err = e.Embed(context.Background(), []string{"x"})
			ee := requireError(t, err, tc.code, tc.status, tc.retryable)
			assert.Contains(t, ee.Message, tc.message)
			assert.Contains(t, err.Error(), tc.provider, "the error names the provider")
			assert.Contains(t, err.Error(), fmt.Sprintf("HTTP %d", tc.status), "and the status")
			assert.Contains(t, err.Error(), p.URL, "and the URL")
		})
	}
}

func TestRetries(t *testing.T) {
	rateLimited := func(w http.ResponseWriter, _ request) {
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(429)
		_, _ = io.WriteString(w, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`)
	}
	t.Run("rate limit then success", func(t *testing.T) {
		p := newProvider(t, rateLimited, rateLimited, openAIOK)
		e, err := embeddings.NewOpenAI(embeddings.Config{BaseURL: p.URL, Model: "m"})
		require.NoError(t, err)
		got, err := e.Embed(context.Background(), []string{"abc"})
		require.NoError(t, err)
		assert.Equal(t, [][]float32{vec("abc")}, got)
		assert.Len(t, p.requests(), 3, "two retries by default")
	})
	t.Run("server errors exhaust the retries", func(t *testing.T) {
		p := newProvider(t, status(503, `{"error":{"message":"overloaded","type":"server_error"}}`))
		e, err := embeddings.NewOpenAI(embeddings.Config{BaseURL: p.URL, Model: "m", MaxRetries: 1})
		require.NoError(t, err)
		_, err = e.Embed(context.Background(), []string{"abc"})
		requireError(t, err, embeddings.CodeUnavailable, 503, true)
		assert.Len(t, p.requests(), 2)
	})
	t.Run("client errors are never retried", func(t *testing.T) {
		for _, code := range []int{400, 401, 404} {
			p := newProvider(t, status(code, `{"error":{"message":"no","type":"invalid_request_error"}}`))
			e, err := embeddings.NewOpenAI(embeddings.Config{BaseURL: p.URL, Model: "m", MaxRetries: 5})
			require.NoError(t, err)
			_, err = e.Embed(context.Background(), []string{"abc"})
			require.Error(t, err)
			assert.Len(t, p.requests(), 1, "status %d", code)
		}
	})
	t.Run("no retry past the deadline", func(t *testing.T) {
		p := newProvider(t, func(w http.ResponseWriter, _ request) {
			w.Header().Set("Retry-After", "20")
			w.WriteHeader(429)
			_, _ = io.WriteString(w, `{"error":{"message":"slow down","code":"rate_limit_exceeded"}}`)
		})
		e, err := embeddings.NewOpenAI(embeddings.Config{BaseURL: p.URL, Model: "m"})
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		start := time.Now()
		_, err = e.Embed(ctx, []string{"abc"})
		requireError(t, err, embeddings.CodeRateLimit, 429, true)
		assert.Less(t, time.Since(start), time.Second, "waiting 20 s would outlive the caller's deadline: it gives up at once")
		assert.Len(t, p.requests(), 1)
	})
}

func TestMalformedResponses(t *testing.T) {
	cases := []struct {
		name, provider, body, message string
		n                             int
	}{
		{"not JSON", "openai", `<html>hello</html>`, "not an embeddings response", 1},
		{"no data", "openai", `{"object":"list"}`, `no "data"`, 1},
		{"too few", "openai", `{"data":[{"index":0,"embedding":[1,2]}]}`, "1 embeddings for 2 texts", 2},
		{"empty data", "openai", `{"data":[]}`, "0 embeddings for 1 texts", 1},
		{"index out of range", "openai", `{"data":[{"index":0,"embedding":[1,2]},{"index":2,"embedding":[1,2]}]}`, "index 2 is outside", 2},
		{"index repeats", "openai", `{"data":[{"index":0,"embedding":[1,2]},{"index":0,"embedding":[3,4]}]}`, "index 0 repeats", 2},
		{"wrong dimension", "openai", `{"data":[{"index":1,"embedding":[1,2,3]},{"index":0,"embedding":[1,2]}]}`, "has 3 dimensions", 2},
		{"empty vector", "openai", `{"data":[{"index":0,"embedding":[]}]}`, "data[0].embedding: empty", 1},
		{"not numbers", "openai", `{"data":[{"index":0,"embedding":["a"]}]}`, "not an array of numbers", 1},
		{"ollama no embeddings", "ollama", `{"model":"m"}`, `no "embeddings"`, 1},
		{"ollama wrong dimension", "ollama", `{"embeddings":[[1,2],[1]]}`, "has 1 dimensions", 2},
		{"ollama too many", "ollama", `{"embeddings":[[1,2],[1,2]]}`, "2 embeddings for 1 texts", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newProvider(t, status(200, tc.body))
			e, err := embeddings.New(tc.provider, embeddings.Config{BaseURL: p.URL, Model: "m"})
			require.NoError(t, err)
			texts := []string{"a", "b"}[:tc.n]
			_, err = e.Embed(context.Background(), texts)
			ee := requireError(t, err, embeddings.CodeBadResponse, 200, false)
			assert.Contains(t, ee.Message, tc.message)
			assert.Len(t, p.requests(), 1, "a malformed answer is not retried")
		})
	}
	t.Run("dimension changes between batches", func(t *testing.T) {
		calls := 0
		p := newProvider(t, func(w http.ResponseWriter, req request) {
			calls++
			if calls == 1 {
				_, _ = io.WriteString(w, `{"data":[{"index":0,"embedding":[1,2]}]}`)
				return
			}
			_, _ = io.WriteString(w, `{"data":[{"index":0,"embedding":[1,2,3]}]}`)
		})
		e, err := embeddings.NewOpenAI(embeddings.Config{BaseURL: p.URL, Model: "m", BatchSize: 1})
		require.NoError(t, err)
		_, err = e.Embed(context.Background(), []string{"a", "b"})
		ee := requireError(t, err, embeddings.CodeBadResponse, 0, false)
		assert.Contains(t, ee.Message, "3 dimensions")
	})
}

func TestTimeoutAndUnreachable(t *testing.T) {
	block := make(chan struct{})
	p := newProvider(t, func(w http.ResponseWriter, _ request) { <-block })
	defer close(block)
	e, err := embeddings.NewOpenAI(embeddings.Config{BaseURL: p.URL, Model: "m", Timeout: 100 * time.Millisecond, MaxRetries: -1})
	require.NoError(t, err)
	_, err = e.Embed(context.Background(), []string{"x"})
	ee := requireError(t, err, embeddings.CodeTimeout, 0, true)
	assert.Contains(t, ee.Message, "100ms")

	dead := httptest.NewServer(http.NotFoundHandler())
	url := dead.URL
	dead.Close()
	e, err = embeddings.NewOllama(embeddings.Config{BaseURL: url, Model: "m", MaxRetries: -1})
	require.NoError(t, err)
	_, err = e.Embed(context.Background(), []string{"x"})
	ee = requireError(t, err, embeddings.CodeUnavailable, 0, true)
	assert.Contains(t, err.Error(), url)
	assert.Contains(t, ee.Message, "cannot reach")
}

func TestNewRefuses(t *testing.T) {
	_, err := embeddings.New("cohere", embeddings.Config{Model: "m"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"cohere"`)
	assert.Contains(t, err.Error(), "openai, ollama")

	_, err = embeddings.New("openai", embeddings.Config{BaseURL: "http://localhost:1"})
	assert.ErrorContains(t, err, "model: not set")
	assert.NotErrorIs(t, err, embeddings.ErrBaseURL)
	_, err = embeddings.New("ollama", embeddings.Config{Model: "m", BaseURL: "localhost:11434"})
	assert.ErrorContains(t, err, "must be an http:// or https:// URL")
	assert.ErrorIs(t, err, embeddings.ErrBaseURL) // a URL to fix, told apart without reading the text
	requireError(t, err, embeddings.CodeBadRequest, 0, false)
	_, err = embeddings.New("openai", embeddings.Config{Model: "m", BaseURL: "http://x", Timeout: -time.Second})
	assert.ErrorContains(t, err, "must not be negative")

	t.Setenv("OPENAI_API_KEY", "")
	_, err = embeddings.New("openai", embeddings.Config{Model: "text-embedding-3-small"})
	requireError(t, err, embeddings.CodeAuth, 0, false)
	assert.ErrorContains(t, err, "OPENAI_API_KEY")
	t.Setenv("MY_KEY", "")
	_, err = embeddings.New("openai", embeddings.Config{Model: "text-embedding-3-small", APIKeyEnv: "MY_KEY"})
	assert.ErrorContains(t, err, "MY_KEY")
	t.Setenv("MY_KEY", "sk-x")
	_, err = embeddings.New("openai", embeddings.Config{Model: "text-embedding-3-small", APIKeyEnv: "MY_KEY"})
	assert.NoError(t, err)
}

func TestKeyFromEnvironment(t *testing.T) {
	p := newProvider(t, openAIOK)
	t.Setenv("OPENAI_API_KEY", "sk-env")
	e, err := embeddings.NewOpenAI(embeddings.Config{BaseURL: p.URL, Model: "m"})
	require.NoError(t, err)
	_, err = e.Embed(context.Background(), []string{"x"})
	require.NoError(t, err)
	assert.Equal(t, "Bearer sk-env", p.requests()[0].Header.Get("Authorization"))
}

// The test server of embeddingstest speaks both wire formats and puts
// synonyms close: what the store tests rely on.
func TestEmbedtestServer(t *testing.T) {
	s := embeddingstest.NewServer(t)
	e := s.Embedder(t, "m1")
	vs, err := e.Embed(context.Background(), []string{"the automobile repairs", "fixing my car", "a birthday party"})
	require.NoError(t, err)
	cos := func(a, b []float32) float64 {
		var d float64
		for i := range a {
			d += float64(a[i]) * float64(b[i])
		}
		return d
	}
	assert.InDelta(t, 1.0, cos(vs[0], vs[1]), 1e-6, "synonyms land on the same axes")
	assert.Less(t, cos(vs[0], vs[2]), 0.5)
	o, err := embeddings.NewOllama(embeddings.Config{BaseURL: s.URL, Model: "m1"})
	require.NoError(t, err)
	vo, err := o.Embed(context.Background(), []string{"the automobile repairs"})
	require.NoError(t, err)
	assert.Equal(t, vs[0], vo[0])
	other, err := s.Embedder(t, "m2").Embed(context.Background(), []string{"the automobile repairs"})
	require.NoError(t, err)
	assert.NotEqual(t, vs[0], other[0], "another model, another space")
	assert.Equal(t, [][]string{{"the automobile repairs", "fixing my car", "a birthday party"}, {"the automobile repairs"}, {"the automobile repairs"}}, s.Requests())

	s.Fail(1, 500, "")
	_, err = e.Embed(context.Background(), []string{"x"})
	requireError(t, err, embeddings.CodeUnavailable, 500, true)
	_, err = e.Embed(context.Background(), []string{"x"})
	require.NoError(t, err)
}
