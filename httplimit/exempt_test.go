package httplimit_test

import (
	"crypto/sha256"
	"maps"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// TestExemptClientsAreNeverLimitedNorCounted: requests exempt by address,
// key, user or plan pass without headers however many there are, spend nothing
// of anyone's quota (the global limit's included), and are reported to
// OnExempt with their reason.
func TestExemptClientsAreNeverLimitedNorCounted(t *testing.T) {
	plan := &httplimit.Plan{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(2, time.Minute)}}
	internal := &httplimit.Plan{Name: "internal", Limits: []sluice.Limit{sluice.FixedWindow(2, time.Minute)}}
	reasons := map[string]int{}
	mw, _ := clockedMiddleware(t, httplimit.Options{
		Plans:  []*httplimit.Plan{plan, internal},
		Global: []sluice.Limit{sluice.FixedWindow(3, time.Minute).Named("everyone")},
		Keys: []httplimit.Key{{Name: "monitoring", SHA256: sha256.Sum256([]byte("mon-key"))}, {Name: "other", SHA256: sha256.Sum256([]byte("other-key"))},
			{Name: "batch", SHA256: sha256.Sum256([]byte("batch-key")), Plan: internal}},
		ExemptPlans:     []string{"internal"},
		UserHeader:      "X-User",
		TrustedProxies:  []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
		ExemptAddresses: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")},
		ExemptKeys:      []string{"monitoring"},
		ExemptUsers:     []string{"ops-bot"},
		OnExempt:        func(_ *http.Request, reason string) { reasons[reason]++ },
	})
	h := mw.Handler(okHandler())
	exempt := []req{
		{remote: "192.0.2.9:1"},
		{remote: "10.0.0.1:1", header: map[string]string{"X-Forwarded-For": "192.0.2.200"}},
		{remote: "198.51.100.1:1", header: map[string]string{"X-API-Key": "mon-key"}},
		{remote: "10.0.0.1:1", header: map[string]string{"X-User": "ops-bot", "X-Forwarded-For": "198.51.100.7"}},
		{remote: "198.51.100.2:1", header: map[string]string{"X-API-Key": "batch-key"}},
	}
	for range 5 {
		for i, r := range exempt {
			w := do(h, r)
			if w.Code != 200 || w.Header().Get("RateLimit") != "" {
				t.Fatalf("exempt request %d: %d, RateLimit %q", i, w.Code, w.Header().Get("RateLimit"))
			}
		}
	}
	if want := map[string]int{"address": 10, "key": 5, "user": 5, "plan": 5}; !maps.Equal(reasons, want) {
		t.Errorf("OnExempt reasons %v, want %v", reasons, want)
	}
	// Nothing was spent: a client's first request sees its quota whole,
	// the global one too.
	w := do(h, req{remote: "198.51.100.1:1", header: map[string]string{"X-API-Key": "other-key"}})
	if got, want := w.Header().Get("RateLimit"), `"per-minute";r=1;t=60, "everyone";r=2;t=60`; got != want {
		t.Errorf("first counted request: RateLimit %q, want %q", got, want)
	}
	// A user named like the exempt one, from an untrusted peer, is not it.
	for range 2 {
		do(h, req{remote: "198.51.100.9:1", header: map[string]string{"X-User": "ops-bot"}})
	}
	if w := do(h, req{remote: "198.51.100.9:1", header: map[string]string{"X-User": "ops-bot"}}); w.Code != 429 {
		t.Errorf("ops-bot claimed by an untrusted peer: %d, want 429", w.Code)
	}
}

func TestExemptionsValidate(t *testing.T) {
	plans := []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.PerMinute(5)}}}
	err := httplimit.Options{Plans: plans, ExemptKeys: []string{"nope"}, ExemptUsers: []string{"bot"},
		ExemptAddresses: []netip.Prefix{{}}, ExemptPlans: []string{"gold"}}.Validate()
	for _, want := range []string{`Options.ExemptAddresses[0]: invalid Prefix is not an IP address`, `Options.ExemptKeys[0]: "nope" is not the name of a key`,
		"Options.ExemptUsers[0]: no UserHeader (identity.user_header) to read users from", `Options.ExemptPlans[0]: "gold" is not a plan (free)`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want %q", err, want)
		}
	}
}

func TestHiddenLimitsValidate(t *testing.T) {
	plans := []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.PerMinute(5)}}}
	rules := []httplimit.Rule{{Name: "r", Limits: []sluice.Limit{sluice.PerSecond(1)}}}
	if err := (httplimit.Options{Plans: plans, Rules: rules, HiddenLimits: []string{"per-minute", "r", "r.per-second"}}).Validate(); err != nil {
		t.Errorf("known names: %v", err)
	}
	err := httplimit.Options{Plans: plans, Rules: rules, HiddenLimits: []string{"per-second"}}.Validate()
	if want := `Options.HiddenLimits[0]: "per-second" is neither a limit nor a rule`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want %s", err, want)
	}
}
