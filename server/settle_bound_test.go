package server

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice/httplimit"
)

// smallPendings is a pendings of max unsettled ids on a ring of 2·max
// slots, as newPendings makes them for maxPending, on the clock *now,
// counting the ids dropped in *dropped.
func smallPendings(max int, now *time.Time, dropped *int) *pendings {
	return &pendings{byID: map[string]pendingEntry{}, ring: make([]string, 2*max), max: max,
		now: func() time.Time { return *now }, dropped: func() { *dropped++ }}
}

// docs/api.md: the server "holds at most 65,536 unsettled ids, dropping the
// oldest". The bound counts unsettled ids only: one id left unsettled while
// 65,536 others are each settled at once is one unsettled id, and it
// settles within its 15 minutes.
func TestSettledIdsLeaveRoomForUnsettledOnes(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	dropped := 0
	ps := newPendings(func() time.Time { return now }, func() { dropped++ })
	long := ps.put(new(httplimit.Pending)) // a long request, settled later
	for i := range 2 * maxPending {
		id := ps.put(new(httplimit.Pending))
		if ps.take(id) == nil { // settled at once
			t.Fatalf("id %d not held right after it was given", i)
		}
	}
	if ps.take(long) == nil || dropped != 0 {
		t.Fatalf("the only unsettled id (of 1 unsettled, %d given in the same second) was dropped (dropped=%d): "+
			"the bound of %d unsettled ids counts settled ones", 2*maxPending+1, dropped, maxPending)
	}
}

// Past max unsettled ids the oldest unsettled one is dropped, and counted
// as dropped, whatever the settled ids given between them; the others
// stay held. The ring never grows: memory is bounded by it and max
// entries.
func TestPendingsDropTheOldestUnsettledBeyondTheBound(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	dropped := 0
	ps := smallPendings(3, &now, &dropped)
	p := &httplimit.Pending{}
	settled := func() {
		for range 10 { // settled ones fill the ring and are compacted away
			ps.take(ps.put(p))
		}
	}
	a := ps.put(p)
	settled()
	b := ps.put(p)
	settled()
	c := ps.put(p)
	if dropped != 0 || len(ps.byID) != 3 {
		t.Fatalf("3 unsettled in a bound of 3, 20 settled between them: dropped %d, held %d; want 0 dropped, 3 held", dropped, len(ps.byID))
	}
	d := ps.put(p) // a fourth unsettled: a, the oldest, goes
	if dropped != 1 || ps.take(a) != nil {
		t.Fatalf("a fourth unsettled in a bound of 3: dropped %d, a still held: %v; want a dropped", dropped, ps.take(a) != nil)
	}
	for _, id := range []string{b, c, d} {
		if ps.take(id) != p {
			t.Errorf("%s not held: only the oldest unsettled is dropped", id)
		}
	}
	if len(ps.ring) != 6 || ps.n > len(ps.ring) {
		t.Errorf("ring of %d slots, %d in use; want 6, at most 6", len(ps.ring), ps.n)
	}
}

// An id is held for settleTTL: past it, take finds nothing, and an id
// never settled is dropped, and counted, when the next one is given. An id
// is taken once.
func TestPendingsExpireAfterTheirTTL(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	dropped := 0
	ps := smallPendings(3, &now, &dropped)
	p := &httplimit.Pending{}
	a, b := ps.put(p), ps.put(p)
	if ps.take(a) != p || ps.take(a) != nil {
		t.Fatal("a: not taken once")
	}
	now = now.Add(settleTTL)
	if ps.take(b) != nil {
		t.Fatal("b taken at settleTTL: want expired")
	}
	c := ps.put(p)
	now = now.Add(settleTTL - time.Nanosecond)
	if ps.take(c) != p {
		t.Fatal("c not held just before its settleTTL")
	}
	e := ps.put(p)
	now = now.Add(settleTTL)
	ps.put(p) // finds e expired, never settled: dropped
	if dropped != 1 || ps.take(e) != nil || len(ps.byID) != 1 {
		t.Errorf("dropped %d, held %d, e taken: %v; want e dropped expired (b was taken expired: not dropped), 1 held", dropped, len(ps.byID), ps.take(e) != nil)
	}
}
