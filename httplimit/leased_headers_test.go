package httplimit_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// A token bucket leased from Redis (lease: auto) admits at most its shared
// burst at once, B less its hold-back (a quarter: 75 of 100), and refuses
// the rest (docs/decisions.md, Leased quota). Its RateLimit-Policy states
// that burst, q=75;w=75 (the 75 refill in 75 s), as does its refusal's
// problem: q is the most a client can have at once, and a client that
// spends q at once every w seconds is never refused (internal/quota). A
// limit that StoreLeased says the store does not lease states its own
// burst.
func TestALeasedBucketStatesItsSharedBurst(t *testing.T) {
	o := httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{
			sluice.TokenBucket(100, 100*time.Second).Named("bucket"),
			sluice.TokenBucket(1000, 100*time.Second).Named("unleased"),
		}}},
		StoreLeases: true,
		StoreLeased: func(id string) bool { return id != "unleased" },
	}
	mws, _, _, _ := leasedMiddlewares(t, o)
	h := mws[0].Handler(okHandler())
	a := req{remote: "192.0.2.1:1"}
	first := do(h, a)
	if first.Code != 200 {
		t.Fatalf("first request: %d %s", first.Code, first.Body.String())
	}
	want := `"bucket";q=75;w=75, "unleased";q=1000;w=100`
	if got := first.Header().Get("RateLimit-Policy"); got != want {
		t.Errorf("RateLimit-Policy %q, want %q", got, want)
	}
	admitted := 1
	var refused *httplimit.Problem
	for range 200 {
		if w := do(h, a); w.Code == 200 {
			admitted++
		} else if refused == nil {
			p := decodeProblem(t, w.Body.String())
			refused = &p
		}
	}
	if admitted != 75 {
		t.Errorf("admitted %d of 201 requests sent at once from full, want the shared burst, 75", admitted)
	}
	if refused == nil || refused.Limit != 75 || !strings.Contains(refused.Detail, "at most 75 at once") {
		t.Errorf("refusal %+v, want limit 75 and a detail of at most 75 at once", refused)
	}
}
