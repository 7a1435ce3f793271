package httplimit_test

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// unknownKeysPlans are a default plan of 100 a minute and an anonymous one
// of 5.
func unknownKeysPlans() []*httplimit.Plan {
	return []*httplimit.Plan{
		{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(100, time.Minute)}},
		{Name: "anonymous", Limits: []sluice.Limit{sluice.FixedWindow(5, time.Minute)}},
	}
}

// With no keys listed and UnknownKeys left empty, a client that sends a
// made-up API key with each request is its address, on AnonymousPlan: 20
// requests from one address, each with a key of its own, spend that
// address's 5 a minute, in X-API-Key as in Authorization. UnknownKeys "key"
// makes each key a client of its own, on DefaultPlan.
func TestMadeUpKeysWithNoKeysListedAreTheirAddress(t *testing.T) {
	for _, c := range []struct {
		unknown, header string
		want            int
		kind            string
		plan            string
	}{
		{"", "X-API-Key", 5, httplimit.KindIP, "anonymous"},
		{"", "Authorization", 5, httplimit.KindIP, "anonymous"},
		{"key", "X-API-Key", 20, httplimit.KindAPIKey, "free"},
	} {
		mw, _ := clockedMiddleware(t, httplimit.Options{Plans: unknownKeysPlans(), AnonymousPlan: "anonymous", UnknownKeys: c.unknown})
		h := mw.Handler(okHandler())
		header := func(i int) map[string]string {
			key := fmt.Sprintf("made-up-%d", i)
			if c.header == "Authorization" {
				key = "Bearer " + key
			}
			return map[string]string{c.header: key}
		}
		passed := 0
		for i := range 20 {
			if w := do(h, req{remote: "192.0.2.7:1", header: header(i)}); w.Code == 200 {
				passed++
			}
		}
		if passed != c.want {
			t.Errorf("UnknownKeys %q, 20 made-up keys in %s from one address, 5 a minute for the address: %d passed, want %d", c.unknown, c.header, passed, c.want)
		}
		id := identityOf(t, mw, "192.0.2.7:1", header(20))
		if id.Kind != c.kind || id.Plan == nil || id.Plan.Name != c.plan {
			t.Errorf("UnknownKeys %q: a made-up key is %s %q on %v, want %s on %s", c.unknown, id.Kind, id.Subject, id.Plan, c.kind, c.plan)
		}
	}
}

// The decision API counts a made-up key as the proxy does when the caller
// gives the client's address: with no keys listed and UnknownKeys left
// empty, 20 made-up keys with one ip spend that address's 5. Without an
// address the caller vouches for the key: each is a client of its own.
func TestRequesterMadeUpKeysWithNoKeysListed(t *testing.T) {
	mw, _ := clockedMiddleware(t, httplimit.Options{Plans: unknownKeysPlans(), AnonymousPlan: "anonymous"})
	count := func(ip string) int {
		passed := 0
		for i := range 20 {
			r := httplimit.Requester{APIKey: fmt.Sprintf("made-up-%s-%d", ip, i)}
			if ip != "" {
				r.IP = netip.MustParseAddr(ip)
			}
			res, err := mw.DecideFor(context.Background(), r, "GET", "/", 1)
			if err != nil {
				t.Fatal(err)
			}
			if res.Decision.Allowed {
				passed++
			}
			mw.Done(context.Background(), res)
		}
		return passed
	}
	if got := count("192.0.2.1"); got != 5 {
		t.Errorf("20 made-up keys with one ip, 5 a minute for the address: %d passed, want 5", got)
	}
	if got := count(""); got != 20 {
		t.Errorf("20 made-up keys without an ip: %d passed, want 20 (each a client of its own)", got)
	}
}
