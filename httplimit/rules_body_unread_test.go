package httplimit_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// send sends body as contentType to target from addr through h, of unknown
// length (chunked) when chunked is set, and returns the answer.
func send(h http.Handler, addr, target, contentType, body string, chunked bool) *httptest.ResponseRecorder {
	r := httptest.NewRequest("POST", target, strings.NewReader(body))
	r.RemoteAddr = addr + ":1234"
	r.Header.Set("Content-Type", contentType)
	if chunked {
		r.ContentLength = -1
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// multipartPart is one field of a multipart/form-data body of boundary X.
func multipartPart(name, value string) string {
	return "--X\r\nContent-Disposition: form-data; name=\"" + name + "\"\r\n\r\n" + value + "\r\n"
}

// A body of a key's content type that sluice cannot read whole may hold
// the field the upstream reads: every such request of the rule is counted
// together, from any address and whatever the rule's fallback, as an
// ambiguous field is. Otherwise an attacker pads each guess at one account
// (a junk field past MaxKeyBody, a thousand parts, JSON nested past
// encoding/json's depth, a pair Go refuses) and each is counted by its
// address, or not at all under skip, while the upstream signs in the
// account. The upstream still receives every body whole.
func TestABodyFieldSluiceCannotReadIsCountedTogether(t *testing.T) {
	const form, js, mp = "application/x-www-form-urlencoded", "application/json", "multipart/form-data; boundary=X"
	pad := "&x=" + strings.Repeat("a", httplimit.MaxKeyBody)
	manyParts := strings.Repeat(multipartPart("x", "1"), 1000)
	deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	cases := []struct {
		name, key, target, contentType string
		chunked                        bool
		body                           func(i int) string
	}{
		{"a form padded past MaxKeyBody", "form:username", "/login", form, false,
			func(i int) string { return fmt.Sprintf("username=target&password=p%d", i) + pad }},
		{"a form of unknown length padded past MaxKeyBody", "form:username", "/login", form, true,
			func(i int) string { return fmt.Sprintf("username=target&password=p%d", i) + pad }},
		{"a JSON body padded past MaxKeyBody", "json:username", "/login", js, false,
			func(i int) string {
				return fmt.Sprintf(`{"username":"target","password":"p%d","x":"%s"}`, i, strings.Repeat("a", httplimit.MaxKeyBody))
			}},
		{"a multipart field after 1,000 parts", "form:username", "/login", mp, false,
			func(i int) string {
				return manyParts + multipartPart("username", "target") + multipartPart("password", fmt.Sprint(i)) + "--X--\r\n"
			}},
		{"a multipart body without its closing boundary", "form:username", "/login", mp, false,
			func(i int) string {
				return multipartPart("username", "target") + multipartPart("password", fmt.Sprint(i))
			}},
		{"a multipart body of a Content-Type Go does not parse (PHP finds its boundary)", "form:username", "/login", mp + "; boundary=Y", false,
			func(i int) string {
				return multipartPart("username", "target") + multipartPart("password", fmt.Sprint(i)) + "--X--\r\n"
			}},
		{"JSON nested deeper than encoding/json reads", "json:username", "/login", js, false,
			func(i int) string { return fmt.Sprintf(`{"username":"target","password":"p%d","x":%s}`, i, deep) }},
		{"malformed JSON", "json:username", "/login", js, false,
			func(i int) string { return fmt.Sprintf(`{"username":"target","password":"p%d",}`, i) }},
		{"JSON after a value, where gjson finds the field", "json:username", "/login", js, false,
			func(i int) string { return fmt.Sprintf(`%d {"username":"target"}`, i) }},
		{"the field's value does not decode", "form:username", "/login", form, false,
			func(i int) string { return fmt.Sprintf("username=target%%zz&password=p%d", i) }},
		{"the field in a query pair with a semicolon (Rack 2 splits on it)", "form:username", "/login?username=target;x", form, false,
			func(i int) string { return fmt.Sprintf("password=p%d", i) }},
	}
	for _, c := range cases {
		for _, fallback := range []string{httplimit.FallbackIP, httplimit.FallbackSkip} {
			mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "logins", Methods: []string{"POST"}, Paths: []string{"/login"},
				Key: []string{c.key}, Fallback: fallback, Limits: []sluice.Limit{sluice.FixedWindow(3, time.Minute)}})
			h := mw.Handler(echoBody())
			var got []int
			for i := range 5 {
				body := c.body(i)
				w := send(h, fmt.Sprintf("192.0.2.%d", i+1), c.target, c.contentType, body, c.chunked)
				got = append(got, w.Code)
				if w.Code == 200 && w.Body.String() != body {
					t.Errorf("%s: the upstream read %d bytes of %d", c.name, w.Body.Len(), len(body))
				}
			}
			if want := []int{200, 200, 200, 429, 429}; !slices.Equal(got, want) {
				t.Errorf("%s, fallback %s, from five addresses: %v, want %v (counted together)", c.name, fallback, got, want)
			}
		}
	}
}

