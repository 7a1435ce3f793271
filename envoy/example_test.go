package envoy_test

import (
	"context"
	"fmt"
	"log"
	"time"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/memory"
)

// A rate limit service for Envoy: rules in envoyproxy/ratelimit's format,
// one of them on a token bucket, served over gRPC.
func ExampleNewService() {
	rules, err := envoy.LoadRules("ratelimit-config.yaml", []byte(`
domain: edge
descriptors:
  - key: remote_address
    rate_limit: {name: per-ip, unit: second, requests_per_unit: 2, algorithm: token-bucket, burst: 3}
`))
	if err != nil {
		log.Fatal(err) // file:line:col: field path: what is wrong
	}
	// The store's clock stands still here, so what it prints does not
	// depend on how fast the example runs; a program leaves WithClock out.
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	store := memory.New(memory.WithClock(func() time.Time { return at }))
	defer store.Close()
	svc, err := envoy.NewService(sluice.NewLimiter(store), rules, envoy.Options{}) // ietf RateLimit headers
	if err != nil {
		log.Fatal(err)
	}
	srv := grpc.NewServer()
	envoy.Register(srv, svc) // then srv.Serve(listener); svc.SetRules(newRules) on reload

	// What Envoy sends for a client at 203.0.113.7 (called directly here).
	req := request("edge", 0, desc("remote_address", "203.0.113.7"))
	for range 4 {
		resp, err := svc.ShouldRateLimit(context.Background(), req)
		if err != nil {
			log.Fatal(err)
		}
		st := resp.Statuses[0]
		fmt.Println(resp.OverallCode, st.CurrentLimit.Name, st.CurrentLimit.RequestsPerUnit, st.CurrentLimit.Unit, st.LimitRemaining)
	}
	// Output:
	// OK per-ip 2 SECOND 2
	// OK per-ip 2 SECOND 1
	// OK per-ip 2 SECOND 0
	// OVER_LIMIT per-ip 2 SECOND 0
}

var _ rlsv3.RateLimitServiceServer = (*envoy.Service)(nil)
