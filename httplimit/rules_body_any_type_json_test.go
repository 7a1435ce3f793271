package httplimit_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/httplimit"
)

// A Go handler decoding r.Body with encoding/json (and gin's
// ShouldBindJSON) reads JSON whatever the request's Content-Type, and
// fetch() sends a string body as text/plain;charset=UTF-8: a body of any
// type that opens a JSON object is that object to such an upstream. So
// {"email":"victim"} sent as text/plain or application/octet-stream is a
// guess at victim's account, counted on it from any address, as the same
// body sent as application/json is. Otherwise an attacker guesses a
// victim's password from many addresses, each counted by its own.
func TestABodyOfAnyTypeOpeningAnObjectIsReadAsJSON(t *testing.T) {
	mw, _ := rulesMiddleware(t, bodyKeyRule("json:email", httplimit.FallbackIP, 2))
	h := mw.Handler(echoBody())
	var got []int
	for i, ct := range []string{"text/plain;charset=UTF-8", "application/octet-stream", "application/json"} {
		got = append(got, sendTyped(t, h, fmt.Sprintf("192.0.2.%d", i+1), http.Header{"Content-Type": {ct}}, "\uFEFF\n"+`{"email":"victim","password":"p`+fmt.Sprint(i)+`"}`))
	}
	if want := []int{200, 200, 429}; !slices.Equal(got, want) {
		t.Errorf("victim as text/plain, octet-stream and JSON from three addresses: %v, want %v", got, want)
	}
}

// A body of another type that opens no JSON object has no JSON field,
// however long: the rule falls back to the client's address, as before.
// One that opens an object, or whose first MaxKeyBody bytes are
// whitespace, but is not read whole (malformed after its '{', longer than
// MaxKeyBody) may hold the field a Go decoder reads, as an untyped one
// may: such requests are counted together, whatever the fallback.
func TestABodyOfAnotherTypeThatIsNoJSONKeepsTheFallback(t *testing.T) {
	mw, _ := rulesMiddleware(t, bodyKeyRule("json:email", httplimit.FallbackIP, 1))
	h := mw.Handler(echoBody())
	plain := http.Header{"Content-Type": {"text/plain"}}
	long := strings.Repeat("x", httplimit.MaxKeyBody)
	for i, body := range []string{"email=victim", `["victim"]`, "hello", "", " \n email=victim&pad=" + long} {
		for j := range 2 {
			if code := sendTyped(t, h, fmt.Sprintf("198.51.100.%d", 10*i+j+1), plain, body); code != 200 {
				t.Errorf("%q as text/plain from an address of its own: %d, want 200 (no field: the address's count)", body, code)
			}
		}
	}
	got := []int{
		sendTyped(t, h, "192.0.2.1", plain, `{"email":"victim",`),
		sendTyped(t, h, "192.0.2.2", plain, `{"email":"victim","pad":"`+long+`"}`),
		sendTyped(t, h, "192.0.2.3", plain, strings.Repeat(" ", httplimit.MaxKeyBody+1)+`{"email":"victim"}`),
	}
	if want := []int{200, 429, 429}; !slices.Equal(got, want) {
		t.Errorf("text/plain bodies opening an object, not read whole, from two addresses: %v, want %v", got, want)
	}
}

// A form body that opens a JSON object is read both ways, as an untyped
// POST is: a Go handler decoding r.Body reads its object, Rack, Go's
// r.FormValue and PHP its pairs. A value one reading gives is the
// field's, for form: and json: keys alike ({"email":"victim"} as a form
// is victim's attempt, as email=victim or a JSON body of victim is);
// readings that differ
// ({"email":"decoy7","pad":"&email=victim&"}) are counted together, from
// any address, so that a decoy that changes with every guess gives none
// a count of its own.
func TestAFormBodyOpeningAnObjectIsReadBothWays(t *testing.T) {
	form := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}
	for _, c := range []struct{ key, contentType, body string }{
		{"form:email", "application/x-www-form-urlencoded", "email=victim&password=p3"},
		{"json:email", "application/json", `{"email":"victim","password":"p3"}`},
	} {
		key := c.key
		mw, _ := rulesMiddleware(t, bodyKeyRule(key, httplimit.FallbackIP, 2))
		h := mw.Handler(echoBody())
		got := []int{
			sendTyped(t, h, "192.0.2.1", form, `{"email":"victim","password":"p1"}`),
			sendTyped(t, h, "192.0.2.2", form, `{"email":"Victim","pad":"&email=victim&password=p2&"}`),
			sendTyped(t, h, "192.0.2.3", http.Header{"Content-Type": {c.contentType}}, c.body),
		}
		if want := []int{200, 200, 429}; !slices.Equal(got, want) {
			t.Errorf("%s: victim as a form's object, in both its readings, as %s: %v, want %v", key, c.contentType, got, want)
		}
		got = got[:0]
		for i := range 5 {
			body := fmt.Sprintf(`{"email":"decoy%d","pad":"&email=victim&password=guess%d&"}`, i, i)
			got = append(got, sendTyped(t, h, fmt.Sprintf("198.51.100.%d", i+1), form, body))
		}
		if want := []int{200, 200, 429, 429, 429}; !slices.Equal(got, want) {
			t.Errorf("%s: five guesses at victim as a form, each under a new decoy: %v, want %v", key, got, want)
		}
	}
}
