// Package redact hides the secrets a URL may carry before the URL is
// printed: in an error, a warning, a log line or a report. It is the one
// place the Go host does so; the llm and embeddings clients and the
// command all use it.
//
// What is hidden: the userinfo's password, and in an http(s) or ws(s) URL
// a user name that stands alone, which is then a token
// (https://TOKEN@host; postgres://clipfold@db keeps its user), and the
// values of key-like query and fragment parameters (key, api_key, apikey,
// token, access_token, secret, password, sig, signature, … in any case,
// with or without - and _). Everything else is kept byte for byte, so a
// redacted URL still says which server and path were used.
package redact

import (
	"net/url"
	"strings"
)

// Mask replaces each hidden value.
const Mask = "xxxxx"

// secretSuffixes end the normalized name (lower case, without "-", "_"
// and ".") of a parameter whose value is hidden: "api_key", "X-Amz-Signature",
// "client_secret", "access_token", "sig" and "subscription-key" all do.
var secretSuffixes = []string{
	"key", "token", "secret", "password", "passwd", "pwd", "pass",
	"sig", "signature", "credential", "credentials", "auth", "authorization",
}

// Text returns s with every URL in it (scheme://…) redacted as URL does.
// Text without "://" is returned as is.
func Text(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	var b strings.Builder
	rest := s
	for {
		i := strings.Index(rest, "://")
		if i < 0 {
			b.WriteString(rest)
			return b.String()
		}
		start := i
		for start > 0 && isSchemeByte(rest[start-1]) {
			start--
		}
		end := i + 3
		for end < len(rest) && !isURLEnd(rest[end]) {
			end++
		}
		// Punctuation that ends a sentence or closes a bracket is not the
		// URL's.
		for end > i+3 && strings.IndexByte(".,;:!?)]}", rest[end-1]) >= 0 {
			end--
		}
		b.WriteString(rest[:start])
		if start == i { // "://" without a scheme: not a URL
			b.WriteString(rest[i : i+3])
			rest = rest[i+3:]
			continue
		}
		b.WriteString(URL(rest[start:end]))
		rest = rest[end:]
	}
}

// URL returns u with its userinfo and the values of its key-like query
// and fragment parameters replaced by Mask. It works on the text, so a URL
// that does not parse is redacted all the same.
func URL(u string) string {
	i := strings.Index(u, "://")
	if i < 0 {
		return u
	}
	head, rest := u[:i+3], u[i+3:]
	// The authority ends at the first "/", "?" or "#".
	authEnd := strings.IndexAny(rest, "/?#")
	if authEnd < 0 {
		authEnd = len(rest)
	}
	auth, tail := rest[:authEnd], rest[authEnd:]
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		user, _, hasPass := strings.Cut(auth[:at], ":")
		switch {
		case hasPass:
			auth = user + ":" + Mask + auth[at:]
		case webScheme(head[:i]):
			auth = Mask + auth[at:] // https://TOKEN@host
		}
	}
	if q := strings.IndexAny(tail, "?#"); q >= 0 {
		tail = tail[:q+1] + params(tail[q+1:])
	}
	return head + auth + tail
}

// params redacts "name=value" pairs separated by "&" (or ";"), and a
// fragment after "#" the same way.
func params(s string) string {
	var b strings.Builder
	for len(s) > 0 {
		end := strings.IndexAny(s, "&;#")
		if end < 0 {
			end = len(s)
		}
		b.WriteString(param(s[:end]))
		if end < len(s) {
			b.WriteByte(s[end])
			end++
		}
		s = s[end:]
	}
	return b.String()
}

func param(p string) string {
	name, value, ok := strings.Cut(p, "=")
	if !ok || value == "" || !secretName(name) {
		return p
	}
	return name + "=" + Mask
}

func secretName(name string) bool {
	if n, err := url.QueryUnescape(name); err == nil {
		name = n
	}
	name = strings.ToLower(name)
	name = strings.NewReplacer("-", "", "_", "", ".", "", " ", "").Replace(name)
	for _, s := range secretSuffixes {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// webScheme reports the schemes whose lone user name is a credential.
func webScheme(scheme string) bool {
	switch strings.ToLower(scheme) {
	case "http", "https", "ws", "wss":
		return true
	}
	return false
}

func isSchemeByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'
}

// isURLEnd reports the bytes a URL in running text cannot contain.
func isURLEnd(c byte) bool {
	return c <= ' ' || c == '"' || c == '\'' || c == '<' || c == '>' || c == '`' || c == '\\' || c == 0x7f
}
