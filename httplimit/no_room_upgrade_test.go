package httplimit_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// A newcomer refused for want of room (sluice.Status.NoRoom: the memory
// store full of other clients' refusing states) used none of its quota,
// and a client of the pro plan would be refused alike: no limit refused
// it, so its 429 offers no upgrade (upgradeFor), though its plan names
// one that allows more of the plan's limit.
func TestARefusalForWantOfRoomOffersNoUpgrade(t *testing.T) {
	noon := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return noon }
	mem := memory.New(memory.WithClock(clock), memory.WithSweepInterval(0), memory.WithShards(1), memory.WithMaxKeys(1))
	t.Cleanup(func() { mem.Close() })
	pro := &httplimit.Plan{Name: "pro", Limits: []sluice.Limit{sluice.PerMinute(100).Named("per-minute")}}
	free := &httplimit.Plan{Name: "free", Limits: []sluice.Limit{sluice.PerMinute(1).Named("per-minute")},
		Upgrade: &httplimit.Upgrade{Plan: "pro", URL: "https://example.com/pricing"}}
	mw, err := httplimit.New(sluice.NewLimiter(mem), httplimit.Options{Plans: []*httplimit.Plan{free, pro}, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	h := mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	serve := func(addr string) (int, httplimit.Problem) {
		rec := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodGet, "/v1/items", nil)
		r.RemoteAddr = addr
		h.ServeHTTP(rec, r)
		var p httplimit.Problem
		if rec.Code != http.StatusOK {
			if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
				t.Fatalf("%d %s: %v", rec.Code, rec.Body, err)
			}
		}
		return rec.Code, p
	}
	// The first client's state, spent by its second request, fills the
	// store's one room and refuses: it may not be evicted.
	if code, _ := serve("203.0.113.1:1"); code != http.StatusOK {
		t.Fatalf("the first client: %d", code)
	}
	if code, p := serve("203.0.113.1:1"); code != http.StatusTooManyRequests || p.Upgrade == nil {
		t.Fatalf("the first client over its limit: %d, upgrade %+v; want 429 offering the pro plan", code, p.Upgrade)
	}
	code, p := serve("203.0.113.2:1")
	if code != http.StatusTooManyRequests || p.CurrentUsage != nil {
		t.Fatalf("the newcomer, no room: %d %+v; want 429 without currentUsage (a refusal for want of room)", code, p)
	}
	if p.Upgrade != nil {
		t.Errorf("a refusal for want of room offers an upgrade: %+v (detail %q); no plan raises the store's room", p.Upgrade, p.Detail)
	}
}
