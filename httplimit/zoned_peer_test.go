package httplimit_test

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// A client address with an IPv6 zone — a DecideFor caller's Requester.IP
// (the decision API's "ip"), a link-local peer — is grouped by its address
// alone: the zone, whose text is anything ('|' that separates a rule key's
// parts, Redis's '{'), never reaches a store key, even where addresses are
// kept whole (a /128 group).
func TestAZonedClientAddressKeysNoZone(t *testing.T) {
	mw, _ := clockedMiddleware(t, httplimit.Options{
		Plans:      []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(20, time.Minute)}}},
		IPv6Prefix: 128,
		Rules:      []httplimit.Rule{{Name: "r", Key: []string{"ip", "ip/24/128"}, Limits: []sluice.Limit{sluice.FixedWindow(20, time.Minute)}}},
	})
	ctx := context.Background()
	res, err := mw.DecideFor(ctx, httplimit.Requester{IP: netip.MustParseAddr("fe80::1%a{b}|c")}, "GET", "/", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer mw.Discard(res)
	if res.Identity.Subject != "ip:fe80::1" {
		t.Errorf("Subject %q, want ip:fe80::1", res.Identity.Subject)
	}
	for _, c := range res.Checks {
		if strings.ContainsAny(c.Key, "%{") {
			t.Errorf("store key %q holds the zone", c.Key)
		}
	}
	r := req{remote: "[fe80::1%a{b}]:80"}.request()
	res2, err := mw.Decide(r)
	if err != nil {
		t.Fatal(err)
	}
	defer mw.Discard(res2)
	for _, c := range res2.Checks {
		if strings.ContainsAny(c.Key, "%{") {
			t.Errorf("a zoned peer: store key %q holds the zone", c.Key)
		}
	}
}
