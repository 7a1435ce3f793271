package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// TestEncodedDotRedirectKeepsOtherEscapes: the public listener redirects a
// path whose dot segments are percent-encoded ("%2e%2e", ".%2E") to its
// clean form with 307 keeping, as docs/api.md says, the path's
// percent-escapes as written. Only the dot segments are resolved, on the
// path as the client wrote it; an escaped slash separates only next to a
// dot segment ("..%2F" is "../"), and every other escape stays: decoding
// "%2F" or "%3B" names another resource (GitLab's project
// "group%2Fproject" is not /group/project, and Tomcat, Jetty and Spring
// route "a;b" as "a" with a path parameter), and RFC 3986 §6.2.2.2 lets
// normalization decode only unreserved escapes. The query is kept as
// written. The Location is clean: requested, it is not redirected again
// but judged and proxied, the upstream getting exactly that path — the one
// the limiter judged.
func TestEncodedDotRedirectKeepsOtherEscapes(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	f := newFixtureOn(t, testConfig, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.RequestURI)
		mu.Unlock()
	}))
	c := f.http.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	get := func(target, client string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("GET", f.http.URL+target, nil)
		if req.URL.RequestURI() != target {
			t.Fatalf("the client would send %q for %q", req.URL.RequestURI(), target)
		}
		req.Header.Set("X-Forwarded-For", client) // from the trusted 127.0.0.1: a quota each
		r, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		return r
	}
	for i, tc := range []struct{ target, location string }{
		{"/x/%2e%2e/files/my%20report.pdf", "/files/my%20report.pdf"},
		{"/x/%2e%2e/projects/group%2Fproject", "/projects/group%2Fproject"},
		{"/x/%2e%2e/a%3Bb", "/a%3Bb"},
		{"/x/%2e/%7Euser/a%2Bb", "/x/%7Euser/a%2Bb"}, // even an unreserved escape kept as written
		{"/x/..%2Fprojects/group%2fproject", "/projects/group%2fproject"},
		{"/x/y%2F..%2Fz%2Fw", "/x/z%2Fw"},
		{"/x/%2e%2e%2f%2e%2e%2Fa", "/a"},
		{"/x/group%2Fproject/%2e%2e/y", "/x/y"}, // one segment, "group%2Fproject", removed
		{"/x/%2E%2E/a%2Fb/?q=a%2Fb&next=/../c%20d", "/a%2Fb/?q=a%2Fb&next=/../c%20d"},
		{"/%2e%2e%2F%2Fevil.example/x", "/%2Fevil.example/x"}, // never "//evil.example/x", another host
	} {
		r := get(tc.target, fmt.Sprintf("198.51.100.%d", 2*i+1))
		if got := r.Header.Get("Location"); r.StatusCode != http.StatusTemporaryRedirect || got != tc.location {
			t.Errorf("GET %s: %d Location %q, want 307 to %q (its other percent-escapes kept as written)", tc.target, r.StatusCode, got, tc.location)
			continue
		}
		mu.Lock()
		n := len(seen)
		mu.Unlock()
		if n != 0 {
			t.Fatalf("GET %s: the upstream saw %d requests, want none", tc.target, n)
		}
		r = get(tc.location, fmt.Sprintf("198.51.100.%d", 2*i+2))
		mu.Lock()
		got := seen
		seen = nil
		mu.Unlock()
		if r.StatusCode != http.StatusOK || len(got) != 1 || got[0] != tc.location {
			t.Errorf("GET %s (the Location of %s): %d, the upstream saw %q; want 200, proxied as it is", tc.location, tc.target, r.StatusCode, got)
		}
	}
}

// TestEncodedDotRedirectFollowsTheMuxCleaning: a path with both literal
// unclean parts ("//") and encoded dot segments is cleaned in two steps,
// each a 307 keeping the escapes: first as ServeMux cleans the path as
// written, then its encoded dot segments.
func TestEncodedDotRedirectFollowsTheMuxCleaning(t *testing.T) {
	f := newFixture(t, testConfig)
	l := serveOn(t, f.srv)
	for _, c := range []struct{ line, location string }{
		{"GET /%2e%2e//api/a%2Fb", "/%2e%2e/api/a%2Fb"},
		{"GET /%2e%2e/api/a%2Fb", "/api/a%2Fb"},
		{"POST /x//..%2Fapi/a%3Bb?x=%2F", "/x/..%2Fapi/a%3Bb?x=%2F"},
		{"POST /x/..%2Fapi/a%3Bb?x=%2F", "/api/a%3Bb?x=%2F"},
	} {
		r, _ := sendRequestLine(t, l.public, c.line)
		if loc := r.Header.Get("Location"); r.StatusCode != http.StatusTemporaryRedirect || loc != c.location {
			t.Errorf("%s: %d Location %q, want 307 to %s", c.line, r.StatusCode, loc, c.location)
		}
	}
	if n := f.hits.Load(); n != 0 {
		t.Errorf("the upstream saw %d requests, want none", n)
	}
	// A dot within a segment, escaped or not, makes no dot segment.
	for _, target := range []string{"/api/%2efile", "/api/a%2F%2e%2ex", "/api/..%2Ex"} {
		r, _ := sendRequestLine(t, l.public, "GET "+target)
		if r.StatusCode == http.StatusTemporaryRedirect || strings.HasPrefix(r.Header.Get("Location"), "/") {
			t.Errorf("GET %s: %d Location %q, want it judged as it is", target, r.StatusCode, r.Header.Get("Location"))
		}
	}
}
