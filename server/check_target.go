package server

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// The parts of a request described to sluice rather than sent to it — the
// decision API's method, path and host, forward-auth's X-Forwarded-* and
// X-Original-* — are checked by one set of rules, so that both refuse the
// same descriptions with a 400.

// errNotMethod is validMethod's error.
var errNotMethod = errors.New("is not an HTTP method")

// validMethod returns an error for a described method that is not one: more
// than 32 bytes, or with a lower-case letter or a character no token has
// (upperMethod: a space, a tab, a slash, a comma, a byte outside ASCII).
// An empty method is the caller's to default (GET).
func validMethod(m string) error {
	if len(m) > 32 || !upperMethod(m) {
		return fmt.Errorf("%q %w", m, errNotMethod)
	}
	return nil
}

// absolutePath reports whether p is an absolute path ("/…"), as a request
// target in origin form starts: "*" and a path without its "/" are not.
func absolutePath(p string) bool { return p != "" && p[0] == '/' }

// errNotTarget is describedTarget's error.
var errNotTarget = errors.New("want a request URI with an absolute path, its escapes well formed (%XX)")

// errThreeReadings is the error of a described path that judgedPath
// refuses.
var errThreeReadings = errors.New(`a ".." segment after an escaped slash ("/a%2Fb/../c") makes it one path decoded and another as ServeMux reads it, which no one decision judges both of`)

// describedTarget returns the described request target t (the decision
// API's path, forward-auth's X-Forwarded-Uri or X-Original-URI) without its
// fragment, and its URL; an error (errNotTarget) when it is not a request
// URI (url.ParseRequestURI: a malformed escape such as "%zz", a control
// character) with an absolute path ("*", a path without its "/", "#x").
// A request target has no fragment (RFC 9112 §3.2), but nginx's
// $request_uri keeps a "#…" the client wrote, and nginx (its $uri and
// locations) and many servers behind it end the path there: so do the
// rules, costs and exemptions, on both surfaces, and "/api/generate#x"
// costs what "/api/generate" costs. An absolute-form target
// ("http://host/path", which a client may send a proxy) parses, its path
// "" when it has none: the caller says whether it takes one.
func describedTarget(t string) (string, *url.URL, error) {
	t, _, _ = strings.Cut(t, "#")
	u, err := url.ParseRequestURI(t)
	if err != nil || u.Path != "" && !absolutePath(u.Path) || u.Path == "" && u.Scheme == "" {
		return "", nil, errNotTarget
	}
	return t, u, nil
}

// validHost returns an error for a described host that is none: more than
// maxHostLen bytes, or with a space, a control character or a byte outside
// ASCII. An empty host is the caller's to default.
func validHost(h string) error {
	if len(h) > maxHostLen || strings.ContainsFunc(h, notHostByte) {
		return fmt.Errorf("want a host name or address of at most %d bytes, without spaces or control characters", maxHostLen)
	}
	return nil
}

// notHostByte reports the runes no host has: spaces, controls, and
// anything outside ASCII (a host is sent in its ASCII, punycode, form).
func notHostByte(r rune) bool { return r <= ' ' || r >= 0x7f }

// upperMethod reports whether m is made of the characters of a method
// token (RFC 9110 §9.1: tchar, §5.6.2), no lower-case letter among them:
// "DELETE," and "DELETE,GET", a list, are no method. It allocates nothing.
func upperMethod(m string) bool {
	for i := 0; i < len(m); i++ {
		if c := m[i]; !httpguts.IsTokenRune(rune(c)) || 'a' <= c && c <= 'z' {
			return false
		}
	}
	return true
}

// fragmentSent reports whether the request target t that a client sent
// the reverse proxy (Request.RequestURI) holds a "#", which the proxy
// would forward as sent: the proxy refuses it (fragmentSentDetail) rather
// than cut it, as forward-auth and the decision API cut a described one
// (describedTarget), for the target reaches the upstream as it is. An
// escaped "%23" is a character of the path or query, no fragment.
func fragmentSent(t string) bool { return strings.IndexByte(t, '#') >= 0 }

// fragmentSentDetail is the detail of the 400 to a target fragmentSent
// reports.
const fragmentSentDetail = `The request target holds a "#": a fragment is no part of a request target (RFC 9112 §3.2), and upstreams read the path and query before it differently (nginx, PHP and Express end them at the "#", Go's server keeps it), so no one decision judges what the upstream serves; send the target without its fragment.`

// describedRequest returns the request that a decision API check describes
// (method, path and host, validated), for the routes that judge it beyond
// its limits (degradation classes): its path without the query, an escaped
// path kept as sent beside its decoded reading, as
// httplimit.Middleware.DecideFor reads it for costs and rules.
func describedRequest(method, path, host string) *http.Request {
	path, query, _ := strings.Cut(path, "?")
	u := &url.URL{Path: path, RawQuery: query}
	if p, err := url.PathUnescape(path); err == nil && p != path {
		u.Path, u.RawPath = p, path
	}
	return &http.Request{Method: method, URL: u, Host: host, Header: http.Header{}}
}
