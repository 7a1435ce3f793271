package httplimit_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// RequestHeaders names every header the middleware reads, once each, in
// canonical form; by default, the API key headers, X-Forwarded-For, and
// Content-Type, Content-Encoding and Grpc-Timeout, which Handler reads of
// every gRPC call and a body key reads.
func TestRequestHeadersNameWhatTheMiddlewareReads(t *testing.T) {
	st := memory.New()
	t.Cleanup(func() { st.Close() })
	one := []sluice.Limit{sluice.PerMinute(1)}
	plans := []*httplimit.Plan{{Name: "free", Limits: one}}
	for _, c := range []struct {
		name string
		o    httplimit.Options
		want []string
	}{
		{"defaults", httplimit.Options{Plans: plans}, []string{"Authorization", "X-Api-Key", "X-Forwarded-For", "Content-Type", "Content-Encoding", "Grpc-Timeout"}},
		{"everything", httplimit.Options{Plans: plans, APIKeyHeaders: []string{"x-key"}, Tokens: &fakeTokens{},
			TokenHeaders: []string{"authorization", "x-id-token"}, UserHeader: "x-user", PlanHeader: "x-plan",
			ForwardedHeader: "Forwarded",
			Rules: []httplimit.Rule{
				{Name: "a", Headers: []httplimit.HeaderMatch{{Name: "x-beta"}, {Name: "X-User"}}, Key: []string{"header:x-tenant", "cookie:session"},
					HeaderFrom: httplimit.HeaderFromAny, Limits: one},
				{Name: "b", Key: []string{"host", "ip"}, Limits: one,
					Except: []httplimit.Match{{Headers: []httplimit.HeaderMatch{{Name: "x-internal-probe", Value: "1"}}}}},
			}},
			[]string{"X-Key", "Authorization", "X-Id-Token", "X-User", "X-Plan", "Forwarded", "X-Beta", "X-Tenant", "Cookie", "X-Internal-Probe",
				"Content-Type", "Content-Encoding", "Grpc-Timeout"}},
	} {
		m, err := httplimit.New(sluice.NewLimiter(st), c.o)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := m.RequestHeaders(); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// ResponseHeaders names the RateLimit fields of the modes, once each, and
// Retry-After.
func TestResponseHeadersNameTheFieldsOfTheModes(t *testing.T) {
	st := memory.New()
	t.Cleanup(func() { st.Close() })
	plans := []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.PerMinute(1)}}}
	for modes, want := range map[string][]string{
		"":               {"RateLimit", "RateLimit-Policy", "Retry-After"},
		"ietf draft-7":   {"RateLimit", "RateLimit-Policy", "Retry-After"},
		"draft-6 legacy": {"RateLimit-Limit", "RateLimit-Policy", "RateLimit-Remaining", "RateLimit-Reset", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After"},
		"legacy":         {"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After"},
	} {
		m, err := httplimit.New(sluice.NewLimiter(st), httplimit.Options{Plans: plans, Headers: strings.Fields(modes)})
		if err != nil {
			t.Fatalf("%q: %v", modes, err)
		}
		if got := m.ResponseHeaders(); !slices.Equal(got, want) {
			t.Errorf("%q: %q, want %q", modes, got, want)
		}
	}
}
