package client_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/client"
)

// halvingServer enforces a fixed window per second, aligned to Unix
// seconds, of q requests, then of q/2 from halveAt on (as sluice's
// degradation halves its limits), and reports it in draft 7's form, which
// names no policy. Each request takes 100 ms; it notes the most it
// served at once from measureAt on.
type halvingServer struct {
	mu                 sync.Mutex
	q                  int64
	halveAt, measureAt time.Time
	second, count      int64
	inFlight, most     int
	refused            int
}

func (s *halvingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	now := time.Now()
	q := s.q
	if !now.Before(s.halveAt) {
		q /= 2
	}
	if sec := now.Unix(); sec != s.second {
		s.second, s.count = sec, 0
	}
	reset := int64(math.Ceil(time.Unix(s.second+1, 0).Sub(now).Seconds()))
	if s.count >= q {
		s.refused++
		s.mu.Unlock()
		w.Header().Set("RateLimit", fmt.Sprintf("limit=%d, remaining=0, reset=%d", q, reset))
		w.Header().Set("Retry-After", fmt.Sprint(reset))
		w.WriteHeader(http.StatusTooManyRequests)
		return
	}
	s.count++
	remaining := q - s.count
	s.inFlight++
	if !now.Before(s.measureAt) {
		s.most = max(s.most, s.inFlight)
	}
	s.mu.Unlock()
	time.Sleep(100 * time.Millisecond)
	s.mu.Lock()
	s.inFlight--
	s.mu.Unlock()
	w.Header().Set("RateLimit", fmt.Sprintf("limit=%d, remaining=%d, reset=%d", q, remaining, reset))
}

// A server that changes its limit (draft 7's fields, which name no
// policy, first say limit=8, then limit=4) is seen to report a new
// policy beside the old one. The old one, whose reset has passed and which
// answers no longer report while they report another, is forgotten once
// more units than its limit have been admitted since: the requests then go
// as many at once as the new limit has left. Before, the old policy held
// the host to one request at a time for good.
func TestAPolicyWhoseLimitChangedIsForgotten(t *testing.T) {
	start := time.Now()
	s := &halvingServer{q: 8, halveAt: start.Add(time.Second), measureAt: start.Add(3 * time.Second)}
	srv := httptest.NewServer(s)
	defer srv.Close()
	tr := &client.Transport{Retry: client.RetryPolicy{MaxRetries: -1}}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	ctx, cancel := context.WithDeadline(context.Background(), start.Add(7*time.Second))
	defer cancel()
	var wg sync.WaitGroup
	var failed atomic.Int64
	for range 4 {
		wg.Go(func() {
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
				resp, err := hc.Do(req)
				if err != nil {
					if ctx.Err() == nil && !errors.Is(err, client.ErrWaitTooLong) {
						failed.Add(1) // not a wait past the test's end
					}
					return
				}
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	t.Logf("at most %d at once from 3 s on; %d refused", s.most, s.refused)
	if s.most < 2 {
		t.Errorf("at most %d request(s) at once at the server from 3 s on, 2 s after the limit changed; want up to 3 (4 a second, a probe and the 3 it leaves)", s.most)
	}
	if s.refused > 2 || failed.Load() > 0 {
		t.Errorf("%d requests refused, %d failed; want at most 2 refused (the window's, and one when the limit changed), none failed", s.refused, failed.Load())
	}
}
