package client_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/client"
)

// A response a cache served (Age above 0) carries the RateLimit fields
// the origin sent when the cache stored it, not the quota now: the draft
// says they SHOULD be ignored, and a Transport learns nothing from them.
// A cached "r=0;t=60" does not hold the host for a minute.
func TestACachedResponseSaysNothingOfTheQuota(t *testing.T) {
	var calls atomic.Int64
	tr := &client.Transport{Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		h := http.Header{}
		if calls.Add(1) == 1 {
			h.Set("Age", "30")
			h.Set("RateLimit-Policy", `"hourly";q=100;w=3600`)
			h.Set("RateLimit", `"hourly";r=0;t=60`)
		}
		return &http.Response{StatusCode: http.StatusOK, Header: h, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
	})}
	for i := range 2 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.example/items", nil)
		resp, err := tr.RoundTrip(req)
		cancel()
		if err != nil {
			t.Fatalf("request %d after a cached response stating a spent quota: %v; want it sent", i+1, err)
		}
		resp.Body.Close()
	}
}
