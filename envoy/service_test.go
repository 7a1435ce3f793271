package envoy_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/memory"
)

func TestInvalidRequestsAreInvalidArgument(t *testing.T) {
	h := serve(t, apiRules)
	many := make([]*ratelimitv3.RateLimitDescriptor, envoy.MaxDescriptors+1)
	for i := range many {
		many[i] = desc("client", fmt.Sprint(i))
	}
	deep := &ratelimitv3.RateLimitDescriptor{}
	for range envoy.MaxEntries + 1 {
		deep.Entries = append(deep.Entries, &ratelimitv3.RateLimitDescriptor_Entry{Key: "k", Value: "v"})
	}
	badUnit := desc("client", "c")
	badUnit.Limit = &ratelimitv3.RateLimitDescriptor_RateLimitOverride{RequestsPerUnit: 1, Unit: typev3.RateLimitUnit(7)}
	cases := []struct {
		name string
		req  *rlsv3.RateLimitRequest
		want string
	}{
		{"empty domain", request("", 0, desc("client", "c")), "domain must not be empty"},
		{"no descriptors", request("api", 0), "descriptor list must not be empty"},
		{"a descriptor without entries", request("api", 0, desc("client", "c"), desc()), "descriptor 1: invalid request: no entries"},
		{"an empty key", request("api", 0, desc("", "c")), "descriptor 0: invalid request: entry 0: empty key"},
		{"too many descriptors", request("api", 0, many...), "65 descriptors, more than 64"},
		{"too many entries", request("api", 0, deep), "33 entries, more than 32"},
		{"hits_addend beyond int64", request("api", 0, withHits(desc("client", "c"), math.MaxUint64)),
			"hits_addend 18446744073709551615 is larger than 9223372036854775807"},
		{"identical descriptors overflowing", request("api", 0, withHits(desc("client", "c"), math.MaxInt64), desc("client", "c")),
			"descriptor 1: invalid request: hits_addend of identical descriptors add up to more than 9223372036854775807"},
		{"an override with an unknown unit", request("api", 0, badUnit), "limit override: unit 7 is not one of"},
	}
	for _, c := range cases {
		_, err := h.client.ShouldRateLimit(context.Background(), c.req)
		if st, _ := grpcstatus.FromError(err); st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), c.want) {
			t.Errorf("%s: %v, want InvalidArgument with %q", c.name, err, c.want)
		}
	}
	if h.store.Calls() != 0 {
		t.Errorf("invalid requests reached the store %d times", h.store.Calls())
	}
}

func TestUnknownDomainsAndUnmatchedDescriptorsAreOK(t *testing.T) {
	h := serve(t, apiRules)
	h.expect(h.ask(request("elsewhere", 0, desc("client", "c"))), ok, status{code: ok})
	h.expect(h.ask(request("api", 0, desc("other", "c"), desc("client", "c"))), ok,
		status{code: ok}, status{ok, "per-client:5/MINUTE", 4, time.Minute})
}

type failingStore struct{}

func (failingStore) Apply(context.Context, []sluice.Check, []sluice.Status) error {
	return fmt.Errorf("redis: dial tcp 10.0.0.9:6379: %w", sluice.ErrStoreUnavailable)
}

func TestStoreErrorsAreUnavailableNotDecisions(t *testing.T) {
	rules, err := envoy.LoadRules("rules.yaml", []byte(apiRules))
	if err != nil {
		t.Fatal(err)
	}
	observed := make(chan error, 1)
	svc, err := envoy.NewService(sluice.NewLimiter(failingStore{}), rules,
		envoy.Options{Observer: func(_ *envoy.Result, _ time.Duration, err error) { observed <- err }})
	if err != nil {
		t.Fatal(err)
	}
	client := dial(t, svc)
	_, err = client.ShouldRateLimit(context.Background(), request("api", 0, desc("client", "c")))
	if st, _ := grpcstatus.FromError(err); st.Code() != codes.Unavailable || !strings.Contains(st.Message(), "store unavailable") {
		t.Errorf("got %v, want Unavailable naming the store error", err)
	}
	if st, _ := grpcstatus.FromError(<-observed); st.Code() != codes.Unavailable {
		t.Errorf("observer told %v", st.Err())
	}
	// No limit matched: the store is not asked, the answer is OK.
	if _, err := client.ShouldRateLimit(context.Background(), request("api", 0, desc("other", "c"))); err != nil {
		t.Errorf("unmatched descriptor: %v", err)
	}
}

