package httplimit_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// An attacker guessing one account's password sends the account's name
// beside a decoy that changes with every attempt: a form field given
// twice ("username=decoy7&username=target", of which Django, Rails and
// PHP read the last and Go the first) or a JSON member under two casings
// ({"username":"decoy7","USERNAME":"target"}, of which a Go struct reads
// the last). Neither reading may give each attempt a count of its own:
// every such request of the rule is counted together, from any address,
// whatever the rule's fallback (skip would let them all through).
func TestRuleKeyedByABodyFieldGivenTwice(t *testing.T) {
	const form, js = "application/x-www-form-urlencoded", "application/json"
	cases := []struct {
		name, key, contentType string
		body                   func(i int) string
	}{
		{"a form field twice", "form:username", form, func(i int) string { return fmt.Sprintf("username=decoy%d&username=target&password=p%d", i, i) }},
		{"the target first", "form:username", form, func(i int) string { return fmt.Sprintf("username=target&username=decoy%d&password=p%d", i, i) }},
		{"a JSON member in two casings", "json:username", js, func(i int) string { return fmt.Sprintf(`{"username":"decoy%d","USERNAME":"target"}`, i) }},
		{"a nested JSON member in two casings", "json:user.name", js, func(i int) string { return fmt.Sprintf(`{"user":{"name":"decoy%d"},"User":{"name":"target"}}`, i) }},
	}
	for _, c := range cases {
		for _, fallback := range []string{httplimit.FallbackIP, httplimit.FallbackSkip} {
			mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "logins", Methods: []string{"POST"}, Paths: []string{"/login"},
				Key: []string{c.key}, Fallback: fallback, Limits: []sluice.Limit{sluice.FixedWindow(3, time.Minute)}})
			h := mw.Handler(echoBody())
			var got []int
			for i := range 5 {
				got = append(got, post(h, fmt.Sprintf("192.0.2.%d", i+1), c.contentType, c.body(i)).Code)
			}
			if want := []int{200, 200, 200, 429, 429}; !slices.Equal(got, want) {
				t.Errorf("%s, fallback %s: %v, want %v", c.name, fallback, got, want)
			}
		}
	}
}

// A field a client sends twice with one value, or a JSON member under
// another casing alone ({"Username": …}, which a Go struct reads as
// username), is that value.
func TestRuleKeyedByABodyFieldOnceOver(t *testing.T) {
	const form, js = "application/x-www-form-urlencoded", "application/json"
	for _, c := range []struct{ key, contentType, a, b string }{
		{"form:username", form, "username=alice&username=Alice", "username=bob"},
		{"json:username", js, `{"Username":"alice"}`, `{"username":"bob"}`},
	} {
		mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "logins", Methods: []string{"POST"}, Paths: []string{"/login"},
			Key: []string{c.key}, Fallback: httplimit.FallbackSkip, Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}})
		h := mw.Handler(echoBody())
		got := []int{post(h, "192.0.2.1", c.contentType, c.a).Code, post(h, "192.0.2.2", c.contentType, c.a).Code,
			post(h, "192.0.2.3", c.contentType, c.b).Code}
		if want := []int{200, 429, 200}; !slices.Equal(got, want) {
			t.Errorf("%s: %q twice, then %q: %v, want %v", c.key, c.a, c.b, got, want)
		}
	}
}
