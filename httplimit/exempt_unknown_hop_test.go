package httplimit_test

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// With the internal network both trusted and exempt, a client whose
// address a trusted proxy reports as a hop that cannot be read — RFC
// 7239's "unknown" or an obfuscated identifier of a proxy that hides its
// clients, or garbage — is limited as that proxy, and never exempt by the
// proxy's address: an attacker behind such a proxy must not go unlimited.
// Internal clients whose address is known stay exempt.
func TestAnUnknownHopIsNeverExempt(t *testing.T) {
	for _, forwarded := range []string{"", "forwarded"} {
		mw, _ := clockedMiddleware(t, httplimit.Options{
			Plans:           []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(2, time.Minute)}}},
			TrustedProxies:  []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
			ExemptAddresses: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
			ForwardedHeader: forwarded,
		})
		hdr := "X-Forwarded-For"
		hop := func(s string) string { return s }
		if forwarded != "" {
			hdr = "Forwarded"
			hop = func(s string) string { return "for=" + s }
		}
		cases := []struct {
			name   string
			r      req
			exempt bool
		}{
			{"an unknown hop", req{remote: "10.0.0.5:1", header: map[string]string{hdr: hop("unknown")}}, false},
			{"an obfuscated hop", req{remote: "10.0.0.5:1", header: map[string]string{hdr: hop("_hidden")}}, false},
			{"garbage", req{remote: "10.0.0.5:1", header: map[string]string{hdr: hop("not-an-address")}}, false},
			{"garbage behind an internal hop", req{remote: "10.0.0.5:1", header: map[string]string{hdr: hop("junk") + ", " + hop("10.0.0.7")}}, false},
			{"a chain cut at its bound", req{remote: "10.0.0.5:1", header: map[string]string{hdr: strings.Repeat(hop("10.0.0.7")+", ", 80) + hop("10.0.0.7")}}, false},
			{"an outside client", req{remote: "10.0.0.5:1", header: map[string]string{hdr: hop("203.0.113.9")}}, false},
			{"an internal client through the proxy", req{remote: "10.0.0.5:1", header: map[string]string{hdr: hop("10.0.0.7")}}, true},
			{"an internal client, directly", req{remote: "10.0.0.7:1"}, true},
		}
		for _, c := range cases {
			res, err := mw.Decide(c.r.request())
			if err != nil {
				t.Fatalf("%s %s: %v", hdr, c.name, err)
			}
			if res.Exempt != c.exempt {
				t.Errorf("%s %s: exempt %v (%s), want %v", hdr, c.name, res.Exempt, res.ExemptBy, c.exempt)
			}
			mw.Discard(res)
		}
	}
}
