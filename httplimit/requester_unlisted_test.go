package httplimit_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// A decision asked for with an API key no one listed, under UnknownKeys
// "ip", is the client at the address it gives, as the proxy counts it:
// made-up keys mint no quota through the decision API either. Without an
// address, or under UnknownKeys "key", the key is a client of its own.
func TestRequesterUnlistedKeyIsItsAddressUnderUnknownKeysIP(t *testing.T) {
	plans := []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(3, time.Minute)}}}
	decide := func(mw *httplimit.Middleware, rs ...httplimit.Requester) []bool {
		var got []bool
		for _, r := range rs {
			res, err := mw.DecideFor(context.Background(), r, "GET", "/", 1)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, res.Decision.Allowed)
			mw.Done(context.Background(), res)
		}
		return got
	}
	made := func(ip string) []httplimit.Requester {
		var rs []httplimit.Requester
		for i := range 5 {
			r := httplimit.Requester{APIKey: fmt.Sprintf("made-up-%d", i)}
			if ip != "" {
				r.IP = netip.MustParseAddr(ip)
			}
			rs = append(rs, r)
		}
		return rs
	}
	listed := []httplimit.Key{{Name: "real", SHA256: sha256.Sum256([]byte("real"))}}

	mw, _ := clockedMiddleware(t, httplimit.Options{Plans: plans, Keys: listed})
	if got, want := decide(mw, made("192.0.2.1")...), []bool{true, true, true, false, false}; !slices.Equal(got, want) {
		t.Errorf("five made-up keys from one address: %v, want %v (the address's quota)", got, want)
	}
	if got, want := decide(mw, made("")...), []bool{true, true, true, true, true}; !slices.Equal(got, want) {
		t.Errorf("five made-up keys and no address: %v, want each a client of its own", got)
	}
	if got := decide(mw, httplimit.Requester{APIKey: "real", IP: netip.MustParseAddr("192.0.2.1")}); !got[0] {
		t.Error("the listed key from the spent address was refused: it is a client of its own")
	}

	mw, _ = clockedMiddleware(t, httplimit.Options{Plans: plans, Keys: listed, UnknownKeys: "key"})
	if got, want := decide(mw, made("192.0.2.1")...), []bool{true, true, true, true, true}; !slices.Equal(got, want) {
		t.Errorf("UnknownKeys key: %v, want each a client of its own", got)
	}
}