// A form is read however many fields it has within MaxKeyBody (Go's
// url.ParseQuery reads none of more than 10,000; PHP reads the first
// 1,000), in the body and in the query: its field counts by its value. A
// pair Go refuses under another name leaves the field read.
func TestAFormOfManyFieldsIsCountedByItsField(t *testing.T) {
	const form = "application/x-www-form-urlencoded"
	many := strings.Repeat("&a=1", 10000)
	for _, c := range []struct {
		name   string
		target func(user string) string
		body   func(user string, i int) string
	}{
		{"10,002 fields in the body",
			func(string) string { return "/login" },
			func(user string, i int) string { return fmt.Sprintf("username=%s&password=p%d", user, i) + many }},
		{"10,001 parameters in the query",
			func(user string) string { return "/login?username=" + user + many },
			func(_ string, i int) string { return fmt.Sprintf("password=p%d", i) }},
		{"a password that does not decode",
			func(string) string { return "/login" },
			func(user string, i int) string { return fmt.Sprintf("username=%s&password=%d%%", user, i) }},
	} {
		mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "logins", Methods: []string{"POST"}, Paths: []string{"/login"},
			Key: []string{"form:username"}, Fallback: httplimit.FallbackSkip, Limits: []sluice.Limit{sluice.FixedWindow(3, time.Minute)}})
		h := mw.Handler(echoBody())
		var got []int
		for i := range 4 {
			got = append(got, send(h, fmt.Sprintf("192.0.2.%d", i+1), c.target("alice"), form, c.body("alice", i), false).Code)
		}
		got = append(got, send(h, "192.0.2.9", c.target("bob"), form, c.body("bob", 9), false).Code)
		if want := []int{200, 200, 200, 429, 200}; !slices.Equal(got, want) {
			t.Errorf("%s: alice from four addresses, then bob: %v, want %v", c.name, got, want)
		}
	}
}

// A request without a form or JSON body has no field, as one whose body
// lacks it: the rule's fallback stands for it (here skip: the rule does
// not apply), however long the body of another type.
func TestABodyOfAnotherTypeKeepsTheFallback(t *testing.T) {
	long := "username=target&x=" + strings.Repeat("a", httplimit.MaxKeyBody)
	for _, c := range []struct{ name, key, contentType, body string }{
		{"no body", "form:username", "application/x-www-form-urlencoded", ""},
		{"a long text/plain body", "form:username", "text/plain", long},
		{"a long text/plain body for a JSON key", "json:username", "text/plain", long},
		{"an empty JSON body", "json:username", "application/json", ""},
		{"a JSON body of whitespace", "json:username", "application/json", " \r\n"},
		{"a multipart body without a boundary", "form:username", "multipart/form-data", multipartPart("username", "target")},
		{"a form without the field", "form:username", "application/x-www-form-urlencoded", "user=target&password=x"},
	} {
		mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "logins", Methods: []string{"POST"}, Paths: []string{"/login"},
			Key: []string{c.key}, Fallback: httplimit.FallbackSkip, Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}})
		h := mw.Handler(echoBody())
		for i := range 3 {
			if w := send(h, "192.0.2.1", "/login", c.contentType, c.body, false); w.Code != 200 || w.Body.String() != c.body {
				t.Errorf("%s, request %d: %d, the upstream read %d bytes of %d (want 200: skipped)", c.name, i+1, w.Code, w.Body.Len(), len(c.body))
			}
		}
	}
}

// A form or JSON body's field is read whatever follows its Content-Type's
// media type, as upstreams read it: Go's ParseForm a form whose
// parameters do not parse, PHP and Rack a type cut at a ';', ',' or
// space, Laravel JSON of any Content-Type holding "/json". Its value
// counts, from any address.
func TestABodyFieldIsReadWhateverFollowsItsMediaType(t *testing.T) {
	for _, c := range []struct{ key, contentType, format string }{
		{"form:username", "application/x-www-form-urlencoded; charset", "username=%s&password=p%d"},
		{"form:username", "application/x-www-form-urlencoded,text/plain", "username=%s&password=p%d"},
		{"form:username", "Application/X-WWW-Form-Urlencoded junk", "username=%s&password=p%d"},
		{"json:username", "application/json; charset=utf-8; x", `{"username":"%s","password":"p%d"}`},
		{"json:username", "text/plain; profile=/json", `{"username":"%s","password":"p%d"}`}, // Laravel's isJson()
	} {
		mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "logins", Methods: []string{"POST"}, Paths: []string{"/login"},
			Key: []string{c.key}, Fallback: httplimit.FallbackSkip, Limits: []sluice.Limit{sluice.FixedWindow(3, time.Minute)}})
		h := mw.Handler(echoBody())
		var got []int
		for i := range 4 {
			got = append(got, send(h, fmt.Sprintf("192.0.2.%d", i+1), "/login", c.contentType, fmt.Sprintf(c.format, "alice", i), false).Code)
		}
		got = append(got, send(h, "192.0.2.9", "/login", c.contentType, fmt.Sprintf(c.format, "bob", 9), false).Code)
		if want := []int{200, 200, 200, 429, 200}; !slices.Equal(got, want) {
			t.Errorf("%s as %q: alice from four addresses, then bob: %v, want %v", c.key, c.contentType, got, want)
		}
	}
}
