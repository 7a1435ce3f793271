package envoy_test

import (
	"context"
	"errors"
	"os"
	"strconv"
	"testing"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

const fuzzRules = edgeRules + `
  - key: tenant
    shadow_mode: true
    rate_limit: {name: per-tenant, unit: second, requests_per_unit: 1}
  - key: internal
    rate_limit: {unlimited: true}
  - key: remote_address
    value: 198.51.100.66
    rate_limit: {unit: second, requests_per_unit: 0}
  - key: bucket
    rate_limit: {unit: second, requests_per_unit: 3, algorithm: gcra, burst: 5, replaces: [{name: per-ip}]}
  - key: files
    value: f/*
    share_threshold: true
    quota_mode: true
    rate_limit: {unit: week, requests_per_unit: 2}
  - key: yearly
    rate_limit: {unit: year, requests_per_unit: 2}
`

// FuzzShouldRateLimit feeds arbitrary RateLimitRequests (protobuf wire
// bytes) to the service: it never panics, answers malformed input with
// InvalidArgument only (never a call to the limiter that sluice refuses,
// sluice.ErrInvalidCheck: the service makes the calls it makes from a
// request it accepted), and a decided request has one status per
// descriptor and is OVER_LIMIT exactly when one of its statuses is.
func FuzzShouldRateLimit(f *testing.F) {
	rules, err := envoy.LoadRules("fuzz.yaml", []byte(fuzzRules))
	if err != nil {
		f.Fatal(err)
	}
	clock := &fakeClock{}
	clock.us.Store(sluice.MicrosSinceEpoch(start))
	mem := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0), memory.WithMaxKeys(1<<14))
	svc, err := envoy.NewService(sluice.NewLimiter(mem), rules, envoy.Options{Headers: httplimit.ModeIETF})
	if err != nil {
		f.Fatal(err)
	}
	override := desc("remote_address", "1.2.3.4")
	override.Limit = &ratelimitv3.RateLimitDescriptor_RateLimitOverride{RequestsPerUnit: 2, Unit: typev3.RateLimitUnit_HOUR,
		UnitMultiplier: wrapperspb.UInt32(3)}
	for _, req := range []*rlsv3.RateLimitRequest{
		request("edge", 0, desc("remote_address", "1.2.3.4"), desc("remote_address", "1.2.3.4", "path", "/login")),
		request("edge", 7, desc("tenant", "t"), desc("internal", "x"), withHits(desc("bucket", "b"), 0)),
		request("edge", 3, desc("files", "f/a"), withHits(desc("files", "f/b"), 0), desc("yearly", "y")),
		request("edge", 0, desc("remote_address", "198.51.100.66"), desc("remote_address", "10.1.9.9")),
		request("edge", 1, override, desc("remote_address", "a|b=c:{d}%")),
		request("", 0, desc("k", "v")),
		request("edge", 0, desc()),
		request("edge", 0, manyPeeks()...),
	} {
		f.Add(must(proto.Marshal(req)))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var req rlsv3.RateLimitRequest
		if proto.Unmarshal(data, &req) != nil {
			return
		}
		clock.Advance(1000) // a millisecond per request
		resp, err := svc.ShouldRateLimit(context.Background(), &req)
		if err != nil {
			if st, _ := grpcstatus.FromError(err); st.Code() != codes.InvalidArgument || st.Message() == "" {
				t.Fatalf("error %v, want InvalidArgument with a message", err)
			}
			if errors.Is(err, sluice.ErrInvalidCheck) {
				t.Fatalf("the service made a call the limiter refuses: %v", err)
			}
			return
		}
		if len(resp.Statuses) != len(req.Descriptors) {
			t.Fatalf("%d statuses for %d descriptors", len(resp.Statuses), len(req.Descriptors))
		}
		anyOver := false
		for _, st := range resp.Statuses {
			anyOver = anyOver || st.Code == rlsv3.RateLimitResponse_OVER_LIMIT
		}
		if anyOver != (resp.OverallCode == rlsv3.RateLimitResponse_OVER_LIMIT) {
			t.Fatalf("overall %v with statuses %v", resp.OverallCode, resp.Statuses)
		}
	})
	mem.Close()
}

// FuzzLoadRules: any input either loads into at least one domain or is
// refused with located *envoy.Error values; it never panics.
func FuzzLoadRules(f *testing.F) {
	f.Add([]byte(fuzzRules))
	f.Add(must(os.ReadFile("../examples/envoy/ratelimit-config.yaml")))
	f.Add([]byte("domain: a\n---\ndomain: b\ndescriptors: [{key: k, value: 'v*', rate_limit: {unlimited: true}}]\n"))
	f.Add([]byte("domain: a\ndescriptors:\n  - key: k\n    rate_limit: {unit: Year, requests_per_unit: 0}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rules, err := envoy.LoadRules("fuzz.yaml", data)
		if err != nil {
			errs := envoy.Errors(err)
			if len(errs) == 0 {
				t.Fatalf("%v: not an *envoy.Error", err)
			}
			for _, e := range errs {
				if e.File != "fuzz.yaml" || e.Line < 0 || e.Msg == "" {
					t.Fatalf("unlocated error %+v", e)
				}
			}
			return
		}
		if len(rules.Domains()) == 0 {
			t.Fatal("loaded without a domain")
		}
	})
}

// manyPeeks is MaxDescriptors peeks (hits_addend 0) at fixed windows, each
// of which reads its window's over-limit record too.
func manyPeeks() []*ratelimitv3.RateLimitDescriptor {
	ds := make([]*ratelimitv3.RateLimitDescriptor, envoy.MaxDescriptors)
	for i := range ds {
		ds[i] = withHits(desc("remote_address", strconv.Itoa(i)), 0)
	}
	return ds
}
