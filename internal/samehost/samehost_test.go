package samehost_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/clipfold/clipfold/internal/samehost"
	"github.com/clipfold/clipfold/internal/samehost/samehosttest"
)

func TestCrossHostRedirectsAreRefused(t *testing.T) {
	for _, status := range samehosttest.Statuses {
		sink := samehosttest.NewSink(t, `{"ok":true}`)
		redir := samehosttest.NewRedirector(t, status, sink.URL)
		req, err := http.NewRequest(http.MethodPost, redir.URL+"/v1/x", strings.NewReader(`{"secret":"prompt"}`))
		require.NoError(t, err)
		req.Header.Set("x-api-key", "sk-test")
		resp, err := samehost.Client(nil).Do(req)
		if resp != nil {
			resp.Body.Close()
		}
		var re *samehost.RedirectError
		require.ErrorAs(t, err, &re, "HTTP %d", status)
		assert.True(t, re.CrossHost)
		assert.Equal(t, status, re.Status)
		assert.Contains(t, err.Error(), redir.URL, "names the configured host")
		assert.Contains(t, err.Error(), sink.URL, "names the other host")
		conns, reqs := sink.Reached()
		assert.Zero(t, conns, "HTTP %d: no connection to the other host", status)
		assert.Zero(t, reqs, "HTTP %d: no request to the other host", status)
		assert.Equal(t, 1, redir.Requests())
	}
}

func TestSameHostRedirects(t *testing.T) {
	for _, status := range samehosttest.Statuses {
		var final atomic.Int32
		var gotKey, gotBody, gotMethod atomic.Value
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/old" {
				http.Redirect(w, r, "/new", status)
				return
			}
			final.Add(1)
			b, _ := io.ReadAll(r.Body)
			gotKey.Store(r.Header.Get("x-api-key"))
			gotBody.Store(string(b))
			gotMethod.Store(r.Method)
		}))
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/old", strings.NewReader("body"))
		require.NoError(t, err)
		req.Header.Set("x-api-key", "k")
		resp, err := samehost.Client(nil).Do(req)
		if resp != nil {
			resp.Body.Close()
		}
		if status == http.StatusTemporaryRedirect || status == http.StatusPermanentRedirect {
			require.NoError(t, err, "HTTP %d keeps the method and body: followed", status)
			assert.Equal(t, int32(1), final.Load())
			assert.Equal(t, "k", gotKey.Load())
			assert.Equal(t, "body", gotBody.Load())
			assert.Equal(t, http.MethodPost, gotMethod.Load())
		} else {
			var re *samehost.RedirectError
			require.ErrorAs(t, err, &re, "HTTP %d would turn the POST into a GET: refused", status)
			assert.False(t, re.CrossHost)
			assert.Contains(t, err.Error(), srv.URL+"/old")
			assert.Contains(t, err.Error(), srv.URL+"/new")
			assert.Zero(t, final.Load(), "HTTP %d: not followed", status)
		}
		srv.Close()
	}
}

func TestClientKeepsTheCallersPolicyAndClient(t *testing.T) {
	stop := errors.New("caller's policy")
	base := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return stop }}
	c := samehost.Client(base)
	assert.NotSame(t, base, c)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/again", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	_, err := c.Post(srv.URL, "text/plain", strings.NewReader("x"))
	assert.ErrorIs(t, err, stop, "a same-host 307 passes the policy, then the caller's CheckRedirect decides")
	// Without one, a loop stops after 10 redirects.
	_, err = samehost.Client(nil).Post(srv.URL, "text/plain", strings.NewReader("x"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "stopped after 10 redirects")
}

func TestSameOrigin(t *testing.T) {
	u := func(s string) *url.URL { p, err := url.Parse(s); require.NoError(t, err); return p }
	assert.True(t, samehost.SameOrigin(u("https://API.example.com/v1"), u("https://api.example.com:443/x")))
	assert.True(t, samehost.SameOrigin(u("http://h/v1"), u("http://h:80/x")))
	assert.False(t, samehost.SameOrigin(u("https://h/"), u("http://h/")), "scheme")
	assert.False(t, samehost.SameOrigin(u("https://h/"), u("https://h:8443/")), "port")
	assert.False(t, samehost.SameOrigin(u("https://h/"), u("https://h.evil/")), "host")
	assert.False(t, samehost.SameOrigin(u("https://h/"), u("https://sub.h/")), "a subdomain is another host")
}
