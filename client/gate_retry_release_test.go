package client

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

// A request answered 429 with Retry-After waits before its retry, and
// meanwhile it is at no server: the Transport gives back its concurrency
// Gate's slot when the answer comes, not after the wait (the throttled
// body was closed only after the sleep), so that with a Gate of one slot a
// 429 from one host does not hold every request to every other host for
// the server's Retry-After.
func TestARetrysWaitHoldsNoGateSlot(t *testing.T) {
	throttled := make(chan struct{})
	first := true
	base := roundTrip(func(r *http.Request) (*http.Response, error) {
		if r.URL.Host == "a.example" {
			if first {
				first = false
				close(throttled)
				return &http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {"3"}},
					Body: io.NopCloser(strings.NewReader("slow down")), Request: r}, nil
			}
		}
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("ok")), Request: r}, nil
	})
	tr := &Transport{Base: base, Gate: NewLocalGate(sluice.Concurrency(1, time.Minute)), IgnoreRemaining: true}

	ctxA, cancelA := context.WithCancel(context.Background())
	defer cancelA()
	doneA := make(chan struct{})
	go func() {
		defer close(doneA)
		req, _ := http.NewRequestWithContext(ctxA, "GET", "http://a.example/x", nil)
		if resp, err := tr.RoundTrip(req); err == nil {
			resp.Body.Close()
		}
	}()
	<-throttled

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://b.example/y", nil)
	start := time.Now()
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Errorf("a request to b.example, while a.example's request only waits out its 429's Retry-After of 3s: %v after %v; "+
			"want it sent at once: the waiting request holds no call at any server", err, time.Since(start).Round(time.Millisecond))
	} else {
		resp.Body.Close()
	}
	cancelA()
	<-doneA
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// The same release reaches a LimiterGate's own windows, which count a unit
// "until w after its release (the answer's arrival, as Transport
// releases)": answered 429 with Retry-After: 1, a request through a gate
// of FixedWindow(1, 1s) retries after about 1 s, not 2 (its first unit
// counted from the end of the wait).
func TestARetryThroughAWindowGateGoesWhenTheServerSays(t *testing.T) {
	n := 0
	base := roundTrip(func(r *http.Request) (*http.Response, error) {
		n++
		if n == 1 {
			return &http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {"1"}},
				Body: io.NopCloser(strings.NewReader("slow down")), Request: r}, nil
		}
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("ok")), Request: r}, nil
	})
	tr := &Transport{Base: base, Gate: NewLocalGate(sluice.FixedWindow(1, time.Second)), IgnoreRemaining: true}
	req, _ := http.NewRequest("GET", "http://a.example/x", nil)
	start := time.Now()
	resp, err := tr.RoundTrip(req)
	took := time.Since(start)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%v %v", resp, err)
	}
	resp.Body.Close()
	if took > 1600*time.Millisecond {
		t.Errorf("retry after a Retry-After of 1s through a gate of 1 per second went after %v: the first attempt's unit, "+
			"answered at once, was counted in the gate's window from the end of the wait, not from its answer", took.Round(time.Millisecond))
	}
}
