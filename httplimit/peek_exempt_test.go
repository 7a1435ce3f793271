package httplimit_test

import (
	"context"
	"log/slog"
	"maps"
	"net/http"
	"net/netip"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// A DecideFor of cost 0 is a peek, which decides no request: one of an
// exempt route, address or user is exempt as a request would be, but is no
// exempt request, so OnExempt (sluice_exempt_requests_total) is not told of
// it; a check of cost 1 of each is.
func TestAPeekIsNoExemptRequest(t *testing.T) {
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	reasons := map[string]int{}
	mw, err := httplimit.New(sluice.NewLimiter(store), httplimit.Options{
		Plans:           []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.PerMinute(2).Named("per-minute")}}},
		DefaultPlan:     "free",
		Logger:          slog.New(slog.DiscardHandler),
		Exempt:          []string{"GET /health"},
		ExemptAddresses: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")},
		ExemptUsers:     []string{"ops-bot"},
		UserHeader:      "X-User",
		OnExempt:        func(_ *http.Request, reason string) { reasons[reason]++ },
	})
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		c    httplimit.Requester
		path string
	}{
		{httplimit.Requester{User: "u"}, "/health"},
		{httplimit.Requester{IP: netip.MustParseAddr("192.0.2.9")}, "/x"},
		{httplimit.Requester{User: "ops-bot"}, "/x"},
	}
	for _, cost := range []int64{0, 1} {
		for _, ch := range checks {
			res, err := mw.DecideFor(context.Background(), ch.c, "GET", ch.path, cost)
			if err != nil || !res.Exempt {
				t.Fatalf("cost %d of %+v to %s: exempt %v, %v; want exempt", cost, ch.c, ch.path, res != nil && res.Exempt, err)
			}
			mw.Discard(res)
		}
		want := map[string]int{}
		if cost == 1 {
			want = map[string]int{httplimit.ExemptRoute: 1, httplimit.ExemptAddress: 1, httplimit.ExemptUser: 1}
		}
		if !maps.Equal(reasons, want) {
			t.Errorf("after the checks of cost %d: OnExempt told %v, want %v", cost, reasons, want)
		}
	}
}
