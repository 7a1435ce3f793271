package httplimit_test

import (
	"crypto/sha256"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// TestRuleScopedToPlansAppliesToTheirClientsOnly: one route limited 2 a
// minute on the free plan and 4 on pro, by two rules each scoped to its
// plan; a pro key with a raised limit of its own (a plan of the same name)
// is pro's; anonymous clients (the free plan) are free's.
func TestRuleScopedToPlansAppliesToTheirClientsOnly(t *testing.T) {
	free := &httplimit.Plan{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(100, time.Minute)}}
	pro := &httplimit.Plan{Name: "pro", Limits: []sluice.Limit{sluice.FixedWindow(1000, time.Minute)}}
	raised := &httplimit.Plan{Name: "pro", Limits: []sluice.Limit{sluice.FixedWindow(5000, time.Minute)}}
	search := func(name string, n int64, plans ...string) httplimit.Rule {
		return httplimit.Rule{Name: name, Plans: plans, Paths: []string{"/api/search"},
			Limits: []sluice.Limit{sluice.FixedWindow(n, time.Minute)}}
	}
	mw, _ := clockedMiddleware(t, httplimit.Options{
		Plans: []*httplimit.Plan{free, pro}, DefaultPlan: "free", AnonymousPlan: "free",
		Keys: []httplimit.Key{
			{Name: "f", SHA256: sha256.Sum256([]byte("free-key")), Plan: free},
			{Name: "p", SHA256: sha256.Sum256([]byte("pro-key")), Plan: pro},
			{Name: "r", SHA256: sha256.Sum256([]byte("raised-key")), Plan: raised},
		},
		Rules: []httplimit.Rule{search("search-free", 2, "free"), search("search-pro", 4, "pro"), search("search-all", 1000)},
	})
	h := mw.Handler(okHandler())
	keyed := func(key string) req { return req{header: map[string]string{"X-API-Key": key}} }
	for _, c := range []struct {
		who  string
		r    req
		ok   int
		rule string
	}{
		{"a free key", keyed("free-key"), 2, "search-free"},
		{"a pro key", keyed("pro-key"), 4, "search-pro"},
		{"a pro key with a limit of its own", keyed("raised-key"), 4, "search-pro"},
		{"an anonymous client", req{remote: "192.0.2.7:1"}, 2, "search-free"},
	} {
		for i := range c.ok {
			w := do(h, c.r)
			policy := w.Header().Get("RateLimit-Policy")
			if w.Code != 200 || !strings.Contains(policy, `"`+c.rule+`.per-minute"`) || !strings.Contains(policy, `"search-all.per-minute"`) {
				t.Fatalf("%s, request %d: %d, RateLimit-Policy %q, want 200 with %s's and search-all's limits", c.who, i+1, w.Code, policy, c.rule)
			}
			for _, other := range []string{"search-free", "search-pro"} {
				if other != c.rule && strings.Contains(policy, other) {
					t.Fatalf("%s: RateLimit-Policy %q names %s, a rule of another plan", c.who, policy, other)
				}
			}
		}
		w := do(h, c.r)
		body := decodeProblem(t, w.Body.String())
		if w.Code != 429 || !slices.Equal(body.ViolatedPolicies, []string{c.rule + ".per-minute"}) {
			t.Errorf("%s, request %d: %d %v, want 429 by %s.per-minute", c.who, c.ok+1, w.Code, body.ViolatedPolicies, c.rule)
		}
	}
	if w := do(h, req{path: "/api/other", header: map[string]string{"X-API-Key": "free-key"}}); w.Code != 200 {
		t.Errorf("another route of a refused free client: %d, want 200", w.Code)
	}
	subject, err := mw.Subject("name:f")
	if err != nil {
		t.Fatal(err)
	}
	states, err := mw.Inspect(t.Context(), subject, "")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range states {
		names = append(names, s.Name+"="+strconv.FormatInt(s.Used, 10))
	}
	if want := []string{"per-minute=3", "search-free.per-minute=2", "search-all.per-minute=2"}; !slices.Equal(names, want) {
		t.Errorf("inspecting the free key: %v, want %v (not the pro plan's rule)", names, want)
	}
}

func TestRulePlansMustBePlans(t *testing.T) {
	free := &httplimit.Plan{Name: "free", Limits: []sluice.Limit{sluice.PerMinute(50)}}
	own := &httplimit.Plan{Name: "partner", Limits: []sluice.Limit{sluice.PerMinute(500)}}
	rule := func(plans ...string) httplimit.Rule {
		return httplimit.Rule{Name: "r", Plans: plans, Limits: []sluice.Limit{sluice.PerMinute(5)}}
	}
	o := httplimit.Options{Plans: []*httplimit.Plan{free}, Keys: []httplimit.Key{{Name: "k", Plan: own}}}
	for _, c := range []struct {
		plans []string
		want  string
	}{
		{[]string{"gold"}, `Options.Rules[0].Plans[0]: "gold" is not a plan (free, partner)`},
		{[]string{"free", "free"}, `Options.Rules[0].Plans[1]: "free" twice`},
	} {
		o.Rules = []httplimit.Rule{rule(c.plans...)}
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("plans %q: %v, want %q", c.plans, err, c.want)
		}
	}
	o.Rules = []httplimit.Rule{rule("free", "partner")}
	if err := o.Validate(); err != nil {
		t.Errorf("plans free and a key's own plan: %v", err)
	}
}