func TestObserverSeesEveryDescriptor(t *testing.T) {
	var got []*envoy.Result
	var mu sync.Mutex
	h := serve(t, edgeRules+`
  - key: tenant
    shadow_mode: true
    rate_limit: {name: per-tenant, unit: second, requests_per_unit: 1}
  - key: internal
    rate_limit: {unlimited: true}
`, envoy.Options{Observer: func(res *envoy.Result, took time.Duration, err error) {
		if err != nil || took < 0 {
			t.Errorf("observer: took %v, err %v", took, err)
		}
		c := *res // an observer must not keep res: the Service reuses it
		c.Descriptors = slices.Clone(res.Descriptors)
		mu.Lock()
		got = append(got, &c)
		mu.Unlock()
	}})
	login := desc("remote_address", "1.2.3.4", "path", "/login")
	tenant := desc("tenant", "t")
	h.ask(request("edge", 0, tenant))
	h.ask(request("edge", 2, login))
	h.ask(request("edge", 0, login, tenant, desc("internal", "x"), desc("none", "x")))
	tenantOut := envoy.Outcome{Limit: "per-tenant", Result: "allowed", Capacity: 1, Subject: "envoy:edge:tenant=t", Fixed: true, Window: time.Second}
	loginOut := envoy.Outcome{Limit: "login", Result: "allowed", Capacity: 2, Subject: "envoy:edge:remote_address=1.2.3.4|path=/login", Fixed: true, Window: time.Minute}
	limited, shadow := loginOut, tenantOut
	limited.Result, shadow.Result = "limited", "shadow"
	want := []envoy.Result{
		{Domain: "edge", Allowed: true, Descriptors: []envoy.Outcome{tenantOut}},
		{Domain: "edge", Allowed: true, Descriptors: []envoy.Outcome{loginOut}},
		{Domain: "edge", Allowed: false, Descriptors: []envoy.Outcome{
			limited, shadow, {Limit: "internal", Result: "unlimited"}, {}}},
	}
	mu.Lock()
	defer mu.Unlock()
	for i := range want {
		if got[i].Now.IsZero() {
			t.Errorf("result %d: no time", i)
		}
		got[i].Now = time.Time{}
		for j := range got[i].Descriptors {
			o := &got[i].Descriptors[j]
			// The time to a Unix window's end: whole seconds, at most the window.
			if o.Subject != "" && (o.ResetAfter <= 0 || o.ResetAfter > o.Window || o.ResetAfter%time.Second != 0) {
				t.Errorf("result %d, descriptor %d: reset after %v of a %v window", i, j, o.ResetAfter, o.Window)
			}
			o.ResetAfter = 0
		}
		if g := fmt.Sprint(*got[i]); g != fmt.Sprint(want[i]) {
			t.Errorf("result %d: %s, want %s", i, g, fmt.Sprint(want[i]))
		}
	}
}

func TestEnvoyRulesCanUseEveryAlgorithm(t *testing.T) {
	h := serve(t, `
domain: api
descriptors:
  - key: bucket
    rate_limit: {unit: second, requests_per_unit: 1, algorithm: token-bucket, burst: 3}
  - key: log
    rate_limit: {unit: minute, requests_per_unit: 2, algorithm: sliding-window-log}
`)
	b := desc("bucket", "x")
	for i := range 3 {
		h.expect(h.ask(request("api", 0, b)), ok, status{ok, ":1/SECOND", uint32(2 - i), time.Duration(i+1) * time.Second})
	}
	h.expect(h.ask(request("api", 0, b)), over, status{over, ":1/SECOND", 0, 3 * time.Second})
	h.clock.Advance(time.Second)
	h.expect(h.ask(request("api", 0, b)), ok, status{ok, ":1/SECOND", 0, 3 * time.Second})

	// A sliding log has no boundary burst: two units at 0:59 still count at
	// 1:01, in the next fixed window.
	l := desc("log", "x")
	h.clock.Advance(58 * time.Second)
	h.ask(request("api", 2, l))
	h.clock.Advance(2 * time.Second)
	h.expect(h.ask(request("api", 0, l)), over, status{over, ":2/MINUTE", 0, 58 * time.Second})
}

func TestLeakyBucketQueueDelaysTheAnswer(t *testing.T) {
	h := serve(t, `
domain: api
descriptors:
  - key: upload
    rate_limit: {unit: second, requests_per_unit: 10, algorithm: leaky-bucket, burst: 1, max_wait: 1s}
`)
	u := desc("upload", "x")
	h.ask(request("api", 0, u))
	begin := time.Now()
	h.expect(h.ask(request("api", 0, u)), ok, status{ok, ":10/SECOND", 0, 200 * time.Millisecond})
	if took := time.Since(begin); took < 100*time.Millisecond {
		t.Errorf("queued request answered after %v, want ≥ 100ms", took)
	}
	// A turn after the call's deadline: see queue_deadline_test.go.
}

