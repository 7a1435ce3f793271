package httplimit_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/httplimit"
)

// sendTyped sends body from addr through h with the fields of header,
// and no Content-Type unless header has one; it returns the status.
func sendTyped(t *testing.T, h http.Handler, addr string, header http.Header, body string) int {
	t.Helper()
	r := httptest.NewRequest("POST", "/login", strings.NewReader(body))
	r.RemoteAddr = addr + ":1234"
	for k, v := range header {
		r.Header[k] = v
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code == http.StatusOK && w.Body.String() != body {
		t.Errorf("the upstream did not receive the body as sent (%d bytes of %d)", w.Body.Len(), len(body))
	}
	return w.Code
}

// A body without a Content-Type (none, or blank) that opens a JSON object
// is JSON to a json: key, as FastAPI and a Go handler decoding r.Body
// read it: after a byte order mark and whitespace, decoded by its
// Content-Encoding. One that opens no object has no field, and the rule
// falls back to the client's address.
func TestAnUntypedBodyOpeningAnObjectIsReadAsJSON(t *testing.T) {
	mw, _ := rulesMiddleware(t, bodyKeyRule("json:email", "", 2))
	h := mw.Handler(echoBody())
	got := []int{
		sendTyped(t, h, "192.0.2.1", nil, `{"email":"alice"}`),
		sendTyped(t, h, "192.0.2.2", http.Header{"Content-Type": {" "}}, "\uFEFF \r\n\t{\"email\":\"Alice\"}"),
		sendTyped(t, h, "192.0.2.3", http.Header{"Content-Encoding": {"gzip"}}, gzipped(`{"email":"alice"}`)),
	}
	if want := []int{200, 200, 429}; !slices.Equal(got, want) {
		t.Errorf("alice, untyped, from three addresses: %v, want %v", got, want)
	}
	for i, body := range []string{`["alice"]`, `email=alice`, "alice", " \n", ""} {
		if code := sendTyped(t, h, fmt.Sprintf("198.51.100.%d", i+1), nil, body); code != 200 {
			t.Errorf("%q, untyped, from an address of its own: %d, want 200 (no field: the address's count)", body, code)
		}
	}
}

// An untyped body that may be JSON but is not read whole (longer than
// MaxKeyBody, malformed after its '{', of a coding not decoded) may hold
// the field the upstream reads: such requests of the rule are counted
// together, as a JSON body's are, from any address.
func TestAnUntypedBodyNotReadWholeIsCountedTogether(t *testing.T) {
	mw, _ := rulesMiddleware(t, bodyKeyRule("json:email", "", 2))
	h := mw.Handler(echoBody())
	got := []int{
		sendTyped(t, h, "192.0.2.1", nil, `{"email":"alice","pad":"`+strings.Repeat("x", httplimit.MaxKeyBody)+`"}`),
		sendTyped(t, h, "192.0.2.2", nil, `{"email":"bob",`),
		sendTyped(t, h, "192.0.2.3", http.Header{"Content-Encoding": {"br"}}, `{"email":"carol"}`),
	}
	if want := []int{200, 200, 429}; !slices.Equal(got, want) {
		t.Errorf("untyped bodies not read whole, from three addresses: %v, want %v", got, want)
	}
}

// A form: key reads no untyped body: PHP, Rails and Express parse no form
// without its type, and a Go handler's r.FormValue reads none either.
func TestAnUntypedFormBodyHasNoFormField(t *testing.T) {
	mw, _ := rulesMiddleware(t, bodyKeyRule("form:username", "", 1))
	h := mw.Handler(echoBody())
	for i := range 3 {
		if code := sendTyped(t, h, fmt.Sprintf("192.0.2.%d", i+1), nil, "username=alice"); code != 200 {
			t.Errorf("username=alice, untyped, from address %d: %d, want 200 (each address its own count)", i+1, code)
		}
	}
}
