package httplimit_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// loginRule is a sign-in rule keyed by key, of one attempt a minute.
func loginRule(key string) httplimit.Rule {
	return httplimit.Rule{Name: "logins", Methods: []string{"POST"}, Paths: []string{"/login"},
		Key: []string{key}, Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}}
}

// posts sends each body as contentType from its own address through h and
// returns the statuses.
func posts(h http.Handler, contentType string, bodies ...string) []int {
	var out []int
	for i, body := range bodies {
		out = append(out, post(h, fmt.Sprintf("192.0.2.%d", i+1), contentType, body).Code)
	}
	return out
}

const formType = "application/x-www-form-urlencoded"

// A form or JSON key's value is read without the whitespace and invisible
// characters around it: Laravel's TrimStrings, Devise's
// strip_whitespace_keys and Django's forms drop them before the sign-in
// reads the username, so "alice ", " alice", "alice\t" and "alice" behind
// a zero-width space are alice's attempts there, and one count here
// (docs/rules.md, "Sign-in attempts per account"). Otherwise each
// spelling, from another address, would be a fresh per-account count. A
// field given as "alice" and as "alice " is one value, not an ambiguous
// one; a value of whitespace alone is no value.
func TestWhitespaceAroundAFormOrJSONValueIsOneAccount(t *testing.T) {
	mw, _ := rulesMiddleware(t, loginRule("form:username"))
	h := mw.Handler(echoBody())
	got := posts(h, formType, "username=alice&password=guess", "username=alice%20", "username=%20alice", "username=alice%09",
		"username=+alice+", "username=alice%E2%80%8B", "username=%C2%A0alice", "username=%EF%BB%BFalice%00",
		"username=alice&username=alice%20")
	if want := []int{200, 429, 429, 429, 429, 429, 429, 429, 429}; !slices.Equal(got, want) {
		t.Errorf("form username alice, then with spaces, a tab, a zero-width space, a no-break space, a BOM and a NUL around it, and alice beside \"alice \": %v, want %v", got, want)
	}

	mw, _ = rulesMiddleware(t, loginRule("json:user.email"))
	h = mw.Handler(echoBody())
	var bodies []string
	for _, email := range []string{"alice@example.com", "alice@example.com ", " alice@example.com", `\talice@example.com\n`} {
		bodies = append(bodies, `{"user":{"email":"`+email+`","password":"guess"}}`)
	}
	if got, want := posts(h, "application/json", bodies...), []int{200, 429, 429, 429}; !slices.Equal(got, want) {
		t.Errorf("JSON user.email alice@example.com, then with spaces, a tab and a newline around it: %v, want %v", got, want)
	}

	// Whitespace alone is no username: the rule falls back to the address.
	mw, _ = rulesMiddleware(t, loginRule("form:username"))
	h = mw.Handler(echoBody())
	if got, want := posts(h, formType, "username=%20", "username=%20%20"), []int{200, 200}; !slices.Equal(got, want) {
		t.Errorf("a username of spaces alone from two addresses: %v, want %v", got, want)
	}
}

// A JSON body that starts with a UTF-8 byte order mark is read after it,
// as Express, ASP.NET Core, Jackson and Django read it: alice's sign-in
// there, so alice's count here, not a body without the field whose rule
// falls back to the address.
func TestJSONBodyAfterAByteOrderMarkIsRead(t *testing.T) {
	mw, _ := rulesMiddleware(t, loginRule("json:email"))
	h := mw.Handler(echoBody())
	const body = `{"email":"alice@example.com","password":"guess"}`
	got := posts(h, "application/json", body, "\uFEFF"+body, "\uFEFF"+body)
	if want := []int{200, 429, 429}; !slices.Equal(got, want) {
		t.Errorf("alice's JSON sign-in, then twice with a byte order mark, from other addresses: %v, want %v", got, want)
	}
	// The upstream still receives the body as it was sent.
	if w := post(h, "192.0.2.9", "application/json", "\uFEFF"+`{"email":"bob@example.com"}`); w.Body.String() != "\uFEFF"+`{"email":"bob@example.com"}` {
		t.Errorf("upstream read %q, want the body with its byte order mark", w.Body.String())
	}
}

