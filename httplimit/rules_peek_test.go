package httplimit_test

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// signInRule returns a middleware on store whose sign-in rule (POST
// /v1/login, cost: 1, as examples/rules.yaml's) admits perHour attempts an
// hour per account, from the username the form posts.
func signInRule(t *testing.T, store sluice.Store, perHour int64) *httplimit.Middleware {
	t.Helper()
	one := int64(1)
	mw, err := httplimit.New(sluice.NewLimiter(store), httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(100, time.Minute).Named("per-minute")}}},
		Rules: []httplimit.Rule{{
			Name:    "logins",
			Methods: []string{"POST"},
			Paths:   []string{"/v1/login"},
			Key:     []string{"form:username"},
			Cost:    &one,
			Limits:  []sluice.Limit{sluice.FixedWindow(perHour, time.Hour).Named("per-hour")},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return mw
}

// A decision of cost 0 is a peek ("0 peeks" in docs/api.md; "0 is a peek
// that spends nothing" of client.CheckRequest.Cost): it spends nothing of
// any limit, a rule's with a cost of its own included, so that asking
// after a client's standing never uses up what its real requests need.
func TestAPeekSpendsNothingOfARuleWithItsOwnCost(t *testing.T) {
	store := memory.New()
	defer store.Close()
	mw := signInRule(t, store, 2)
	ctx := context.Background()
	who := httplimit.Requester{User: "alice", IP: netip.MustParseAddr("192.0.2.7")}
	for i := 0; i < 3; i++ {
		res, err := mw.DecideFor(ctx, who, "POST", "/v1/login", 0)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Decision.Allowed {
			t.Errorf("peek %d is refused by %v: a peek spends nothing, and nothing refuses it", i+1, res.Decision.Violated)
		}
		for j, c := range res.Checks {
			if c.Cost != 0 {
				t.Errorf("peek %d: check %d (%s) costs %d, want 0", i+1, j, c.Limit.Name(), c.Cost)
			}
		}
		mw.Done(ctx, res)
	}
	for i := 0; i < 2; i++ {
		res, err := mw.DecideFor(ctx, who, "POST", "/v1/login", -1)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Decision.Allowed {
			t.Errorf("after three peeks, alice's sign-in attempt %d of 2 is refused by %v: the peeks spent the rule's quota", i+1, res.Decision.Violated)
		}
		mw.Done(ctx, res)
	}
}

// A cost other than 0 overrides the endpoint's cost, not a rule's own:
// the rule is charged its cost: 1 per attempt whatever the caller says a
// request costs, as the proxy charges it whatever the plan's costs say
// (docs/api.md, DecideFor).
func TestACallersCostLeavesARulesOwnCost(t *testing.T) {
	store := memory.New()
	defer store.Close()
	mw := signInRule(t, store, 2)
	ctx := context.Background()
	who := httplimit.Requester{User: "alice", IP: netip.MustParseAddr("192.0.2.7")}
	res, err := mw.DecideFor(ctx, who, "POST", "/v1/login", 5)
	if err != nil {
		t.Fatal(err)
	}
	defer mw.Done(ctx, res)
	if !res.Decision.Allowed {
		t.Fatalf("refused by %v", res.Decision.Violated)
	}
	for _, c := range res.Checks {
		want := int64(5)
		if c.Limit.Name() == "logins.per-hour" {
			want = 1
		}
		if c.Cost != want {
			t.Errorf("%s costs %d, want %d", c.Limit.Name(), c.Cost, want)
		}
	}
}
