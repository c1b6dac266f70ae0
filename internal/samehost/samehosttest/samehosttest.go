// Package samehosttest provides the servers the redirect tests of the
// HTTP clients share: one that answers every request with a redirect, and
// one that must never be reached.
package samehosttest

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Sink is a server that records every connection and request it gets.
type Sink struct {
	*httptest.Server
	mu          sync.Mutex
	connections int
	requests    int
}

// NewSink starts a Sink, closed when the test ends. Its handler answers
// like a provider that has something to say, so that a client that
// reached it would have an answer to take.
func NewSink(t testing.TB, reply string) *Sink {
	t.Helper()
	s := &Sink{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		s.mu.Lock()
		s.requests++
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, reply)
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.mu.Lock()
			s.connections++
			s.mu.Unlock()
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// Reached reports how many connections and requests the sink got.
func (s *Sink) Reached() (connections, requests int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.connections, s.requests
}

// Redirector is a server that answers every request with status and a
// Location of target plus the request's path, and counts the requests.
type Redirector struct {
	*httptest.Server
	mu       sync.Mutex
	requests int
}

// NewRedirector starts a Redirector, closed when the test ends.
func NewRedirector(t testing.TB, status int, target string) *Redirector {
	t.Helper()
	r := &Redirector{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		r.mu.Lock()
		r.requests++
		r.mu.Unlock()
		w.Header().Set("Location", target+req.URL.Path)
		w.WriteHeader(status)
	}))
	t.Cleanup(r.Close)
	return r
}

// Requests is how many requests the redirector answered.
func (r *Redirector) Requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests
}

// Statuses are the redirects the tests try.
var Statuses = []int{
	http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
	http.StatusTemporaryRedirect, http.StatusPermanentRedirect,
}
