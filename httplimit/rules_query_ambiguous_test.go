package httplimit_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// A client of an API that takes its key in the query ("?api_key=") or a
// session cookie sends its own beside a decoy that changes with every
// request: "?api_key=decoy7&api_key=mine" (Django and Rails act on the
// last value, Go on the first), or "Cookie: session=decoy7; session=mine".
// Neither reading may give each request a count of its own: every such
// request of the rule is counted together.
func TestRuleKeyedByAQueryOrCookieGivenTwice(t *testing.T) {
	cases := []struct {
		name, key string
		r         func(i int) req
	}{
		{"a query parameter twice", "query:api_key", func(i int) req {
			return req{remote: fmt.Sprintf("192.0.2.%d:1", i+1), path: fmt.Sprintf("/api/search?api_key=decoy%d&api_key=mine", i)}
		}},
		{"a cookie twice", "cookie:session", func(i int) req {
			return req{remote: fmt.Sprintf("192.0.2.%d:1", i+1), header: map[string]string{"Cookie": fmt.Sprintf("session=decoy%d; session=mine", i)}}
		}},
	}
	for _, c := range cases {
		for _, fallback := range []string{httplimit.FallbackIP, httplimit.FallbackSkip} {
			mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "keys", Key: []string{c.key}, Fallback: fallback,
				Limits: []sluice.Limit{sluice.FixedWindow(3, time.Minute)}})
			var rs []req
			for i := range 5 {
				rs = append(rs, c.r(i))
			}
			if got, want := statuses(mw, rs...), []int{200, 200, 200, 429, 429}; !slices.Equal(got, want) {
				t.Errorf("%s, fallback %s: %v, want %v", c.name, fallback, got, want)
			}
		}
	}
	// One value given twice is that value.
	mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "keys", Key: []string{"query:api_key"}, Fallback: httplimit.FallbackSkip,
		Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}})
	twice := req{path: "/api/search?api_key=mine&api_key=mine"}
	if got, want := statuses(mw, twice, twice, req{path: "/api/search?api_key=other"}), []int{200, 429, 200}; !slices.Equal(got, want) {
		t.Errorf("one value twice, again, another: %v, want %v", got, want)
	}
}
