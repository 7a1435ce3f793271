package client_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/client"
)

// twoWindows is a server with two fixed windows of requests' costs (the
// X-Cost header): 2 a second and 3 an hour. A request that does not fit
// both is refused with a 429 (without Retry-After) and spends nothing.
type twoWindows struct {
	mu       sync.Mutex
	second   int64 // the Unix second of perSecond's window
	perSec   int64
	perHour  int64
	attempts int
	refused  int
}

func (s *twoWindows) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var cost int64
	fmt.Sscan(r.Header.Get("X-Cost"), &cost)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.attempts++
	if now := time.Now().Unix(); now != s.second {
		s.second, s.perSec = now, 0
	}
	status := http.StatusOK
	if s.perSec+cost > 2 || s.perHour+cost > 3 {
		status = http.StatusTooManyRequests
		s.refused++
	} else {
		s.perSec, s.perHour = s.perSec+cost, s.perHour+cost
	}
	w.Header().Set("RateLimit-Policy", `"per-second";q=2;w=1, "per-hour";q=3;w=3600`)
	w.Header().Set("RateLimit", fmt.Sprintf(`"per-second";r=%d;t=1, "per-hour";r=%d;t=3600`, 2-s.perSec, 3-s.perHour))
	w.WriteHeader(status)
}

// After the per-second quota is spent, a request of cost 2 must not go at
// its reset while the per-hour quota has 1 left: the probe waits until
// every policy can take its cost, here past the request's deadline.
func TestAProbeOfCostTwoWaitsForEveryPolicyAtAServer(t *testing.T) {
	s := &twoWindows{}
	srv := httptest.NewServer(s)
	defer srv.Close()
	tr := &client.Transport{Cost: func(r *http.Request) int64 {
		var c int64
		fmt.Sscan(r.Header.Get("X-Cost"), &c)
		return c
	}}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	send := func(cost int) error {
		ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		req.Header.Set("X-Cost", fmt.Sprint(cost))
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		return resp.Body.Close()
	}
	if err := send(2); err != nil {
		t.Fatal(err)
	}
	if err := send(2); err == nil {
		t.Error("a request of cost 2 was answered, though the per-hour quota had 1 left")
	}
	if attempts, refused := func() (int, int) { s.mu.Lock(); defer s.mu.Unlock(); return s.attempts, s.refused }(); refused != 0 {
		t.Errorf("%d of %d attempts refused; want none", refused, attempts)
	}
}
