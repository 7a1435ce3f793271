package server_test

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/degrade"
)

// TestStreamLatencyIsItsAnswerStart: the latency the p99 signal reads of
// an event stream is the time to its answer's start, not its whole life.
// Thirty streams of about a second each end among a few hundred quick
// answers: were their lives counted, the window that sees them end would
// have a p99 of about a second, since they are more than 1% of its
// answers even when two windows share them.
func TestStreamLatencyIsItsAnswerStart(t *testing.T) {
	up := streamingUpstream(t)
	srv, _ := loadServer(t, t.TempDir(), "upstream: "+up.URL+`
plans:
  anonymous:
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 1000000, window: 1m}]
anonymous_plan: anonymous
degradation:
  min_answers: 1
  interval: 2s
  min_dwell: 100ms
  levels:
    elevated: {enter: {p99: 500ms}, leave: {p99: 100ms}}
`)
	addrs := serveOn(t, srv)
	base := "http://" + addrs.public

	// The windows' signals, each with when it was first seen.
	type seen struct {
		at time.Time
		s  degrade.Signals
	}
	stop := make(chan struct{})
	windows := make(chan []seen, 1)
	go func() {
		var all []seen
		for {
			if s := srv.Degradation().Signals; len(all) == 0 || s != all[len(all)-1].s {
				all = append(all, seen{time.Now(), s})
			}
			select {
			case <-stop:
				windows <- all
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()

	// Quick answers, about 250 a second, all through the test.
	quick := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-quick:
					return
				case <-time.After(8 * time.Millisecond):
				}
				resp, err := http.Get(base + "/events?n=0")
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	time.Sleep(2500 * time.Millisecond) // a whole window of quick answers first

	var streams sync.WaitGroup
	for range 30 {
		streams.Go(func() {
			resp, err := http.Get(base + "/events?n=10")
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			if body, err := io.ReadAll(resp.Body); err != nil || strings.Count(string(body), "data:") != 10 {
				t.Errorf("event stream: %d events, %v", strings.Count(string(body), "data:"), err)
			}
		})
	}
	streams.Wait()
	ended := time.Now()
	time.Sleep(4500 * time.Millisecond) // the windows of the streams' ends are sampled
	close(quick)
	wg.Wait()
	close(stop)

	read := 0 // windows sampled after the streams ended, with a p99 to read
	for _, w := range <-windows {
		if w.s.Answers < 100 {
			continue
		}
		if w.at.After(ended) {
			read++
		}
		if w.s.P99 >= 500*time.Millisecond {
			t.Errorf("a window of %d answers seen at %v had a p99 of %v",
				w.s.Answers, w.at.Sub(ended).Round(time.Millisecond), w.s.P99)
		}
	}
	if read == 0 {
		t.Fatal("no window after the streams ended had 100 answers: the p99 was never read")
	}
	if l := srv.Degradation().Level; l != degrade.Normal {
		t.Errorf("level %v", l)
	}
}
