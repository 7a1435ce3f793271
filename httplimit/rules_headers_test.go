package httplimit_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/dunglas/httpsfv"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// sfNames returns the names of the items of an IETF RateLimit or
// RateLimit-Policy value, in order, as httpsfv parses them.
func sfNames(t *testing.T, values []string) []string {
	t.Helper()
	list, err := httpsfv.UnmarshalList(values)
	if err != nil {
		t.Fatalf("%q: %v", values, err)
	}
	var names []string
	for _, m := range list {
		names = append(names, m.(httpsfv.Item).Value.(string))
	}
	return names
}

// Whatever rules match, in any order of requests (each set of rules' headers
// is built once and then shared), RateLimit-Policy lists exactly the limits
// RateLimit does, in the same order: the plan's, the matched rules' in rule
// order, the global ones; a hidden limit in neither.
func TestPolicyListsTheLimitsOfEachSetOfMatchedRules(t *testing.T) {
	limit := []sluice.Limit{sluice.FixedWindow(100, time.Minute)}
	mw, _ := clockedMiddleware(t, httplimit.Options{
		Plans:  []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(50, time.Minute), sluice.GCRA(500, time.Hour)}}},
		Global: []sluice.Limit{sluice.TokenBucket(1000, time.Second).Named("everyone")},
		Rules: []httplimit.Rule{
			{Name: "a", Paths: []string{"/a/"}, Limits: limit},
			{Name: "b", Methods: []string{"POST"}, Limits: limit},
			{Name: "c", Paths: []string{"/a/c"}, Limits: []sluice.Limit{sluice.FixedWindow(5, time.Second), sluice.FixedWindow(100, time.Hour)}},
			{Name: "d", Hosts: []string{"d.example"}, Limits: limit},
		},
		HiddenLimits: []string{"d"},
	})
	h := mw.Handler(okHandler())
	for _, tc := range []struct {
		method, path, host string
		want               []string
	}{
		{"GET", "/x", "", []string{"per-minute", "per-hour", "everyone"}},
		{"GET", "/a/c", "", []string{"per-minute", "per-hour", "a.per-minute", "c.per-second", "c.per-hour", "everyone"}},
		{"POST", "/a/c", "", []string{"per-minute", "per-hour", "a.per-minute", "b.per-minute", "c.per-second", "c.per-hour", "everyone"}},
		{"POST", "/x", "d.example", []string{"per-minute", "per-hour", "b.per-minute", "everyone"}},
		{"GET", "/a/b", "d.example", []string{"per-minute", "per-hour", "a.per-minute", "everyone"}},
		{"GET", "/a/c", "", []string{"per-minute", "per-hour", "a.per-minute", "c.per-second", "c.per-hour", "everyone"}},
		{"GET", "/x", "", []string{"per-minute", "per-hour", "everyone"}},
	} {
		hr := httptest.NewRequest(tc.method, tc.path, nil)
		if tc.host != "" {
			hr.Host = tc.host
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, hr)
		if w.Code != http.StatusOK {
			t.Fatalf("%s %s %s: status %d", tc.method, tc.host, tc.path, w.Code)
		}
		policy, rate := sfNames(t, w.Header().Values("RateLimit-Policy")), sfNames(t, w.Header().Values("RateLimit"))
		if !slices.Equal(policy, tc.want) || !slices.Equal(rate, tc.want) {
			t.Errorf("%s %s %s: RateLimit-Policy %q, RateLimit %q, want both %q", tc.method, tc.host, tc.path, policy, rate, tc.want)
		}
	}
}

// An admitted request of a listed API key that two rules match (one keyed
// by the client, one by a header and the route) allocates less than once on
// average in the middleware: the policy of the plan with those rules is
// built once, the rule's store key comes from the key cache.
func TestAdmittedRequestWithRulesAllocatesLessThanOnce(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts mean nothing under the race detector (sync.Pool drops items)")
	}
	big := []sluice.Limit{sluice.FixedWindow(1_000_000_000, time.Minute)}
	o := quiet(hotPlan(t, 3))
	o.Rules = []httplimit.Rule{
		{Name: "writes", Methods: []string{"POST"}, Paths: []string{"/v1/items/{id}"}, Limits: big},
		{Name: "tenants", Paths: []string{"/v1/"}, Key: []string{"header:X-Tenant", "route"}, HeaderFrom: httplimit.HeaderFromAny, Limits: big},
	}
	store := memory.New(memory.WithSweepInterval(0))
	defer store.Close()
	mw, err := httplimit.New(sluice.NewLimiter(store), o)
	if err != nil {
		t.Fatal(err)
	}
	h := mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) }))
	r, _ := http.NewRequest("POST", "http://api.example/v1/items/42", nil)
	r.Header.Set("X-API-Key", "the-key")
	r.Header.Set("X-Tenant", "acme")
	n, w := allocsPerServe(h, r)
	if n >= 1 { // n is rounded down
		t.Errorf("%.0f allocations per admitted request, want less than 1", n)
	}
	if names := sfNames(t, w.h["Ratelimit"]); w.status != 200 || len(names) != 5 {
		t.Errorf("status %d, RateLimit names %q, want 200 and 5", w.status, names)
	}
}
