package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A probe whose server never answers, sent without a deadline, holds the
// other requests to its host for stallAfter at most: then it counts as a
// failed attempt, and another request probes.
func TestAProbeNeverAnsweredHoldsTheHostForALimitedTime(t *testing.T) {
	release := make(chan struct{})
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		w.Header().Set("RateLimit", `"a";r=5;t=1`)
	}))
	defer srv.Close()
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	defer free() // before srv.Close, which waits for the handler
	tr := &Transport{Base: srv.Client().Transport, stallAfter: 200 * time.Millisecond}
	probe := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil) // no deadline
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		probe <- err
	}()
	for n.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	for i := range 3 {
		start := time.Now()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatalf("request %d behind a probe never answered: %v after %v", i, err, time.Since(start))
		}
		resp.Body.Close()
	}
	free()
	if err := <-probe; err != nil {
		t.Errorf("the stalled probe, once answered: %v", err)
	}
}

// An attempt written off as failed is not counted again when its answer
// comes at last, but its answer teaches as any does: a server slower than
// stallAfter still has its quota learned, and is not held to a probe at a
// time.
func TestALateAnswerOfAnAttemptWrittenOffStillTeaches(t *testing.T) {
	h := newHostState(true, 0)
	stale := mustGrant(t, h, t0, "first probe")
	mustWait(t, h, t0.Add(stallAfter-time.Nanosecond), time.Time{}, "while the probe may still answer")
	if got := h.stalledAt(); !got.Equal(t0.Add(stallAfter)) {
		t.Fatalf("stalledAt %v, want %v", got, t0.Add(stallAfter))
	}
	fresh := mustGrant(t, h, t0.Add(stallAfter), "the probe in its place")
	if !fresh.probe || h.inflight != 1 || h.lost != 0 || h.forgiven != 1 {
		t.Fatalf("probe %v, inflight %d, lost %d, forgiven %d; want a probe, 1, 0, 1", fresh.probe, h.inflight, h.lost, h.forgiven)
	}
	late := t0.Add(stallAfter + 30*time.Second)
	h.finish(stale, ok200(late, 3, time.Minute))
	if h.inflight != 1 || h.done != 0 || h.mode != modeKnown {
		t.Fatalf("after the late answer: inflight %d, done %d, mode %d; want 1, 0, known", h.inflight, h.done, h.mode)
	}
	// ceiling = done 0 + forgiven 0 + cost 1 + remaining 3 = 4; sent 2.
	mustGrant(t, h, late, "learned from the late answer")
	mustGrant(t, h, late, "learned from the late answer, again")
	mustWait(t, h, late, late.Add(time.Minute), "beyond what the late answer proves")
	h.finish(fresh, ok200(late, 2, time.Second))
	if h.inflight != 2 || h.done != 1 {
		t.Fatalf("after the second probe's answer: inflight %d, done %d; want 2, 1", h.inflight, h.done)
	}
}
