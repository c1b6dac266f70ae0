package embeddings

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/clipfold/clipfold/internal/providerhttp"
	"github.com/clipfold/clipfold/internal/redact"
	"github.com/clipfold/clipfold/internal/samehost"
)

// maxResponseBytes bounds what is read from a provider: 64 vectors of
// 3,072 numbers are a few MB of JSON.
const maxResponseBytes = 64 << 20

// maxRetryWait caps how long a Retry-After header may make a retry wait.
const maxRetryWait = 30 * time.Second

// client is the one HTTP adapter; the providers differ in the wire format,
// the headers and the defaults. Immutable once built.
type client struct {
	name     string
	endpoint string
	shown    string // endpoint redacted, for errors: no password, no key
	header   http.Header
	model    string
	timeout  time.Duration
	batch    int
	retries  int
	maxChars int
	// http follows only redirects that keep the request on the endpoint's
	// host, method and body (package samehost).
	http    *http.Client
	encode  func(model string, texts []string) ([]byte, error)
	decode  func(body []byte, n int) ([][]float32, error)
	backoff time.Duration // the first retry's wait without Retry-After
}

// NewOpenAI returns the adapter for POST /v1/embeddings (OpenAI and the
// servers that imitate it). The key (Config.APIKey, or APIKeyEnv, default
// OPENAI_API_KEY) is sent as a Bearer token when there is one; only the
// real OpenAI endpoint, which always needs one, fails without it.
func NewOpenAI(cfg Config) (Embedder, error) {
	c, base, err := newClient(OpenAI, cfg, DefaultOpenAIBaseURL)
	if err != nil {
		return nil, err
	}
	if strings.HasSuffix(base, "/v1") {
		c.endpoint = base + "/embeddings"
	} else {
		c.endpoint = base + "/v1/embeddings"
	}
	c.shown = redact.URL(c.endpoint)
	key, env := providerhttp.Key(cfg.APIKey, cfg.APIKeyEnv, "OPENAI_API_KEY")
	if key != "" {
		c.header.Set("Authorization", "Bearer "+key)
	} else if providerhttp.IsOpenAI(base) {
		return nil, &Error{Provider: OpenAI, Code: CodeAuth, Message: "no API key: set the environment variable " + env + " (or Config.APIKey)"}
	}
	c.encode = func(model string, texts []string) ([]byte, error) {
		return json.Marshal(struct {
			Model          string   `json:"model"`
			Input          []string `json:"input"`
			EncodingFormat string   `json:"encoding_format"`
		}{model, texts, "float"})
	}
	c.decode = decodeOpenAI
	return c, nil
}

// NewOllama returns the adapter for Ollama's native POST /api/embeddings. A
// base URL copied from an OpenAI-compatible setup ("…/v1") is cut back to
// the server's root. Ollama needs no key; one is sent as a Bearer token
// only when Config.APIKey or APIKeyEnv is set (an authenticating proxy).
func NewOllama(cfg Config) (Embedder, error) {
	cfg.BaseURL = strings.TrimSuffix(strings.TrimSuffix(strings.TrimRight(cfg.BaseURL, "/"), "/v1"), "/api")
	c, base, err := newClient(Ollama, cfg, DefaultOllamaBaseURL)
	if err != nil {
		return nil, err
	}
	c.endpoint = base + "/api/embed"
	c.shown = redact.URL(c.endpoint)
	if key, _ := providerhttp.Key(cfg.APIKey, cfg.APIKeyEnv, ""); key != "" {
		c.header.Set("Authorization", "Bearer "+key)
	}
	c.encode = func(model string, texts []string) ([]byte, error) {
		return json.Marshal(struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}{model, texts})
	}
	c.decode = decodeOllama
	return c, nil
}

func newClient(name string, cfg Config, defaultBase string) (*client, string, error) {
	refuse := func(format string, args ...any) error {
		return &Error{Provider: name, Code: CodeBadRequest, Message: fmt.Sprintf(format, args...)}
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, "", refuse("model: not set (the embedding model, e.g. text-embedding-3-small or nomic-embed-text)")
	}
	base, err := providerhttp.BaseURL(cfg.BaseURL, defaultBase)
	if err != nil {
		return nil, "", &Error{Provider: name, Code: CodeBadRequest, Message: "base URL " + err.Error(), err: err}
	}
	if cfg.Timeout < 0 {
		return nil, "", refuse("timeout %s: must not be negative", cfg.Timeout)
	}
	if cfg.BatchSize < 0 {
		return nil, "", refuse("batch size %d: must not be negative", cfg.BatchSize)
	}
	c := &client{name: name, header: providerhttp.Header(), model: cfg.Model, timeout: cfg.Timeout, batch: cfg.BatchSize,
		retries: cfg.MaxRetries, maxChars: cfg.MaxInputChars, http: samehost.Client(cfg.HTTPClient), backoff: 250 * time.Millisecond}
	if c.timeout == 0 {
		c.timeout = DefaultTimeout
	}
	if c.batch == 0 {
		c.batch = DefaultBatchSize
	}
	switch {
	case c.retries == 0:
		c.retries = DefaultMaxRetries
	case c.retries < 0:
		c.retries = 0
	}
	if c.maxChars == 0 {
		c.maxChars = DefaultMaxInputChars
	}
	return c, base, nil
}

