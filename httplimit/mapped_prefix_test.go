package httplimit_test

import (
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// An address is matched unmapped (::ffff:10.0.0.1 is 10.0.0.1), so a
// prefix given in the IPv4-mapped form, as a dual-stack socket shows IPv4
// peers, must name the same IPv4 addresses: else a trusted proxy's clients
// all share its one quota, and an exempt address is limited.
func TestAnIPv4MappedPrefixNamesItsIPv4Addresses(t *testing.T) {
	one := []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}}}
	t.Run("trusted proxies", func(t *testing.T) {
		mw, _ := clockedMiddleware(t, httplimit.Options{Plans: one,
			TrustedProxies: []netip.Prefix{netip.MustParsePrefix("::ffff:10.0.0.0/104")}})
		from := func(client string) req {
			return req{remote: "10.0.0.1:4000", header: map[string]string{"X-Forwarded-For": client}}
		}
		got := statuses(mw, from("192.0.2.1"), from("192.0.2.2"), from("192.0.2.1"))
		if want := []int{200, 200, 429}; !slices.Equal(got, want) {
			t.Errorf("two clients through a proxy of ::ffff:10.0.0.0/104: %v, want %v", got, want)
		}
	})
	t.Run("exempt addresses", func(t *testing.T) {
		mw, _ := clockedMiddleware(t, httplimit.Options{Plans: one,
			ExemptAddresses: []netip.Prefix{netip.MustParsePrefix("::ffff:192.0.2.7/128")}})
		got := statuses(mw, repeat(req{remote: "192.0.2.7:1"}, 3)...)
		if want := []int{200, 200, 200}; !slices.Equal(got, want) {
			t.Errorf("192.0.2.7, exempt as ::ffff:192.0.2.7/128: %v, want %v", got, want)
		}
		res, err := mw.DecideFor(t.Context(), httplimit.Requester{IP: netip.MustParseAddr("192.0.2.7")}, "GET", "/", -1)
		if err != nil {
			t.Fatal(err)
		}
		defer mw.Discard(res)
		if !res.Exempt {
			t.Error("DecideFor: 192.0.2.7 is not exempt as ::ffff:192.0.2.7/128")
		}
	})
}
