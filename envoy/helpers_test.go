package envoy_test

import (
	"context"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/memory"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// start is a time at which every unit's window begins (a multiple of 7,
// 30 and 365 days after sluice.Epoch), so fixed-window resets are exact.
var start = sluice.Epoch.Add(7 * 30 * 73 * 24 * time.Hour)

type fakeClock struct{ us atomic.Int64 }

func (c *fakeClock) Now() time.Time          { return sluice.TimeFromMicros(c.us.Load()) }
func (c *fakeClock) Advance(d time.Duration) { c.us.Add(int64(d / time.Microsecond)) }

// countingStore counts Apply calls, to show one call per request.
type countingStore struct {
	sluice.Store
	mu     sync.Mutex
	calls  int
	checks [][]sluice.Check
}

func (s *countingStore) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	s.mu.Lock()
	s.calls++
	s.checks = append(s.checks, append([]sluice.Check(nil), checks...))
	s.mu.Unlock()
	return s.Store.Apply(ctx, checks, out)
}

// Refund passes a refund to the store counted (a sluice.Refunder).
func (s *countingStore) Refund(ctx context.Context, checks []sluice.Check, charged []int64) error {
	return s.Store.(sluice.Refunder).Refund(ctx, checks, charged)
}

func (s *countingStore) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// harness is a sluice Envoy service on a real gRPC server on a loopback
// port, a real gRPC client, and a memory store on a fake clock.
type harness struct {
	t      *testing.T
	clock  *fakeClock
	store  *countingStore
	svc    *envoy.Service
	client rlsv3.RateLimitServiceClient
}

// serve loads rulesYAML and serves it with the options given (at most
// one; none: the zero Options); the clock starts at start.
func serve(t *testing.T, rulesYAML string, opts ...envoy.Options) *harness {
	t.Helper()
	rules, err := envoy.LoadRules("rules.yaml", []byte(rulesYAML))
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{}
	clock.us.Store(sluice.MicrosSinceEpoch(start))
	mem := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
	h := &harness{t: t, clock: clock, store: &countingStore{Store: mem}}
	var o envoy.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.Clock == nil {
		o.Clock = clock.Now
	}
	h.svc, err = envoy.NewService(sluice.NewLimiter(h.store), rules, o)
	if err != nil {
		t.Fatal(err)
	}
	h.client = dial(t, h.svc)
	t.Cleanup(func() { mem.Close() })
	return h
}

// dial serves svc on a loopback listener and returns a client of it.
func dial(t testing.TB, svc *envoy.Service) rlsv3.RateLimitServiceClient {
	t.Helper()
	return dialWith(t, svc)
}

// dialWith is dial with a gRPC server made with opts.
func dialWith(t testing.TB, svc *envoy.Service, opts ...grpc.ServerOption) rlsv3.RateLimitServiceClient {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(opts...)
	envoy.Register(srv, svc)
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(lis) }()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		srv.Stop()
		<-done
	})
	return rlsv3.NewRateLimitServiceClient(conn)
}

// desc builds a descriptor from key, value pairs.
func desc(kv ...string) *ratelimitv3.RateLimitDescriptor {
	d := &ratelimitv3.RateLimitDescriptor{}
	for i := 0; i+1 < len(kv); i += 2 {
		d.Entries = append(d.Entries, &ratelimitv3.RateLimitDescriptor_Entry{Key: kv[i], Value: kv[i+1]})
	}
	return d
}

// withHits sets a descriptor's own hits_addend.
func withHits(d *ratelimitv3.RateLimitDescriptor, n uint64) *ratelimitv3.RateLimitDescriptor {
	d.HitsAddend = wrapperspb.UInt64(n)
	return d
}

func request(domain string, hits uint32, ds ...*ratelimitv3.RateLimitDescriptor) *rlsv3.RateLimitRequest {
	return &rlsv3.RateLimitRequest{Domain: domain, HitsAddend: hits, Descriptors: ds}
}

// ask sends a request that must succeed.
func (h *harness) ask(req *rlsv3.RateLimitRequest) *rlsv3.RateLimitResponse {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := h.client.ShouldRateLimit(ctx, req)
	if err != nil {
		h.t.Fatalf("ShouldRateLimit: %v", err)
	}
	if len(resp.Statuses) != len(req.Descriptors) {
		h.t.Fatalf("%d statuses for %d descriptors", len(resp.Statuses), len(req.Descriptors))
	}
	return resp
}

// status is a DescriptorStatus in comparable form.
type status struct {
	code      rlsv3.RateLimitResponse_Code
	limit     string // "" when no current_limit; else "name:requests/UNIT" or "name:requests/UNITxN"
	remaining uint32
	reset     time.Duration
}

func statusOf(st *rlsv3.RateLimitResponse_DescriptorStatus) status {
	s := status{code: st.GetCode(), remaining: st.GetLimitRemaining()}
	if cl := st.GetCurrentLimit(); cl != nil {
		s.limit = cl.GetName() + ":" + strconv.FormatUint(uint64(cl.GetRequestsPerUnit()), 10) + "/" + cl.GetUnit().String()
		if m := cl.GetUnitMultiplier(); m != nil {
			s.limit += "x" + strconv.FormatUint(uint64(m.GetValue()), 10)
		}
	}
	if d := st.GetDurationUntilReset(); d != nil {
		s.reset = d.AsDuration()
	}
	return s
}

const (
	ok   = rlsv3.RateLimitResponse_OK
	over = rlsv3.RateLimitResponse_OVER_LIMIT
)

// expect checks a response's overall code and every status.
func (h *harness) expect(resp *rlsv3.RateLimitResponse, overall rlsv3.RateLimitResponse_Code, want ...status) {
	h.t.Helper()
	if resp.OverallCode != overall {
		h.t.Errorf("overall code %v, want %v", resp.OverallCode, overall)
	}
	for i, st := range resp.Statuses {
		if i >= len(want) {
			break
		}
		if got := statusOf(st); got != want[i] {
			h.t.Errorf("status %d: got %+v, want %+v", i, got, want[i])
		}
	}
}