// A form field is also read under the name PHP gives it, as Laravel's
// input() and $_REQUEST read it: PHP turns '.' and ' ' in a name into '_',
// drops leading spaces, and turns a '[' that no ']' follows into '_', so
// "user.email", "user email", " user_email" and "user[email" are all the
// user_email field there, alice's attempt, and alice's count here. Values
// that differ under two names PHP reads as one are ambiguous, as a field
// given twice is: every such request of the rule counts together.
func TestFormFieldIsAlsoReadUnderTheNamePHPGivesIt(t *testing.T) {
	mw, _ := rulesMiddleware(t, loginRule("form:user_email"))
	h := mw.Handler(echoBody())
	var bodies []string
	for _, name := range []string{"user_email", "user.email", "user+email", "user%20email", "%20user_email", "USER.Email", "user%5Bemail"} {
		bodies = append(bodies, name+"=alice%40example.com&password=guess")
	}
	if got, want := posts(h, formType, bodies...), []int{200, 429, 429, 429, 429, 429, 429}; !slices.Equal(got, want) {
		t.Errorf("user_email, then user.email, user+email, user%%20email, %%20user_email, USER.Email and user[email (each user_email to PHP) = alice: %v, want %v", got, want)
	}

	rule := loginRule("form:user_email")
	rule.Fallback = httplimit.FallbackSkip
	rule.Limits = []sluice.Limit{sluice.FixedWindow(2, time.Minute)}
	mw, _ = rulesMiddleware(t, rule)
	h = mw.Handler(echoBody())
	bodies = bodies[:0]
	for i := range 4 {
		bodies = append(bodies, fmt.Sprintf("user_email=decoy%d&user.email=alice", i))
	}
	if got, want := posts(h, formType, bodies...), []int{200, 200, 429, 429}; !slices.Equal(got, want) {
		t.Errorf("user_email a decoy beside user.email alice, four times from four addresses: %v, want %v", got, want)
	}
}

// A query: key reads its parameter by its name in any case, as ASP.NET
// Core's Request.Query and a form: key read one, and as PHP names it: so
// ?TENANT=acme, ?Tenant=acme and ?ten.ant=acme for query:ten_ant are
// acme's requests, not ones the rule (fallback: skip) lets through. Its
// value is read without the whitespace around it, as Laravel reads the
// query: ?tenant=acme%20 is acme's too.
func TestQueryKeyReadsItsParameterInAnyCase(t *testing.T) {
	one := []sluice.Limit{sluice.FixedWindow(1, time.Minute)}
	for _, key := range []string{"query:tenant", "form:tenant"} {
		mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "tenants", Key: []string{key}, Fallback: httplimit.FallbackSkip, Limits: one})
		got := statuses(mw,
			req{path: "/api/search?tenant=acme", remote: "192.0.2.1:1"},
			req{path: "/api/search?TENANT=acme", remote: "192.0.2.2:1"},
			req{path: "/api/search?Tenant=acme", remote: "192.0.2.3:1"},
			req{path: "/api/search?tenant=acme%20", remote: "192.0.2.4:1"},
			req{path: "/api/search?tenant=+acme", remote: "192.0.2.5:1"})
		if want := []int{200, 429, 429, 429, 429}; !slices.Equal(got, want) {
			t.Errorf("key %s: ?tenant=acme, then ?TENANT=acme, ?Tenant=acme, ?tenant=acme%%20 and ?tenant=+acme: %v, want %v", key, got, want)
		}
	}
	mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "tenants", Key: []string{"query:ten_ant"}, Fallback: httplimit.FallbackSkip, Limits: one})
	got := statuses(mw, req{path: "/api/search?ten_ant=acme"}, req{path: "/api/search?ten.ant=acme"})
	if want := []int{200, 429}; !slices.Equal(got, want) {
		t.Errorf("query:ten_ant: ?ten_ant=acme, then ?ten.ant=acme (ten_ant to PHP): %v, want %v", got, want)
	}
	// Values that differ under names differing only in case are ambiguous.
	mw, _ = rulesMiddleware(t, httplimit.Rule{Name: "tenants", Key: []string{"query:tenant"}, Fallback: httplimit.FallbackSkip,
		Limits: []sluice.Limit{sluice.FixedWindow(2, time.Minute)}})
	var rs []req
	for i := range 4 {
		rs = append(rs, req{path: fmt.Sprintf("/api/search?tenant=decoy%d&TENANT=acme", i), remote: fmt.Sprintf("192.0.2.%d:1", i+1)})
	}
	if got, want := statuses(mw, rs...), []int{200, 200, 429, 429}; !slices.Equal(got, want) {
		t.Errorf("?tenant=decoy beside ?TENANT=acme, four times: %v, want %v", got, want)
	}
}

