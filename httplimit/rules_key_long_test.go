package httplimit_test

import (
	"context"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// TestARuleKeyOfALongSubjectFitsTheStore: a caller of DecideFor (the
// decision API) names its client by a subject of up to sluice.MaxKeyLen
// bytes less "ext:" and the scope; a rule keyed by the client and another
// attribute keeps such a subject hashed, so that its store key fits
// sluice.MaxKeyLen and the request is decided, each subject its own count.
func TestARuleKeyOfALongSubjectFitsTheStore(t *testing.T) {
	mw, _ := clockedMiddleware(t, httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(10, time.Minute)}}},
		Rules: []httplimit.Rule{{Name: "r", Key: []string{"client", "ip"}, Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}}},
	})
	ip := netip.MustParseAddr("192.0.2.1")
	a, b := strings.Repeat("a", 1000), strings.Repeat("a", 999)+"b"
	var got []bool
	for _, subject := range []string{a, b, a} {
		res, err := mw.DecideFor(context.Background(), httplimit.Requester{Subject: subject, IP: ip}, "GET", "/", -1)
		if err != nil {
			t.Fatalf("a subject of %d bytes: %v", len(subject), err)
		}
		got = append(got, res.Decision.Allowed)
		mw.Done(context.Background(), res)
	}
	if want := []bool{true, true, false}; !slices.Equal(got, want) {
		t.Fatalf("a, b, a: %v, want %v", got, want)
	}
}