func TestReloadSwapsRulesWhileServing(t *testing.T) {
	h := serve(t, apiRules)
	stricter, err := envoy.LoadRules("v2.yaml", []byte(strings.Replace(apiRules, "requests_per_unit: 5", "requests_per_unit: 2", 1)))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 25 {
				if _, err := h.client.ShouldRateLimit(context.Background(), request("api", 0, desc("client", fmt.Sprint(g, i)))); err != nil {
					t.Error(err)
				}
			}
		})
	}
	for range 10 {
		h.svc.SetRules(stricter)
		h.svc.SetRules(h.svc.Rules())
	}
	wg.Wait()
	h.svc.SetRules(stricter)
	h.expect(h.ask(request("api", 0, desc("client", "new"))), ok, status{ok, "per-client:2/MINUTE", 1, time.Minute})
	h.svc.SetRules(nil)
	h.expect(h.ask(request("api", 0, desc("client", "new"))), ok, status{code: ok})
}

func TestConcurrentRequestsNeverOverAdmit(t *testing.T) {
	h := serve(t, `
domain: api
descriptors:
  - key: client
    rate_limit: {unit: minute, requests_per_unit: 50}
`)
	var mu sync.Mutex
	admitted := 0
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				resp, err := h.client.ShouldRateLimit(context.Background(), request("api", 0, desc("client", "shared")))
				if err != nil {
					t.Error(err)
					return
				}
				if resp.OverallCode == ok {
					mu.Lock()
					admitted++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if admitted != 50 {
		t.Errorf("%d of 160 admitted, want exactly 50", admitted)
	}
}

// TestRegisterKeepsInterceptorsWorking: requests are read into pooled
// messages only when no interceptor may keep them; with one, the
// interceptor sees each request as sent, and keeping it is safe.
func TestRegisterKeepsInterceptorsWorking(t *testing.T) {
	rules, err := envoy.LoadRules("rules.yaml", []byte(edgeRules))
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.New()
	t.Cleanup(func() { mem.Close() })
	svc, err := envoy.NewService(sluice.NewLimiter(mem), rules, envoy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var kept []*rlsv3.RateLimitRequest
	var mu sync.Mutex
	keep := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		mu.Lock()
		kept = append(kept, req.(*rlsv3.RateLimitRequest))
		mu.Unlock()
		return next(ctx, req)
	}
	for _, opts := range [][]grpc.ServerOption{
		{grpc.UnaryInterceptor(keep)},
		{grpc.UnaryInterceptor(keep), grpc.ForceServerCodecV2(envoy.Codec())},
	} {
		kept = nil
		client := dialWith(t, svc, opts...)
		for i := range 4 {
			resp, err := client.ShouldRateLimit(context.Background(), request("edge", 0, desc("remote_address", fmt.Sprint("10.0.0.", i))))
			if err != nil || resp.OverallCode != rlsv3.RateLimitResponse_OK {
				t.Fatalf("request %d: %v, %v", i, resp, err)
			}
		}
		for i, req := range kept {
			if v := req.GetDescriptors()[0].GetEntries()[0].GetValue(); v != fmt.Sprint("10.0.0.", i) {
				t.Errorf("the interceptor kept request %d, which now reads %q", i, v)
			}
		}
	}
}

// Observers see identical descriptors as their statuses report them,
// counted in turn: the one that fits is allowed, the next limited.
func TestObserverSeesIdenticalDescriptorsInTurn(t *testing.T) {
	var got []envoy.Outcome
	var mu sync.Mutex
	h := serve(t, `
domain: d
descriptors:
  - key: hits
    rate_limit: {name: hits, unit: minute, requests_per_unit: 3}
`, envoy.Options{Observer: func(res *envoy.Result, _ time.Duration, _ error) {
		mu.Lock()
		got = slices.Clone(res.Descriptors)
		mu.Unlock()
	}})
	k := desc("hits", "k")
	h.ask(request("d", 2, k, k))
	mu.Lock()
	defer mu.Unlock()
	out := envoy.Outcome{Limit: "hits", Result: "allowed", Remaining: 1, Capacity: 3, Subject: "envoy:d:hits=k", Fixed: true, Window: time.Minute, ResetAfter: time.Minute}
	limited := out
	limited.Result, limited.Remaining = "limited", 0
	if len(got) != 2 || got[0] != out || got[1] != limited {
		t.Errorf("outcomes %+v, want %+v then %+v", got, out, limited)
	}
}
