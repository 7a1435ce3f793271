package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/client"
)

// A server that states its policy (3 a second, a fixed window) and never
// what remains of it is kept to 3 a second by the client alone: a batch
// meets no 429.
func TestAPolicyStatedAloneKeepsABatchFromItsRefusals(t *testing.T) {
	var mu sync.Mutex
	var second, count int64
	var refused int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("RateLimit-Policy", `"per-second";q=3;w=1`)
		if now := time.Now().Unix(); now != second {
			second, count = now, 0
		}
		if count++; count > 3 {
			refused++
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}))
	defer srv.Close()
	tr := &client.Transport{Retry: client.RetryPolicy{MaxRetries: -1}}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := range 7 {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		resp.Body.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	if refused != 0 {
		t.Errorf("%d of 7 requests refused; want none", refused)
	}
}