// Model implements Embedder.
func (c *client) Model() string { return c.model }

// Embed implements Embedder: the texts go in requests of at most
// Config.BatchSize, each cut to Config.MaxInputChars characters; a
// transient failure of a request is retried (embedding has no side
// effects, so sending a request again is always safe). No texts, no
// request. An empty text is refused: the providers reject it.
func (c *client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	in := make([]string, len(texts))
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			return nil, &Error{Provider: c.name, Code: CodeBadRequest, Message: fmt.Sprintf("texts[%d] is empty: there is nothing to embed", i)}
		}
		in[i] = cut(strings.ToValidUTF8(t, "\uFFFD"), c.maxChars)
	}
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(in); start += c.batch {
		end := min(start+c.batch, len(in))
		vecs, err := c.embedBatch(ctx, in[start:end])
		if err != nil {
			return nil, err
		}
		if len(out) > 0 && len(vecs[0]) != len(out[0]) {
			return nil, &Error{Provider: c.name, URL: c.shown, Code: CodeBadResponse,
				Message: fmt.Sprintf("texts %d… came back with %d dimensions, texts 0… with %d", start, len(vecs[0]), len(out[0]))}
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// cut keeps the first n characters of s (n < 0: all).
func cut(s string, n int) string {
	if n < 0 || len(s) <= n {
		return s
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

func (c *client) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := c.encode(c.model, texts)
	if err != nil {
		return nil, &Error{Provider: c.name, Code: CodeBadRequest, Message: "encoding the request: " + err.Error()}
	}
	for attempt := 0; ; attempt++ {
		vecs, wait, err := c.send(ctx, body, len(texts))
		if err == nil {
			return vecs, nil
		}
		var e *Error
		if !errors.As(err, &e) || !e.Retryable || attempt >= c.retries {
			return nil, err
		}
		if wait < 0 {
			wait = c.backoff << attempt
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return nil, err // no time left to wait for a retry
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, err
		case <-t.C:
		}
	}
}

// send makes one request. wait is the server's Retry-After (negative when
// it gave none).
func (c *client) send(ctx context.Context, body []byte, n int) (vecs [][]float32, wait time.Duration, err error) {
	wait = -1
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, wait, &Error{Provider: c.name, URL: c.shown, Code: CodeBadRequest, Message: redact.Text(err.Error())}
	}
	req.Header = c.header.Clone()
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, wait, c.transportError(ctx, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, wait, c.transportError(ctx, err)
	}
	if len(data) > maxResponseBytes {
		return nil, wait, &Error{Provider: c.name, URL: c.shown, Status: resp.StatusCode, Code: CodeBadResponse,
			Message: "the response is larger than " + strconv.Itoa(maxResponseBytes) + " bytes"}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := c.statusError(resp.StatusCode, data)
		if e.Retryable {
			wait = retryAfter(resp.Header.Get("Retry-After"))
		}
		return nil, wait, e
	}
	vecs, err = c.decode(data, n)
	if err != nil {
		return nil, wait, &Error{Provider: c.name, URL: c.shown, Status: resp.StatusCode, Code: CodeBadResponse, Message: err.Error()}
	}
	return vecs, wait, nil
}

// statusError maps a non-2xx answer to an Error carrying the provider's
// message.
func (c *client) statusError(status int, body []byte) *Error {
	msg, kind := errorMessage(body)
	e := &Error{Provider: c.name, URL: c.shown, Status: status, Message: msg}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.Code = CodeAuth
	case status == http.StatusTooManyRequests:
		e.Code = CodeRateLimit
		// A spent quota is a 429 too, but waiting does not refill it.
		e.Retryable = kind != "insufficient_quota"
	case status == http.StatusRequestTimeout:
		e.Code, e.Retryable = CodeTimeout, true
	case status >= 500:
		e.Code = CodeUnavailable
		e.Retryable = status != http.StatusNotImplemented
	default:
		e.Code = CodeBadRequest
	}
	if e.Message == "" {
		e.Message = http.StatusText(status)
	}
	return e
}

// errorMessage reads the message of an error body: OpenAI's
// {"error":{"message","type","code"}}, Ollama's {"error":"…"}, vLLM's
// {"message":…}, FastAPI's {"detail":…}; else the body's start. kind is
// the error's code or type when it has one.
func errorMessage(body []byte) (msg, kind string) {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &v) == nil {
		var s string
		var obj struct {
			Message string          `json:"message"`
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"`
		}
		switch {
		case len(v.Error) > 0 && json.Unmarshal(v.Error, &s) == nil && s != "":
			return s, ""
		case len(v.Error) > 0 && json.Unmarshal(v.Error, &obj) == nil && obj.Message != "":
			kind = obj.Type
			var code string
			if json.Unmarshal(obj.Code, &code) == nil && code != "" {
				kind = code
			}
			return obj.Message, kind
		case v.Message != "":
			return v.Message, ""
		case len(v.Detail) > 0:
			if json.Unmarshal(v.Detail, &s) == nil {
				return s, ""
			}
			return string(v.Detail), ""
		}
	}
	text := strings.TrimSpace(strings.ToValidUTF8(string(body), "?"))
	if len(text) > 300 {
		text = cut(text, 300) + "…"
	}
	return text, ""
}

