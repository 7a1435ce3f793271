package httplimit_test

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/httplimit"
)

// phpBoundaryOf returns the boundary PHP's rfc1867 handler reads from a
// Content-Type (main/rfc1867.c): the text after the first '=' that follows
// the first occurrence of "boundary" anywhere in the header (strstr, so
// inside "xboundary" too), up to ',' or ';', or between quotes. It is the
// tests' own reading, written apart from sluice's.
func phpBoundaryOf(ct string) string {
	i := strings.Index(ct, "boundary")
	if i < 0 {
		i = strings.Index(strings.ToLower(ct), "boundary")
	}
	if i < 0 {
		return ""
	}
	j := strings.IndexByte(ct[i:], '=')
	if j < 0 {
		return ""
	}
	b := ct[i+j+1:]
	if strings.HasPrefix(b, `"`) {
		b, _, _ = strings.Cut(b[1:], `"`)
		return b
	}
	if k := strings.IndexAny(b, ",;"); k >= 0 {
		b = b[:k]
	}
	return b
}

// rackBoundaryOf returns the boundary Rack reads from a Content-Type:
// MULTIPART = %r|\Amultipart/.*boundary=\"?([^\";,]+)\"?|ni, greedy, so
// the last "boundary=" anywhere (inside "xboundary=" too).
func rackBoundaryOf(ct string) string {
	i := strings.LastIndex(strings.ToLower(ct), "boundary=")
	if i < 0 {
		return ""
	}
	b := strings.TrimPrefix(ct[i+len("boundary="):], `"`)
	if k := strings.IndexAny(b, `";,`); k >= 0 {
		b = b[:k]
	}
	return b
}

// multipartFieldOf reads the multipart field name of body with boundary,
// the preamble skipped, as an upstream reading that boundary does.
func multipartFieldOf(boundary string, body []byte, name string) string {
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	for {
		p, err := mr.NextPart()
		if err != nil {
			return ""
		}
		if p.FormName() == name {
			v, _ := io.ReadAll(p)
			return string(v)
		}
	}
}

// boundaryPart is a multipart/form-data body of boundary with one field.
func boundaryPart(boundary, name, value string) string {
	return "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + name + "\"\r\n\r\n" + value + "\r\n--" + boundary + "--\r\n"
}

// fiveGuesses sends the bodies body(0..4) as ct (of coding, when not "")
// from five addresses through a 3-a-minute form:username rule whose
// upstream checks, with upstreamReads, that it reads username target, and
// returns the answers.
func fiveGuesses(t *testing.T, ct, coding string, body func(i int) string, upstreamReads func(body []byte) string) []int {
	t.Helper()
	mw, _ := rulesMiddleware(t, bodyKeyRule("form:username", httplimit.FallbackIP, 3))
	h := mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if got := upstreamReads(b); got != "target" {
			t.Fatalf("the upstream's reading gives username %q, want target (the probe is wrong)", got)
		}
	}))
	var got []int
	for i := range 5 {
		r := httptest.NewRequest("POST", "/login", strings.NewReader(body(i)))
		r.RemoteAddr = fmt.Sprintf("192.0.2.%d:1234", i+1)
		r.Header.Set("Content-Type", ct)
		if coding != "" {
			r.Header.Set("Content-Encoding", coding)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		got = append(got, w.Code)
	}
	return got
}

// A multipart body whose Content-Type names no boundary parameter to Go
// but holds "boundary" in another parameter's name (xboundary=AAA) is one
// PHP reads, of the boundary after the first "boundary" anywhere: it is
// counted with every body sluice cannot read, under "~", not by the
// client's address. Five guesses at target from five addresses do not all
// pass a 3-a-minute limit.
func TestAMultipartBoundaryPHPFindsInAnotherParameterIsCountedTogether(t *testing.T) {
	const ct = "multipart/form-data; xboundary=AAA"
	got := fiveGuesses(t, ct, "",
		func(int) string { return boundaryPart("AAA", "username", "target") },
		func(b []byte) string { return multipartFieldOf(phpBoundaryOf(ct), b, "username") })
	if want := []int{200, 200, 200, 429, 429}; !slices.Equal(got, want) {
		t.Errorf("five guesses at target (as PHP reads the body) from five addresses, 3 a minute: %v, want %v", got, want)
	}
}

// A compressed multipart body is read as sent too (PHP reads it so), of
// the boundary PHP reads: where that is not Go's (xboundary=AAA before
// boundary=BBB), a gzip member whose header's file name holds PHP's part
// (username=target) and whose content holds Go's (username=decoyN) is
// counted under "~", not by its decoy.
func TestACompressedMultipartBodyOfAnotherPHPBoundaryIsCountedTogether(t *testing.T) {
	const ct = "multipart/form-data; xboundary=AAA; boundary=BBB"
	got := fiveGuesses(t, ct, "gzip",
		func(i int) string {
			body := gzippedNamed(t, "\r\n"+boundaryPart("AAA", "username", "target"), boundaryPart("BBB", "username", fmt.Sprintf("decoy%d", i)))
			if strings.Contains(body, "--BBB") {
				t.Fatal("the compressed bytes hold Go's delimiter (the probe is wrong)")
			}
			return body
		},
		func(b []byte) string { return multipartFieldOf(phpBoundaryOf(ct), b, "username") })
	if want := []int{200, 200, 200, 429, 429}; !slices.Equal(got, want) {
		t.Errorf("five guesses at target (as PHP reads the body) from five addresses, 3 a minute: %v, want %v", got, want)
	}
}

// Rack reads the boundary of the last "boundary=" of a Content-Type
// (xboundary=AAA after boundary=BBB), Go the parameter boundary: a body
// whose BBB part names decoyN and whose AAA part, in what Go reads as the
// preamble, names target is counted under "~", not by its decoy.
func TestAMultipartBodyOfAnotherRackBoundaryIsCountedTogether(t *testing.T) {
	const ct = "multipart/form-data; boundary=BBB; xboundary=AAA"
	got := fiveGuesses(t, ct, "",
		func(i int) string {
			return boundaryPart("AAA", "username", "target") + boundaryPart("BBB", "username", fmt.Sprintf("decoy%d", i))
		},
		func(b []byte) string { return multipartFieldOf(rackBoundaryOf(ct), b, "username") })
	if want := []int{200, 200, 200, 429, 429}; !slices.Equal(got, want) {
		t.Errorf("five guesses at target (as Rack reads the body) from five addresses, 3 a minute: %v, want %v", got, want)
	}
}

// A multipart body whose Content-Type all upstreams read of one boundary
// (quoted, in another case, followed by a charset) is counted by its
// field's value, as before: five usernames from five addresses each pass
// a 3-a-minute limit, which they would not counted together.
func TestAMultipartBodyOfOneBoundaryToAllIsCountedByItsField(t *testing.T) {
	for _, ct := range []string{
		"multipart/form-data; boundary=AAA",
		`multipart/form-data; boundary="AAA"`,
		"Multipart/Form-Data; Boundary=AAA; charset=utf-8",
	} {
		mw, _ := rulesMiddleware(t, bodyKeyRule("form:username", httplimit.FallbackIP, 3))
		var bodies []string
		for i := range 5 {
			bodies = append(bodies, boundaryPart("AAA", "username", fmt.Sprintf("user%d", i)))
		}
		if got, want := posts(mw.Handler(echoBody()), ct, bodies...), []int{200, 200, 200, 200, 200}; !slices.Equal(got, want) {
			t.Errorf("%s: five usernames from five addresses, 3 a minute: %v, want %v", ct, got, want)
		}
	}
}
