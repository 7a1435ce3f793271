package server_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// sendRequestLine sends the request line target (with a Host and no body) to
// addr over a connection of its own and returns the answer.
func sendRequestLine(t *testing.T, addr, line string) (*http.Response, string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, line+" HTTP/1.1\r\nHost: "+addr+"\r\nContent-Length: 0\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	method, _, _ := strings.Cut(line, " ")
	r, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: method})
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	defer r.Body.Close()
	body, _ := io.ReadAll(r.Body)
	return r, string(body)
}

// The requests Go's ServeMux would answer itself — CONNECT in authority
// form, a target of "*" other than OPTIONS' — get a problem body on every
// listener like every other refusal of sluice's, and none reaches the
// upstream.
func TestListenersAnswerWhatTheMuxWouldWithProblems(t *testing.T) {
	f := newFixture(t, testConfig)
	l := serveOn(t, f.srv)
	for _, addr := range []string{l.public, l.admin} {
		for _, c := range []struct {
			line string
			code int
		}{
			{"CONNECT example.com:443", http.StatusNotFound},
			{"CONNECT [::1]:443", http.StatusNotFound},
			{"GET *", http.StatusBadRequest},
			{"POST *", http.StatusBadRequest},
		} {
			r, body := sendRequestLine(t, addr, c.line)
			if r.StatusCode != c.code || r.Header.Get("Content-Type") != "application/problem+json" || !strings.Contains(body, `"status":`) {
				t.Errorf("%s: %s: %d %q %q, want %d and a problem body", addr, c.line, r.StatusCode, r.Header.Get("Content-Type"), body, c.code)
			}
		}
	}
	if n := f.hits.Load(); n != 0 {
		t.Errorf("the upstream saw %d requests, want none", n)
	}
}

// A path that is not clean is sent to its clean form with its method kept
// (307), on both listeners, as the public listener does with encoded dot
// segments: a 301 turns a client's POST into a GET.
func TestUncleanPathsRedirectKeepingTheMethod(t *testing.T) {
	f := newFixture(t, testConfig)
	l := serveOn(t, f.srv)
	for _, c := range []struct{ addr, line, location string }{
		{l.public, "POST /api//generate?x=1", "/api/generate?x=1"},
		{l.public, "POST /api/./generate", "/api/generate"},
		{l.public, "DELETE /a/../api/x", "/api/x"},
		{l.admin, "POST /v1//check", "/v1/check"},
		{l.admin, "DELETE /v1/keys/a/../key:b", "/v1/keys/key:b"},
	} {
		r, body := sendRequestLine(t, c.addr, c.line)
		if r.StatusCode != http.StatusTemporaryRedirect || r.Header.Get("Location") != c.location || strings.Contains(body, "<a") {
			t.Errorf("%s: %d Location %q %q, want 307 to %s", c.line, r.StatusCode, r.Header.Get("Location"), body, c.location)
		}
	}
	if n := f.hits.Load(); n != 0 {
		t.Errorf("the upstream saw %d requests, want none", n)
	}
}

// An unclean path's redirect keeps its percent-escapes as the client wrote
// them: /files//my%20report.pdf goes to /files/my%20report.pdf, not to
// /files/my%2520report.pdf, a resource of another name.
func TestUncleanPathsRedirectKeepingTheirEscapes(t *testing.T) {
	f := newFixture(t, testConfig)
	l := serveOn(t, f.srv)
	for _, c := range []struct{ addr, line, location string }{
		{l.public, "GET /files//my%20report.pdf", "/files/my%20report.pdf"},
		{l.public, "POST /a//b%2Fc?x=%20", "/a/b%2Fc?x=%20"},
		{l.public, "GET /api/./x%3Fy", "/api/x%3Fy"},
		{l.public, "GET /%2e%2e//api/generate", "/%2e%2e/api/generate"}, // then to /api/generate
		{l.admin, "DELETE /v1//keys/rule:logins/a%2Fb", "/v1/keys/rule:logins/a%2Fb"},
	} {
		r, _ := sendRequestLine(t, c.addr, c.line)
		if loc := r.Header.Get("Location"); r.StatusCode != http.StatusTemporaryRedirect || loc != c.location {
			t.Errorf("%s: %d Location %q, want 307 to %s", c.line, r.StatusCode, loc, c.location)
		}
	}
	if n := f.hits.Load(); n != 0 {
		t.Errorf("the upstream saw %d requests, want none", n)
	}
}