// retryAfter reads a Retry-After header (seconds or an HTTP date), capped;
// -1 when absent or unreadable.
func retryAfter(h string) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return -1
	}
	var d time.Duration
	if secs, err := strconv.ParseFloat(h, 64); err == nil && secs >= 0 {
		d = time.Duration(secs * float64(time.Second))
	} else if t, err := http.ParseTime(h); err == nil {
		d = max(0, time.Until(t))
	} else {
		return -1
	}
	return min(d, maxRetryWait)
}

// transportError maps a failure of the HTTP exchange itself. A deadline
// and an unreachable server are worth a retry; a canceled request or a
// certificate problem are not, nor is a redirect the client refused (the
// base URL is wrong; asking again changes nothing).
func (c *client) transportError(ctx context.Context, err error) *Error {
	var re *samehost.RedirectError
	if errors.As(err, &re) {
		return &Error{Provider: c.name, URL: c.shown, Code: CodeBadRequest, Message: re.Error()}
	}
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return &Error{Provider: c.name, URL: c.shown, Code: CodeTimeout, Retryable: true,
			Message: "no response within " + c.timeout.String()}
	case errors.Is(err, context.Canceled):
		return &Error{Provider: c.name, URL: c.shown, Code: CodeUnavailable, Message: "request canceled"}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // its text repeats the method and URL
	}
	why := "cannot reach the server: " + redact.Text(err.Error())
	var cv *tls.CertificateVerificationError
	if errors.As(err, &cv) {
		return &Error{Provider: c.name, URL: c.shown, Code: CodeUnavailable, Message: why}
	}
	return &Error{Provider: c.name, URL: c.shown, Code: CodeUnavailable, Retryable: true, Message: why}
}

// decodeOpenAI reads {"data":[{"index":i,"embedding":[…]}]} into n vectors
// in input order: the data may come in any order, each index once. An
// embedding given as base64 (encoding_format "base64", which some servers
// answer whatever was asked) is read as little-endian float32.
func decodeOpenAI(body []byte, n int) ([][]float32, error) {
	var r struct {
		Data *[]struct {
			Index     *int            `json:"index"`
			Embedding json.RawMessage `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("not an embeddings response: %v", err)
	}
	if r.Data == nil {
		return nil, errors.New(`not an embeddings response: no "data" array`)
	}
	data := *r.Data
	if len(data) != n {
		return nil, fmt.Errorf("%d embeddings for %d texts", len(data), n)
	}
	out := make([][]float32, n)
	for i, d := range data {
		idx := i
		if d.Index != nil {
			idx = *d.Index
		}
		if idx < 0 || idx >= n {
			return nil, fmt.Errorf("data[%d].index %d is outside 0…%d", i, idx, n-1)
		}
		if out[idx] != nil {
			return nil, fmt.Errorf("data[%d].index %d repeats", i, idx)
		}
		v, err := readVector(d.Embedding)
		if err != nil {
			return nil, fmt.Errorf("data[%d].embedding: %v", i, err)
		}
		out[idx] = v
	}
	return out, sameDims(out, "index")
}

// decodeOllama reads {"embeddings":[[…],…]}, one per input, in order.
func decodeOllama(body []byte, n int) ([][]float32, error) {
	var r struct {
		Embeddings *[]json.RawMessage `json:"embeddings"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("not an embed response: %v", err)
	}
	if r.Embeddings == nil {
		return nil, errors.New(`not an embed response: no "embeddings" array`)
	}
	if len(*r.Embeddings) != n {
		return nil, fmt.Errorf("%d embeddings for %d texts", len(*r.Embeddings), n)
	}
	out := make([][]float32, n)
	for i, raw := range *r.Embeddings {
		v, err := readVector(raw)
		if err != nil {
			return nil, fmt.Errorf("embeddings[%d]: %v", i, err)
		}
		out[i] = v
	}
	return out, sameDims(out, "embeddings")
}

func readVector(raw json.RawMessage) ([]float32, error) {
	raw = bytes.TrimSpace(raw)
	var v []float32
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil || len(b)%4 != 0 {
			return nil, errors.New("a string that is not base64 of float32 values")
		}
		v = make([]float32, len(b)/4)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
	} else if err := json.Unmarshal(raw, &v); err != nil {
		return nil, errors.New("not an array of numbers")
	}
	if len(v) == 0 {
		return nil, errors.New("empty")
	}
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, errors.New("not a finite number")
		}
	}
	return v, nil
}

func sameDims(vs [][]float32, what string) error {
	for i, v := range vs {
		if len(v) != len(vs[0]) {
			return fmt.Errorf("the vector of %s %d has %d dimensions, the one of %s 0 has %d", what, i, len(v), what, len(vs[0]))
		}
	}
	return nil
}
