package server_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/degrade"
)

// An upstream so slow that its clients give up on it before it answers is
// the overload the p99 signal exists to see. Were every request whose
// client left before the answer started dropped from the p99, the slowest
// requests, and at saturation all of them, would vanish from it: an
// upstream that takes 3 s for every request, behind clients with an
// ordinary 600 ms timeout, would read as a p99 of 0. The time from when
// the limits sent the request on to when its client left, the upstream
// still silent, is a lower bound of the upstream's latency (nginx logs it
// as $upstream_response_time of a 499); a client cannot lengthen it past
// what the upstream took, so it counts in the p99 (degrade.Abandoned),
// though not as an answer. The same holds of a gRPC call its deadline
// ends (grpcAnswer.pastDeadline).
func TestAnUpstreamItsClientsGiveUpOnIsSlow(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // 3 s of work, for every request
		case <-time.After(3 * time.Second):
			w.Write([]byte("ok"))
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(up.Close)
	srv, l := serveYAML(t, "upstream: "+up.URL+`
plans:
  anonymous:
    limits: [{name: per-second, algorithm: gcra, quantity: 100000, window: 1s}]
anonymous_plan: anonymous
degradation:
  interval: 1m
  min_dwell: 1m
  levels:
    elevated: {enter: {p99: 400ms}, leave: {p99: 200ms}}
`+testAdmin)
	base := "http://" + l.public
	srv.SampleNow()

	const n = 120 // a p99 is judged over 100 answers or more
	tr := &http.Transport{MaxIdleConnsPerHost: n}
	t.Cleanup(tr.CloseIdleConnections)
	hc := &http.Client{Transport: tr, Timeout: 600 * time.Millisecond}
	var wg sync.WaitGroup
	var mu sync.Mutex
	gaveUp := 0
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := hc.Get(base + "/api/items")
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				return
			}
			mu.Lock()
			gaveUp++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if gaveUp != n {
		t.Fatalf("%d of %d clients gave up: the premise (the upstream answers none within 600 ms) failed", gaveUp, n)
	}
	time.Sleep(time.Second) // sluice sees each client leave
	if l := srv.SampleNow(); l == degrade.Normal {
		s := srv.Degradation().Signals
		t.Errorf("%d requests, the upstream silent for 3 s, every client gone after 600 ms: level %v, p99 %v, answers %d, in_flight %d; want the level entered at a p99 of 400 ms",
			n, l, s.P99, s.Answers, s.InFlight)
	}
}

// An upstream slower than every caller's deadline (p99 entered at 400 ms,
// every caller's grpc-timeout 600 ms, the service taking 3 s) answers no
// call within one; each call's time to its deadline, a lower bound of the
// upstream's latency, is in the p99, and the level is entered.
func TestAGRPCServiceSlowerThanEveryDeadlineShowsInP99(t *testing.T) {
	addr := h2cUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		select { // 3 s of work for every call
		case <-time.After(3 * time.Second):
			w.Header().Set("Content-Type", "application/grpc")
			w.Header().Set("Trailer", "Grpc-Status")
			w.Write([]byte{0, 0, 0, 0, 0})
			w.Header().Set("Grpc-Status", "0")
		case <-r.Context().Done():
		}
	})
	srv, _ := loadServer(t, t.TempDir(), "upstream: "+addr+"\n"+strings.Replace(grpcConfig, "quantity: 3,", "quantity: 100000,", 1)+`
degradation:
  interval: 1m
  min_dwell: 1m
  levels:
    elevated: {enter: {p99: 400ms}, leave: {p99: 200ms}}
`)
	public := serveOn(t, srv).public
	srv.SampleNow()

	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	t.Cleanup(tr.CloseIdleConnections)
	hc := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	const n = 120 // a p99 is judged over 100 answers or more
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[string]int{}
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("POST", "http://"+public+"/orders.v1.Orders/Get", bytes.NewReader([]byte{0, 0, 0, 0, 0}))
			req.Header.Set("Content-Type", "application/grpc")
			req.Header.Set("Te", "trailers")
			req.Header.Set("Grpc-Timeout", "600m") // the callers' deadline, above the p99 threshold
			c := "error"
			if resp, err := hc.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if c = resp.Trailer.Get("Grpc-Status"); c == "" {
					c = resp.Header.Get("Grpc-Status")
				}
			}
			mu.Lock()
			codes[c]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if codes["4"] != n {
		t.Fatalf("grpc-status of the calls: %v; the premise (each ends DEADLINE_EXCEEDED at its 600 ms deadline) failed", codes)
	}
	if l := srv.SampleNow(); l == degrade.Normal {
		s := srv.Degradation().Signals
		t.Errorf("%d calls, each still unanswered at its 600 ms deadline (the service takes 3 s), p99 threshold 400 ms below the deadline as docs/grpc.md advises: level %v, p99 %v, answers %d; want the level entered",
			n, l, s.P99, s.Answers)
	}
}
