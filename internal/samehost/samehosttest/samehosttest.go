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

// Server is a test server that counts the connections it accepts and the
// requests it answers.
type Server struct {
	*httptest.Server
	mu          sync.Mutex
	connections int
	requests    int
}

// newServer starts a Server answering with answer, closed when the test
// ends.
func newServer(t testing.TB, answer func(w http.ResponseWriter, r *http.Request)) *Server {
	t.Helper()
	s := &Server{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		s.mu.Lock()
		s.requests++
		s.mu.Unlock()
		answer(w, r)
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

// Reached reports how many connections and requests the server got.
func (s *Server) Reached() (connections, requests int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.connections, s.requests
}

// Requests is how many requests the server answered.
func (s *Server) Requests() int {
	_, n := s.Reached()
	return n
}

// NewSink starts the server a redirect points to. It answers like a
// provider that has something to say (reply, as JSON), so that a client
// that reached it would have an answer to take.
func NewSink(t testing.TB, reply string) *Server {
	t.Helper()
	return newServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, reply)
	})
}

// NewRedirector starts a server that answers every request with status
// and a Location of target plus the request's path.
func NewRedirector(t testing.TB, status int, target string) *Server {
	t.Helper()
	return newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", target+r.URL.Path)
		w.WriteHeader(status)
	})
}

// Statuses are the redirects the tests try.
var Statuses = []int{
	http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
	http.StatusTemporaryRedirect, http.StatusPermanentRedirect,
}
