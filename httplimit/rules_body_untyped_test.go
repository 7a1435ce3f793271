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

// sendTyped sends body in a POST from addr through h with the fields of
// header, and no Content-Type unless header has one; it returns the
// status.
func sendTyped(t *testing.T, h http.Handler, addr string, header http.Header, body string) int {
	t.Helper()
	return sendAs(t, h, "POST", addr, header, body)
}

// sendAs is sendTyped with the request's method.
func sendAs(t *testing.T, h http.Handler, method, addr string, header http.Header, body string) int {
	t.Helper()
	r := httptest.NewRequest(method, "/login", strings.NewReader(body))
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
// Content-Encoding. One that opens no object has no JSON field; when
// it holds no pair of the field's name either (see
// TestAnUntypedPOSTIsAFormToRack), the rule falls back to the client's
// address.
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
	for i, body := range []string{`["alice"]`, `mail=alice`, "alice", " \n", ""} {
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

// Rack (so Rails, Sinatra and Hanami) reads the body of a POST without a
// Content-Type as a form: Rack::Request#form_data? holds for a POST
// without a type, and Rails' parse_formatted_parameters leaves a body
// without one to Rack. username=alice sent so is alice's sign-in attempt
// to a Rails upstream, counted as hers from any address, as a json: key
// reads it under its Rails name (user[email] for user.email). Rack reads
// no untyped body of another method as a form: a form: key reads none
// there, and a json: key reads it as JSON alone.
func TestAnUntypedPOSTIsAFormToRack(t *testing.T) {
	mw, _ := rulesMiddleware(t, bodyKeyRule("form:username", httplimit.FallbackIP, 1))
	h := mw.Handler(echoBody())
	var got []int
	for i := range 3 {
		got = append(got, sendTyped(t, h, fmt.Sprintf("192.0.2.%d", i+1), nil, "username=alice&password=p"+fmt.Sprint(i)))
	}
	if want := []int{200, 429, 429}; !slices.Equal(got, want) {
		t.Errorf("three guesses at alice, untyped form POSTs, three addresses: %v, want %v", got, want)
	}
	for i := range 2 {
		if code := sendAs(t, h, "PUT", fmt.Sprintf("198.51.100.%d", i+1), nil, "username=bob"); code != 200 {
			t.Errorf("username=bob, an untyped PUT, from address %d: %d, want 200 (each address its own count)", i+1, code)
		}
	}

	mw, _ = rulesMiddleware(t, bodyKeyRule("json:user.email", httplimit.FallbackIP, 1))
	h = mw.Handler(echoBody())
	got = []int{
		sendTyped(t, h, "192.0.2.1", nil, "user%5Bemail%5D=alice&password=p1"),
		sendTyped(t, h, "192.0.2.2", nil, `{"user":{"email":"Alice"}}`),
		sendAs(t, h, "PUT", "192.0.2.3", nil, "user[email]=alice"),
	}
	if want := []int{200, 429, 200}; !slices.Equal(got, want) {
		t.Errorf("alice as a form POST, a JSON POST and a form PUT, untyped, for json:user.email: %v, want %v", got, want)
	}
}

// An untyped POST body can be a JSON object to sluice and a form to Rack
// at once: {"email":"decoy0","pad":"&email=victim&password=guess0&"} is
// the decoy's to a json: key read as JSON, victim's to Rails
// (params[:email], the body split on '&'). A field whose two readings
// differ is ambiguous: every such request of the rule is counted
// together, from any address, so a decoy that changes with each guess
// gives no guess a count of its own. A field one reading alone gives is
// that reading's (a JSON object has no pair of the name; see
// TestAnUntypedBodyOpeningAnObjectIsReadAsJSON), and readings that agree
// give their value.
func TestAnUntypedPOSTWhoseJSONAndFormReadingsDifferIsAmbiguous(t *testing.T) {
	for _, key := range []string{"json:email", "form:email"} {
		mw, _ := rulesMiddleware(t, bodyKeyRule(key, httplimit.FallbackIP, 2))
		h := mw.Handler(echoBody())
		var got []int
		for i := range 5 {
			body := fmt.Sprintf(`{"email":"decoy%d","pad":"&email=victim&password=guess%d&"}`, i, i)
			got = append(got, sendTyped(t, h, fmt.Sprintf("192.0.2.%d", i+1), nil, body))
		}
		if want := []int{200, 200, 429, 429, 429}; !slices.Equal(got, want) {
			t.Errorf("%s: five guesses at victim, each under a new decoy, untyped: %v, want %v", key, got, want)
		}
		got = []int{
			sendTyped(t, h, "198.51.100.1", nil, `{"email":"carol","pad":"&email=Carol&"}`),
			sendTyped(t, h, "198.51.100.2", nil, `{"email":"carol"}`),
			sendTyped(t, h, "198.51.100.3", nil, "email=carol"),
		}
		if want := []int{200, 200, 429}; !slices.Equal(got, want) {
			t.Errorf("%s: carol in both readings, as JSON, as a form, untyped: %v, want %v", key, got, want)
		}
	}
}

// utf16Body returns s, of ASCII, in UTF-16 (size 2) or UTF-32 (size 4),
// big-endian or little, after bom.
func utf16Body(s string, size int, big bool, bom string) string {
	b := []byte(bom)
	for _, c := range []byte(s) {
		unit := make([]byte, size)
		if big {
			unit[size-1] = c
		} else {
			unit[0] = c
		}
		b = append(b, unit...)
	}
	return string(b)
}

// FastAPI reads an untyped body (and a typed JSON one) with Python's
// json.loads, which detects UTF-16 and UTF-32, with or without a byte
// order mark (json.detect_encoding), as Jackson does: {"email":"victim"}
// in UTF-16LE after FF FE, in UTF-16BE (00 7B ...) and in UTF-32LE after
// FF FE 00 00 is victim's attempt, counted together from three addresses.
// Such a body is read decoded, so the member is the field's value: a
// typed one of bob after two of alice is bob's first attempt.
func TestAJSONBodyInUTF16OrUTF32IsReadAsJSONLoadsReadsIt(t *testing.T) {
	const doc = `{"email":"%s","password":"p%d"}`
	for _, c := range []struct {
		name string
		body func(string) string
	}{
		{"UTF-16LE after FF FE", func(s string) string { return utf16Body(s, 2, false, "\xFF\xFE") }},
		{"UTF-16BE", func(s string) string { return utf16Body(s, 2, true, "") }},
		{"UTF-32LE after FF FE 00 00", func(s string) string { return utf16Body(s, 4, false, "\xFF\xFE\x00\x00") }},
		{"UTF-32BE", func(s string) string { return utf16Body(s, 4, true, "") }},
	} {
		mw, _ := rulesMiddleware(t, bodyKeyRule("json:email", httplimit.FallbackIP, 2))
		h := mw.Handler(echoBody())
		var got []int
		for i := range 3 {
			got = append(got, sendTyped(t, h, fmt.Sprintf("192.0.2.%d", i+1), nil, c.body(fmt.Sprintf(doc, "victim", i))))
		}
		if want := []int{200, 200, 429}; !slices.Equal(got, want) {
			t.Errorf("untyped %s {\"email\":\"victim\"} from three addresses: %v, want %v", c.name, got, want)
		}

		mw, _ = rulesMiddleware(t, bodyKeyRule("json:email", httplimit.FallbackIP, 2))
		h = mw.Handler(echoBody())
		typed := http.Header{"Content-Type": {"application/json"}}
		got = nil
		for i, who := range []string{"alice", "alice", "bob"} {
			got = append(got, sendTyped(t, h, "192.0.2.1", typed, c.body(fmt.Sprintf(doc, who, i))))
		}
		if want := []int{200, 200, 200}; !slices.Equal(got, want) {
			t.Errorf("application/json in %s, alice twice then bob: %v, want %v", c.name, got, want)
		}
	}
}
