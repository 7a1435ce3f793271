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

// loginAttempts sends five POSTs to target, the i-th with body(i) as
// contentType from its own address, through a rule keyed by key that
// allows 3 a minute, and returns their statuses.
func loginAttempts(t *testing.T, key, contentType, target string, body func(i int) string) []int {
	t.Helper()
	mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "logins", Methods: []string{"POST"}, Paths: []string{"/login"},
		Key: []string{key}, Limits: []sluice.Limit{sluice.FixedWindow(3, time.Minute)}})
	h := mw.Handler(echoBody())
	var got []int
	for i := range 5 {
		r := httptest.NewRequest("POST", target, strings.NewReader(body(i)))
		r.RemoteAddr = fmt.Sprintf("192.0.2.%d:1234", i+1)
		r.Header.Set("Content-Type", contentType)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		got = append(got, w.Code)
	}
	return got
}

// A form:<name> or json:<path> key is the field an upstream acts on, and
// Go's r.FormValue, Rails' params, Laravel's input(), PHP's $_REQUEST and
// Spring's getParameter read a field from the query string too (Go and
// Rails the body first, Spring the query first; all of them the query
// when the body lacks it; a nested field as "user[email]"). Credential
// stuffing that puts the account in the query — alone, or beside a decoy
// body field that changes with every attempt — must spend the account's
// count (or, for a query and a body that disagree, the one count every
// such ambiguous request shares), never a fresh count per address: the
// promise of docs/rules.md for a field "that upstreams may read as
// different values".
func TestAFormKeyReadsTheQueryUpstreamsRead(t *testing.T) {
	const form, js = "application/x-www-form-urlencoded", "application/json"
	cases := []struct {
		name, key, contentType, target string
		body                           func(i int) string
	}{
		{"the account in the query alone", "form:username", form, "/login?username=target",
			func(i int) string { return fmt.Sprintf("password=p%d", i) }},
		{"the account in the query beside a decoy in the body", "form:username", form, "/login?username=target",
			func(i int) string { return fmt.Sprintf("username=decoy%d&password=p%d", i, i) }},
		{"the account in the body beside a decoy in the query", "form:username", form, "/login?username=decoy",
			func(i int) string { return fmt.Sprintf("username=target&password=p%d&x=%d", i, i) }},
		{"the account in the query and in the body alike", "form:username", form, "/login?username=Target",
			func(i int) string { return fmt.Sprintf("username=target&password=p%d", i) }},
		{"the account in the query of a request without a form body", "form:username", "text/plain", "/login?username=target",
			func(i int) string { return fmt.Sprintf("p%d", i) }},
		{"the account in the query under another casing", "form:username", form, "/login?UserName=target",
			func(i int) string { return fmt.Sprintf("password=p%d", i) }},
		{"a JSON body without the member, the account in the query", "json:username", js, "/login?username=target",
			func(i int) string { return fmt.Sprintf(`{"password":"p%d"}`, i) }},
		{"a JSON body with a decoy, the account in the query", "json:username", js, "/login?username=target",
			func(i int) string { return fmt.Sprintf(`{"username":"decoy%d"}`, i) }},
		{"a nested JSON member, the account in the query as Rails nests it", "json:user.email", js, "/login?user[email]=target",
			func(i int) string { return fmt.Sprintf(`{"user":{"password":"p%d"}}`, i) }},
	}
	for _, c := range cases {
		if got, want := loginAttempts(t, c.key, c.contentType, c.target, c.body), []int{200, 200, 200, 429, 429}; !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", c.name, got, want)
		}
	}
}

// The query a form: key reads is the one a Go upstream reads: with the
// account only in the query, r.FormValue gives the handler that account,
// the one the rule counted.
func TestAFormKeyCountsTheAccountAGoUpstreamReads(t *testing.T) {
	mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "logins", Methods: []string{"POST"}, Paths: []string{"/login"},
		Key: []string{"form:username"}, Fallback: httplimit.FallbackSkip, Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}})
	var seen []string
	h := mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.FormValue("username"))
	}))
	var got []int
	for i, target := range []string{"/login?username=alice", "/login?username=alice", "/login?username=bob"} {
		r := httptest.NewRequest("POST", target, strings.NewReader("password=x"))
		r.RemoteAddr = fmt.Sprintf("192.0.2.%d:1234", i+1)
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		got = append(got, w.Code)
	}
	if want := []int{200, 429, 200}; !slices.Equal(got, want) {
		t.Errorf("alice twice, then bob, each in the query: %v, want %v", got, want)
	}
	if want := []string{"alice", "bob"}; !slices.Equal(seen, want) {
		t.Errorf("the upstream read %q, want %q", seen, want)
	}
}

// ASP.NET Core binds form fields and query parameters to a model by name
// in any case (its FormCollection is case-insensitive), as this package
// already judges JSON members and path literals for it: "USERNAME=target"
// is the account "target" there, and form:username must count it so. A
// field under two casings with values that differ is ambiguous, as a
// field given twice is: every such request of the rule counts together.
func TestAFormKeyMatchesAFieldNameInAnyCase(t *testing.T) {
	const form = "application/x-www-form-urlencoded"
	for _, c := range []struct {
		name string
		body func(i int) string
	}{
		{"the account under another casing", func(i int) string { return fmt.Sprintf("USERNAME=target&password=p%d", i) }},
		{"the account beside a decoy under another casing", func(i int) string {
			return fmt.Sprintf("Username=decoy%d&username=target&password=p%d", i, i)
		}},
	} {
		if got, want := loginAttempts(t, "form:username", form, "/login", c.body), []int{200, 200, 200, 429, 429}; !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", c.name, got, want)
		}
	}
}
