package server_test

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// A request whose client leaves before the upstream answers has no
// upstream outcome: it counts in the degradation signals as neither an
// answer (a success, diluting the error rate) nor a failure; only its
// wait is a latency (Signals.Abandoned).
func TestAbandonedRequestIsNoUpstreamAnswer(t *testing.T) {
	arrived := make(chan struct{}, 1)
	f := newFixtureOn(t, testConfig, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-r.Context().Done() // answers only once the proxy gives up
	}))
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", f.http.URL+"/api/items", nil)
	errs := make(chan error, 1)
	go func() {
		r, err := f.http.Client().Do(req)
		if err == nil {
			r.Body.Close()
		}
		errs <- err
	}()
	<-arrived
	cancel()
	if err := <-errs; err == nil {
		t.Fatal("the request the client cancelled was answered")
	}
	var answers int64
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		f.srv.SampleNow()
		s := f.srv.Degradation().Signals
		answers += s.Answers
		if s.InFlight == 0 {
			f.srv.SampleNow() // an end counted after the in-flight count fell
			answers += f.srv.Degradation().Signals.Answers
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the abandoned request is still in flight")
		}
	}
	if answers != 0 {
		t.Errorf("the abandoned request counted as %d upstream answers, want none", answers)
	}
}
