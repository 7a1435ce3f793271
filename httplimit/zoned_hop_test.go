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

// A link-local peer ("[fe80::1%eth0]:4000", its zone the interface it came
// in on) is within the prefixes that name it: a trusted proxy on a
// link-local address is believed, and an exempt address is exempt.
func TestAZonedPeerIsWithinItsPrefixes(t *testing.T) {
	linkLocal := []netip.Prefix{netip.MustParsePrefix("fe80::/10")}
	mw, _ := clockedMiddleware(t, httplimit.Options{
		Plans:          []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}}},
		TrustedProxies: linkLocal,
	})
	res, err := mw.Decide(req{remote: "[fe80::1%eth0]:4000", header: map[string]string{"X-Forwarded-For": "203.0.113.9"}}.request())
	if err != nil {
		t.Fatal(err)
	}
	if want := "ip:203.0.113.9"; res.Identity.Subject != want {
		t.Errorf("behind a trusted link-local proxy: subject %q, want %q", res.Identity.Subject, want)
	}
	mw.Discard(res)
	mw, _ = clockedMiddleware(t, httplimit.Options{
		Plans:           []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}}},
		ExemptAddresses: linkLocal,
	})
	res, err = mw.Decide(req{remote: "[fe80::1%eth0]:4000"}.request())
	if err != nil {
		t.Fatal(err)
	}
	if !res.Exempt {
		t.Errorf("a link-local peer under an exempt fe80::/10: not exempt (%q)", res.Identity.Subject)
	}
	mw.Discard(res)
}
