package server_test

import (
	"net/http"
	"strings"
	"testing"
)

// An upstream that sends rate limit fields of its own (an API with its own
// limiter, as many have) does not leave the client two values of a
// singleton field: RateLimit-Remaining and X-RateLimit-Remaining are one
// integer each (not lists, RFC 9110 §5.3), RateLimit one list of sluice's
// policies, and a client that joins two ("2, 999") cannot parse them, or
// takes the upstream's 999 for what sluice lets it spend. sluice's value is
// the only one, as Kong's plugins set theirs over the upstream's; the
// upstream's other fields, Retry-After included, pass on.
func TestUpstreamRateLimitFieldsDoNotGarbleSluices(t *testing.T) {
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("RateLimit", `"upstream";r=999;t=7777`)
		h.Set("RateLimit-Policy", `"upstream";q=1000;w=60`)
		h.Set("RateLimit-Remaining", "999")
		h.Set("RateLimit-Limit", "1000")
		h.Set("RateLimit-Reset", "7777")
		h.Set("X-RateLimit-Remaining", "999")
		h.Set("X-RateLimit-Limit", "1000")
		h.Set("X-RateLimit-Reset", "7777")
		h.Set("Retry-After", "120")
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	for _, tc := range []struct {
		name, headers string
		fields        []string
	}{
		{"draft-6 and legacy fields", "[draft-6, legacy]",
			[]string{"RateLimit-Remaining", "RateLimit-Limit", "RateLimit-Reset", "RateLimit-Policy", "X-RateLimit-Remaining", "X-RateLimit-Limit", "X-RateLimit-Reset"}},
		{"IETF fields", "[ietf]", []string{"RateLimit", "RateLimit-Policy"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixtureOn(t, `
plans:
  anonymous:
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 3, window: 1m}]
anonymous_plan: anonymous
response:
  headers: `+tc.headers+"\n", upstream)
			resp, err := http.Get(f.http.URL + "/x")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			for _, name := range tc.fields {
				if v := resp.Header.Values(name); len(v) != 1 || strings.Contains(v[0], "upstream") || v[0] == "999" || v[0] == "1000" || v[0] == "7777" {
					t.Errorf("%s: %q, want sluice's value alone", name, v)
				}
			}
			if v := resp.Header.Values("Retry-After"); len(v) != 1 || v[0] != "120" {
				t.Errorf("the upstream's Retry-After: %q, want it passed on", v)
			}
		})
	}
}
