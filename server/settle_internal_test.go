package server

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice/httplimit"
)

// The held settlements are bounded: past the ring's size the oldest is
// dropped, past settleTTL every one; a settled id is taken once.
func TestPendingsAreBoundedInNumberAndAge(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	dropped := 0
	ps := &pendings{byID: map[string]pendingEntry{}, ring: make([]string, 3), now: func() time.Time { return now }, dropped: func() { dropped++ }}
	p := &httplimit.Pending{}
	a, b, c := ps.put(p), ps.put(p), ps.put(p)
	if ps.take(b) != p || ps.take(b) != nil {
		t.Fatal("b: not taken once")
	}
	// A fourth in a ring of 3 drops the oldest, a, and reclaims b's slot.
	d := ps.put(p)
	if len(ps.byID) != 2 || ps.take(a) != nil {
		t.Fatalf("after a fourth in a ring of 3: %d held (want c and d), or a still there", len(ps.byID))
	}
	now = now.Add(settleTTL)
	if ps.take(c) != nil || ps.take(d) != nil {
		t.Error("held past settleTTL")
	}
	e := ps.put(p)
	if len(ps.byID) != 1 || ps.take(e) != p {
		t.Errorf("after expiry: %d held, want the new one alone", len(ps.byID))
	}
	// a dropped for the bound; c and d dropped expired when e came (the
	// takes of c and d above found them expired, and took them out).
	if dropped != 1 {
		t.Errorf("dropped %d, want 1: a (c and d were taken, expired, before e came)", dropped)
	}
	f := ps.put(p)
	now = now.Add(settleTTL)
	ps.put(p) // finds f expired, never settled: dropped
	if dropped != 2 || ps.take(f) != nil {
		t.Errorf("dropped %d, want 2: f expired unsettled", dropped)
	}
}
