package httplimit_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// An operator's Penalize of a client whose box the store has no room to
// keep (a memory store under max_keys full of states being refused:
// sluice.Status.NoRoom, nothing written) boxes no one: it returns an error
// wrapping sluice.ErrStoreUnavailable (the admin API's 503), as when no
// store decided the box, and remembers no box in-process, so the client's
// next request, once there is room, is decided by its limits, not refused
// with ProblemPenalty.
func TestPenalizeWithoutRoomBoxesNoOne(t *testing.T) {
	noon := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return noon }
	mem := memory.New(memory.WithClock(clock), memory.WithSweepInterval(0), memory.WithShards(1), memory.WithMaxKeys(1))
	t.Cleanup(func() { mem.Close() })
	lim := sluice.NewLimiter(mem)
	mw, err := httplimit.New(lim, httplimit.Options{
		Plans:   []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.PerMinute(5).Named("per-minute")}}},
		Penalty: httplimit.Penalty{Refusals: 3, Within: time.Minute, For: 10 * time.Minute},
		Clock:   clock,
	})
	if err != nil {
		t.Fatal(err)
	}
	// The store's one room holds another key's state, spent: it refuses,
	// so it may not be evicted.
	other := []sluice.Check{{Key: "other", Limit: sluice.PerMinute(1).Named("other"), Cost: 1}}
	var d sluice.Decision
	if err := lim.Allow(context.Background(), other, &d); err != nil || !d.Allowed {
		t.Fatalf("filling the store: %v %+v", err, d)
	}
	left, err := mw.Penalize(context.Background(), "ip:203.0.113.2")
	if !errors.Is(err, sluice.ErrStoreUnavailable) {
		t.Errorf("Penalize with no room for the box: boxed for %v, error %v; want one wrapping sluice.ErrStoreUnavailable: nothing was written", left, err)
	}
	// Room comes back: nothing of the client's was written.
	if n := mem.Reset("other", []sluice.Limit{sluice.PerMinute(1).Named("other")}); n != 1 {
		t.Fatalf("resetting the other key: %d states forgotten, want 1", n)
	}
	h := mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	rec := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, "/v1/items", nil)
	r.RemoteAddr = "203.0.113.2:1"
	h.ServeHTTP(rec, r)
	if rec.Code != http.StatusOK {
		var p httplimit.Problem
		_ = json.Unmarshal(rec.Body.Bytes(), &p)
		t.Errorf("the client's request after a Penalize that wrote nothing: %d %s; want 200 (no box was kept)", rec.Code, p.Type)
	}
}