// A cookie: key reads its cookie by its name in any case, as ASP.NET
// Core's Request.Cookies finds one, and as PHP's $_COOKIE names it, and
// its value without the whitespace around it, as Django reads one:
// "TENANT=acme", "Tenant=acme" and "tenant= acme" are acme's. Cookies of
// names differing only in case with values that differ are ambiguous:
// every such request of the rule counts together.
func TestCookieKeyReadsItsCookieInAnyCase(t *testing.T) {
	mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "tenants", Key: []string{"cookie:tenant"}, Fallback: httplimit.FallbackSkip,
		Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}})
	cookie := func(i int, v string) req {
		return req{remote: fmt.Sprintf("192.0.2.%d:1", i), header: map[string]string{"Cookie": v}}
	}
	got := statuses(mw, cookie(1, "tenant=acme"), cookie(2, "TENANT=acme"), cookie(3, "Tenant=acme"),
		cookie(4, "tenant= acme"), cookie(5, `tenant="acme "`), cookie(6, "other=1; tenant=acme\t"))
	if want := []int{200, 429, 429, 429, 429, 429}; !slices.Equal(got, want) {
		t.Errorf("Cookie tenant=acme, then TENANT=acme, Tenant=acme, tenant= acme, tenant=\"acme \" and tenant=acme+tab: %v, want %v", got, want)
	}

	mw, _ = rulesMiddleware(t, httplimit.Rule{Name: "tenants", Key: []string{"cookie:tenant"}, Fallback: httplimit.FallbackSkip,
		Limits: []sluice.Limit{sluice.FixedWindow(2, time.Minute)}})
	var rs []req
	for i := range 4 {
		rs = append(rs, cookie(i+1, fmt.Sprintf("tenant=decoy%d; TENANT=acme", i)))
	}
	if got, want := statuses(mw, rs...), []int{200, 200, 429, 429}; !slices.Equal(got, want) {
		t.Errorf("Cookie tenant=decoy beside TENANT=acme, four times: %v, want %v", got, want)
	}
}

// A header: key's value is read without the whitespace around it: a value
// that reaches sluice over HTTP/2 as "acme " reaches an upstream over
// HTTP/1.1 as acme. Two values of a header that differ only so are one
// value, not an ambiguous one.
func TestHeaderKeyValueIsReadWithoutWhitespaceAround(t *testing.T) {
	mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "tenants", Key: []string{"header:X-Tenant"}, HeaderFrom: httplimit.HeaderFromAny,
		Fallback: httplimit.FallbackSkip, Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}})
	got := statuses(mw,
		req{remote: "192.0.2.1:1", header: map[string]string{"X-Tenant": "acme"}},
		req{remote: "192.0.2.2:1", header: map[string]string{"X-Tenant": "acme "}},
		req{remote: "192.0.2.3:1", header: map[string]string{"X-Tenant": "\tacme"}},
		req{remote: "192.0.2.4:1", multi: map[string][]string{"X-Tenant": {"acme", " acme"}}},
		req{remote: "192.0.2.5:1", header: map[string]string{"X-Tenant": "other"}})
	if want := []int{200, 429, 429, 429, 200}; !slices.Equal(got, want) {
		t.Errorf("X-Tenant acme, then \"acme \", tab+acme, acme beside \" acme\", and other: %v, want %v", got, want)
	}
}
