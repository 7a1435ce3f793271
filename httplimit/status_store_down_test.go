package httplimit_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// readStanding serves one read of StatusHandler and returns the answer and
// its body as a Standing and as a Problem (whichever it is).
func readStanding(t *testing.T, mw *httplimit.Middleware) (*httptest.ResponseRecorder, httplimit.Standing, httplimit.Problem) {
	t.Helper()
	rec := httptest.NewRecorder()
	mw.StatusHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/rate_limit", nil))
	var st httplimit.Standing
	var p httplimit.Problem
	if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil {
		t.Fatalf("%d %s: %v", rec.Code, rec.Body, err)
	}
	json.Unmarshal(rec.Body.Bytes(), &p)
	return rec, st, p
}

// With the store unreachable under on_store_error: allow, nothing is
// counted and what the client has left is not known: the RateLimit headers
// say nothing of it rather than a made-up figure (docs/headers.md), and the
// standing, which states the figures of those headers, cannot be read: it
// is a 503 with Retry-After: 1, as under deny, never the failover's made-up
// status (remaining = limit, used 0) whatever the client spent before.
func TestAStandingWhileTheStoreIsDownUnderAllowIsA503(t *testing.T) {
	local := memory.New()
	t.Cleanup(func() { local.Close() })
	f, err := failover.New(down{}, local, failover.Options{OnError: failover.Allow, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	mw, err := httplimit.New(sluice.NewLimiter(f), httplimit.Options{
		Plans:  []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.PerMinute(10).Named("per-minute")}}},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	rec, st, p := readStanding(t, mw)
	if v := rec.Header().Values("RateLimit"); len(v) > 0 {
		t.Errorf("RateLimit %q with the store down", v)
	}
	for _, l := range st.Limits {
		t.Errorf("store down, nothing known of the quota, yet the standing says %s: remaining %d of %d, used %d",
			l.Policy, l.Remaining, l.Limit, l.Used)
	}
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != "1" || p.Type != httplimit.ProblemReducedCapacity {
		t.Errorf("standing with the store down under allow: %d, Retry-After %q, %s; want 503, Retry-After 1, %s",
			rec.Code, rec.Header().Get("Retry-After"), p.Type, httplimit.ProblemReducedCapacity)
	}
}

// madeUpLimits decides the reads of the standing (the "status-reads"
// limit) in next, and answers every other check as a failover's policy
// does while its store is down: Unavailable, admitted with the whole burst
// (allow) or refused with nothing left (deny).
type madeUpLimits struct {
	next  sluice.Store
	allow bool
}

func (s madeUpLimits) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	if len(checks) == 1 && checks[0].Limit.Name() == "status-reads" {
		return s.next.Apply(ctx, checks, out)
	}
	for i := range checks {
		if s.allow {
			out[i] = sluice.Status{Allowed: true, Remaining: checks[i].Limit.Burst(), Unavailable: true}
		} else {
			out[i] = sluice.Status{RetryAfter: time.Second, ResetAfter: time.Second, Unavailable: true}
		}
	}
	return nil
}

// A standing whose reads were admitted by the store but whose limits no
// store decided (a failover's allow or deny in its place) states no
// figure either: a 503 with Retry-After: 1, not a full or a spent quota.
func TestAStandingOfLimitsNoStoreDecidedIsA503(t *testing.T) {
	for _, allow := range []bool{true, false} {
		local := memory.New()
		t.Cleanup(func() { local.Close() })
		mw, err := httplimit.New(sluice.NewLimiter(madeUpLimits{next: local, allow: allow}), httplimit.Options{
			Plans:  []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.PerMinute(10).Named("per-minute")}}},
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		})
		if err != nil {
			t.Fatal(err)
		}
		rec, st, _ := readStanding(t, mw)
		if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != "1" || len(st.Limits) != 0 {
			t.Errorf("allow %v: limits decided by no store: %d, Retry-After %q, limits %+v; want 503, Retry-After 1, no figures",
				allow, rec.Code, rec.Header().Get("Retry-After"), st.Limits)
		}
	}
}
