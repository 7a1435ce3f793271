package server

import (
	"math/bits"
	"strconv"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/httplimit"
)

// A refusal of a client the full top table does not hold costs
// O(log topCapacity) comparisons, not a scan of the table under the lock
// every decision takes: a flood of refused requests under ever new
// subjects (a global limit refusing them) stays as cheap as any. The
// table still keeps the most refused client, at its count.
func TestTopClientsCostLogarithmicPerRefusal(t *testing.T) {
	s := newStats(func() time.Time { return time.Unix(1e9, 0) }, nil)
	plan := &httplimit.Plan{Name: "free"}
	refuse := func(subject string) {
		s.recordClient(httplimit.Identity{Subject: subject, Kind: "ip", Plan: plan})
	}
	for range 1000 {
		refuse("heavy")
	}
	for i := range topCapacity {
		refuse("fill:" + strconv.Itoa(i))
	}
	const flood = 20000
	before := s.top.entries.compared
	for i := range flood {
		refuse("new:" + strconv.Itoa(i))
	}
	// Each refusal sifts one entry: at most two comparisons a level.
	most := flood * 2 * (bits.Len(uint(topCapacity)) + 1)
	if n := s.top.entries.compared - before; n > most {
		t.Errorf("%d refusals of new clients made %d comparisons, want at most %d (O(log %d) each)", flood, n, most, topCapacity)
	}
	if s.top.len() != topCapacity {
		t.Errorf("the table holds %d clients, want %d", s.top.len(), topCapacity)
	}
	if e := s.top.bySubject["heavy"]; e == nil || e.Count != 1000 {
		t.Errorf("the most refused client: %+v, want in the table with 1000 refusals", e)
	}
}
