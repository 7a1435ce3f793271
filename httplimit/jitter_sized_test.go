package httplimit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// The jitter is sized from the limit whose wait the client is told, not
// from the decision's Limit, which may be a concurrency limit of a long
// lease (its RetryAfter and ResetAfter are the lease's expiry, which the
// client is never told) and has no window: clients of a per-minute limit
// are spread over its tenth, 6 s, whether or not a concurrency limit was
// also exhausted.
func TestRetryJitterSizedFromTheStatedLimit(t *testing.T) {
	const exact, most = 30, 6 // the per-minute window's end, and a tenth of it
	mw, clock := clockedMiddleware(t, httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "p", Limits: []sluice.Limit{
			sluice.FixedWindow(1, time.Minute).Named("per-minute"),
			sluice.Concurrency(1, time.Hour),
		}}},
		RetryJitter: time.Hour,
	})
	clock.Advance(exact * time.Second) // half way through a minute
	ctx := context.Background()
	perMinute := regexp.MustCompile(`"per-minute";r=0;t=(\d+)`)
	admitted, refused := map[int64]bool{}, map[int64]bool{}
	for i := range 50 {
		who := httplimit.Requester{IP: netip.MustParseAddr(fmt.Sprintf("10.3.0.%d", i+1))}
		first, err := mw.DecideFor(ctx, who, "GET", "/", 1) // holds its lease
		if err != nil || !first.Decision.Allowed {
			t.Fatalf("client %d: %v %+v", i, err, first)
		}
		h := http.Header{}
		mw.WriteHeaders(h, first)
		m := perMinute.FindStringSubmatch(h.Get("RateLimit"))
		if m == nil {
			t.Fatalf("client %d: no exhausted per-minute item in RateLimit %q", i, h.Get("RateLimit"))
		}
		tt, _ := strconv.ParseInt(m[1], 10, 64)
		if tt < exact || tt > exact+most {
			t.Fatalf("client %d: admitted with per-minute t=%d, want [%d, %d]", i, tt, exact, exact+most)
		}
		admitted[tt] = true
		second, err := mw.DecideFor(ctx, who, "GET", "/", 1)
		if err != nil || second.Decision.Allowed {
			t.Fatalf("client %d: second request: %v %+v", i, err, second)
		}
		ra := second.RetryAfter()
		if ra < exact*time.Second || ra > (exact+most)*time.Second {
			t.Fatalf("client %d: refused by both limits, told to retry in %v, want [%d s, %d s]", i, ra, exact, exact+most)
		}
		refused[int64(ra/time.Second)] = true
		mw.Discard(second)
		mw.Discard(first)
	}
	if len(admitted) < 4 || len(refused) < 4 {
		t.Errorf("50 clients were told %d distinct per-minute t when admitted and %d distinct Retry-After when refused; want at least 4 each",
			len(admitted), len(refused))
	}
}
