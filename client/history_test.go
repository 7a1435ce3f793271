package client

import (
	"net/http"
	"testing"
	"time"
)

// The units a host's requests spent before an answer first states a
// policy were counted by the server as well, when they were answered
// within the policy's w: the window of a policy stated alone counts them
// from the start, and lets the rest of q go.
func TestUnitsAnsweredBeforeAPolicyIsStatedCountInItsFirstWindow(t *testing.T) {
	h := newHostState(true, 0)
	bare := func(at time.Time) response { return response{arrived: true, at: at, status: http.StatusOK} }
	probe := mustGrant(t, h, t0, "probe")
	h.finish(probe, bare(t0.Add(10*time.Millisecond))) // no fields: the host is open
	now := t0.Add(20 * time.Millisecond)
	a, b := mustGrant(t, h, now, "second"), mustGrant(t, h, now, "third")
	h.finish(a, bare(now.Add(10*time.Millisecond)))
	hdr := http.Header{}
	hdr.Set("RateLimit-Policy", `"per-10s";q=5;w=10`)
	r := readResponse(hdr, now.Add(20*time.Millisecond))
	r.status = http.StatusOK
	h.finish(b, r)
	// The server counted 3 units within 10 s: 2 more may go, not 5.
	now = now.Add(30 * time.Millisecond)
	mustGrant(t, h, now, "fourth")
	mustGrant(t, h, now, "fifth")
	if _, ok, _ := h.try(1, now); ok {
		t.Fatal("a sixth unit went within 10 s of the first three's answers, beyond q=5")
	}
}

// A history keeps every unit, each dated no earlier than its answer, in
// at most two runs of each power of two of answers.
func TestAHistoryKeepsEveryUnitInFewRuns(t *testing.T) {
	var h history
	var units int64
	for i := range 5000 {
		at := t0.Add(time.Duration(i) * time.Millisecond)
		h.add(int64(1+i%3), at)
		units += int64(1 + i%3)
		var sum, answers int64
		per := map[int64]int{}
		for j, r := range h.runs {
			sum += r.units
			answers += r.n
			per[r.n]++
			if j > 0 && r.n > h.runs[j-1].n {
				t.Fatalf("after %d answers: run %d of %d answers is newer than one of %d", i+1, j, r.n, h.runs[j-1].n)
			}
			if per[r.n] > 2 {
				t.Fatalf("after %d answers: %d runs of %d answers", i+1, per[r.n], r.n)
			}
		}
		if sum != units || answers != int64(i+1) {
			t.Fatalf("after %d answers: runs hold %d units of %d answers; want %d of %d", i+1, sum, answers, units, i+1)
		}
	}
	// The newest run is dated by the newest answer; every run by its own latest.
	if last := h.runs[len(h.runs)-1]; !last.at.Equal(t0.Add(4999 * time.Millisecond)) {
		t.Errorf("the newest run is dated %v", last.at.Sub(t0))
	}
	if len(h.runs) > 2*13+2 {
		t.Errorf("%d runs for 5000 answers", len(h.runs))
	}
}
