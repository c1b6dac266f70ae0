// Package samehost keeps an HTTP client's requests on the server they were
// sent to. The llm and embeddings clients send an API key (x-api-key,
// Authorization, any configured header) and a whole conversation with
// every request; net/http's default redirect policy would follow a 302 or
// a 307 to any host, resending x-api-key (it drops only Authorization and
// cookies on a host change) and, on a 307 or 308, the body.
//
// The policy: a redirect to another origin (scheme, host or port differs)
// is an error naming both; a redirect on the same origin is followed only
// when it keeps the method and the body (307, 308), because a 301, 302 or
// 303 turns the POST into a bodiless GET that no API answers with what
// was asked. See RATIONALE.md.
package samehost

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/clipfold/clipfold/internal/redact"
)

// maxRedirects is net/http's own limit.
const maxRedirects = 10

// RedirectError is a redirect the policy refused. No request was sent to
// To.
type RedirectError struct {
	Status    int    // the redirect's HTTP status
	From, To  string // the URLs, redacted
	CrossHost bool   // To is on another origin than the request's
}

func (e *RedirectError) Error() string {
	if e.CrossHost {
		return fmt.Sprintf("the server at %s redirected (HTTP %d) to another host, %s: refused, "+
			"so that neither the API key nor the request leaves %s; set the base URL to the server that answers",
			origin(e.From), e.Status, origin(e.To), origin(e.From))
	}
	return fmt.Sprintf("%s redirected (HTTP %d) to %s: refused, because following it would resend the POST as a GET "+
		"without its body; set the base URL to the address that answers", e.From, e.Status, e.To)
}

// Client returns a copy of c (a new client when c is nil) whose redirects
// follow the policy; c's own CheckRedirect, if any, is consulted after it.
// c itself is not changed.
func Client(c *http.Client) *http.Client {
	var cp http.Client
	if c != nil {
		cp = *c
	}
	next := cp.CheckRedirect
	cp.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if err := Check(req, via); err != nil {
			return err
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		return nil
	}
	return &cp
}

// Check is the policy as an http.Client CheckRedirect function: req is the
// redirected request, via[0] the one that was sent first.
func Check(req *http.Request, via []*http.Request) error {
	if len(via) == 0 {
		return errors.New("samehost: a redirect without a first request")
	}
	prev := via[len(via)-1]
	status := 0
	if req.Response != nil {
		status = req.Response.StatusCode
	}
	e := &RedirectError{Status: status, From: redact.URL(prev.URL.String()), To: redact.URL(req.URL.String())}
	if !SameOrigin(via[0].URL, req.URL) {
		e.CrossHost = true
		return e
	}
	if status != http.StatusTemporaryRedirect && status != http.StatusPermanentRedirect {
		return e
	}
	return nil
}

// SameOrigin reports whether a and b have the same scheme, host and port
// (a missing port is the scheme's default).
func SameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) &&
		port(a) == port(b)
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "http":
		return "80"
	case "https":
		return "443"
	}
	return ""
}

// origin is a redacted URL's scheme://host[:port].
func origin(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return u
	}
	return p.Scheme + "://" + p.Host
}
