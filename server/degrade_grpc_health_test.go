package server_test

import (
	"net/http"
	"sync/atomic"
	"testing"
)

// The methods of the gRPC health protocol (grpc.health.v1.Health's Check
// and Watch) are in the degradation class health whatever the
// configuration: every gRPC call is a POST, which level 2 sheds but for
// the class critical, and a shed health check fails Kubernetes' gRPC
// probes, which restart the loaded instance and move its load onto the
// others. They reach the upstream at every level, level 3 included, while
// the service's other gRPC methods are shed from level 2 as writes.
func TestGRPCHealthChecksAreNeverShed(t *testing.T) {
	var hits atomic.Int64
	f := newFixtureOn(t, `
plans:
  free:
    limits: [{name: per-minute, algorithm: gcra, quantity: 1000, window: 1m}]
default_plan: free
anonymous_plan: free
degradation:
  levels:
    elevated: {enter: {in_flight: 1000}}
`, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/grpc-web+proto")
		w.Header().Set("Grpc-Status", "0")
	}))
	call := func(path string) (status int, reached bool) {
		t.Helper()
		before := hits.Load()
		r := f.do(t, "POST", path, "", map[string]string{"Content-Type": "application/grpc-web+proto"})
		readAll(t, r)
		return r.StatusCode, hits.Load() > before
	}
	for _, level := range []string{"high", "critical"} {
		f.pin(t, level)
		for _, path := range []string{"/grpc.health.v1.Health/Check", "/grpc.health.v1.Health/Watch"} {
			if status, reached := call(path); !reached {
				t.Errorf("level %s, gRPC health check %s: not sent to the upstream (%d)", level, path, status)
			}
		}
		if _, reached := call("/shop.Orders/Create"); reached {
			t.Errorf("level %s: another gRPC method reached the upstream", level)
		}
	}
}
