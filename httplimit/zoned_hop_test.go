package httplimit_test

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// A forwarded hop with an IPv6 zone ("fe80::1%eth0") names an interface of
// the host that wrote it, not a client: it is unparseable in every form, so
// the walk stops at the trusted proxy that reported it, and no zone (whose
// text is anything: '|', Redis's '{') reaches a store key.
func TestZonedForwardedHopsAreUnparseable(t *testing.T) {
	o := httplimit.Options{
		Plans:          []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}}},
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
		IPv6Prefix:     128,
	}
	mw, _ := clockedMiddleware(t, o)
	hop := func(xff string) req {
		return req{remote: "10.0.0.1:4000", header: map[string]string{"X-Forwarded-For": xff}}
	}
	for _, xff := range []string{"[2001:db8::1%a{b}]:443", "2001:db8::1%a{b}", "[fe80::1%eth0]:80"} {
		r := hop(xff).request()
		res, err := mw.Decide(r)
		if err != nil {
			t.Fatal(err)
		}
		if want := "ip:10.0.0.1"; res.Identity.Subject != want {
			t.Errorf("X-Forwarded-For %q: subject %q, want the proxy's %q", xff, res.Identity.Subject, want)
		}
		for _, c := range res.Checks {
			if strings.ContainsAny(c.Key, "%{") {
				t.Errorf("X-Forwarded-For %q: store key %q holds the zone", xff, c.Key)
			}
		}
		mw.Discard(res)
	}
	// Two zones of one address are not two clients.
	mw, _ = clockedMiddleware(t, o)
	got := statuses(mw, hop("[2001:db8::2%x]:1"), hop("[2001:db8::2%y]:1"))
	if want := []int{200, 429}; !slices.Equal(got, want) {
		t.Errorf("statuses %v, want %v", got, want)
	}
}
