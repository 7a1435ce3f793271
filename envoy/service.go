package envoy

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sluice-dev/sluice"
)

// Service is an Envoy rate limit service (RLS v3): it implements
// envoy.service.ratelimit.v3.RateLimitService on a sluice.Limiter with the
// rules it holds. Register it on a gRPC server with Register. Service is safe
// for concurrent use; SetRules swaps its rules, and SetHeaders its
// response headers, atomically while it serves (requests in flight finish
// with those they started with). The zero
// Service has no limiter: ShouldRateLimit answers gRPC code Unavailable
// (Envoy's failure_mode_deny then decides) and Rules is nil. Make one with
// NewService.
type Service struct {
	rlsv3.UnimplementedRateLimitServiceServer

	limiter *sluice.Limiter
	rules   atomic.Pointer[Rules]
	headers atomic.Pointer[headerNames]
	observe func(res *Result, took time.Duration, err error)
	now     func() time.Time
	log     *slog.Logger
	marks   marks
	// scratch pools the per-request memory that does not leave a call;
	// requests the messages that Register's handler reads requests into.
	scratch  sync.Pool
	requests sync.Pool
}

// scratch is one request's working memory: its plan, its decision and what
// observers see. Nothing in it outlives the call: the response is
// allocated apart, for gRPC to marshal after the handler returns.
type scratch struct {
	plan   plan
	d      sluice.Decision
	settle sluice.Decision
	res    Result
}

// NewService returns a Service deciding with limiter under rules (nil: no
// rules yet, every request is OK until SetRules), configured by o; it
// refuses invalid options with a *FieldError (see Options.Validate).
// limiter's Store, including any failure policy wrapped around it, decides
// what a store outage means; an error that still comes out is answered
// with gRPC code Unavailable.
func NewService(limiter *sluice.Limiter, rules *Rules, o Options) (*Service, error) {
	if limiter == nil {
		return nil, errors.New("envoy: nil limiter")
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	o = o.WithDefaults()
	s := &Service{limiter: limiter, observe: o.Observer, now: o.Clock, log: o.Logger}
	s.headers.Store(headersOf(o))
	s.scratch.New = func() any { return new(scratch) }
	s.SetRules(rules)
	return s, nil
}

// SetHeaders replaces the response headers the service adds with those of
// o's Headers, LimitHeader, RemainingHeader and ResetHeader, for the
// requests that arrive afterwards; o's other fields are NewService's only
// and are ignored. It refuses what NewService refuses of those fields (a
// *FieldError, see Options.Validate), and then changes nothing.
func (s *Service) SetHeaders(o Options) error {
	o = Options{Headers: o.Headers, LimitHeader: o.LimitHeader, RemainingHeader: o.RemainingHeader, ResetHeader: o.ResetHeader}
	if err := o.Validate(); err != nil {
		return err
	}
	s.headers.Store(headersOf(o.WithDefaults()))
	return nil
}

// headersOf returns the header names of o, whose defaults are set
// (Options.WithDefaults), with mode "" for none.
func headersOf(o Options) *headerNames {
	h := &headerNames{mode: o.Headers, limit: o.LimitHeader, remaining: o.RemainingHeader, reset: o.ResetHeader}
	if h.mode == modeNone {
		h.mode = ""
	}
	return h
}

// Register registers svc as the RateLimitService of srv (a *grpc.Server).
// Make srv with grpc.ForceServerCodecV2(Codec()): see Codec for why.
//
// The service is registered as rlsv3.RegisterRateLimitServiceServer would,
// except that, without an interceptor, a call reads its request into a
// message that an earlier call used (with Codec, the descriptor and entry
// messages too) instead of a new one.
func Register(srv grpc.ServiceRegistrar, svc *Service) {
	srv.RegisterService(&serviceDesc, svc)
}

// serviceDesc is rlsv3.RateLimitService_ServiceDesc with
// handleShouldRateLimit as the handler of ShouldRateLimit.
var serviceDesc = func() grpc.ServiceDesc {
	d := rlsv3.RateLimitService_ServiceDesc
	d.Methods = slices.Clone(d.Methods)
	for i := range d.Methods {
		if d.Methods[i].MethodName == "ShouldRateLimit" {
			d.Methods[i].Handler = handleShouldRateLimit
		}
	}
	return d
}()

// generatedHandler returns the generated handler of ShouldRateLimit.
func generatedHandler() grpc.MethodHandler {
	for _, m := range rlsv3.RateLimitService_ServiceDesc.Methods {
		if m.MethodName == "ShouldRateLimit" {
			return m.Handler
		}
	}
	return func(any, context.Context, func(any) error, grpc.UnaryServerInterceptor) (any, error) {
		return nil, status.Error(codes.Unimplemented, "ShouldRateLimit")
	}
}

// handleShouldRateLimit is the gRPC handler of ShouldRateLimit. With an
// interceptor, which may keep the request, it is the generated one;
// otherwise the request is read into a pooled message, which nothing
// keeps once ShouldRateLimit returns (the plan, the decision and the
// response hold copies of what they need).
func handleShouldRateLimit(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
	s, ok := srv.(*Service)
	if !ok || interceptor != nil {
		return generatedHandler()(srv, ctx, dec, interceptor)
	}
	req, _ := s.requests.Get().(*rlsv3.RateLimitRequest)
	if req == nil {
		req = new(rlsv3.RateLimitRequest)
	}
	defer s.releaseRequest(req)
	if err := dec(req); err != nil {
		return nil, err
	}
	return s.ShouldRateLimit(ctx, req)
}

// releaseRequest returns req to the pool without the strings of the call,
// keeping its messages; a request
// beyond MaxDescriptors or MaxEntries, which was refused, is left to the
// garbage collector with all it holds.
func (s *Service) releaseRequest(req *rlsv3.RateLimitRequest) {
	if len(req.Descriptors) > MaxDescriptors {
		return
	}
	for _, d := range req.Descriptors {
		if len(d.GetEntries()) > MaxEntries {
			return
		}
	}
	req.Domain = ""
	for _, d := range req.Descriptors {
		for _, e := range d.GetEntries() {
			if e != nil {
				e.Key, e.Value = "", ""
			}
		}
	}
	s.requests.Put(req)
}

// SetRules replaces the rules: requests that arrive afterwards use r. nil
// means no rules (every request is OK). State is kept per domain,
// descriptor entries, unit and algorithm, not per limit name, as
// envoyproxy/ratelimit names its counters by the domain, the entries and
// the window: a rule that is named, renamed or given another
// requests_per_unit keeps its clients' counts across a reload, each
// decided against the new limit (a count past a lowered limit is over it,
// to a peek too; a window that went over a limit that is raised counts on
// from that limit, without the refused hits that envoyproxy/ratelimit
// counts), while a rule of another unit or algorithm starts afresh.
func (s *Service) SetRules(r *Rules) {
	if r == nil {
		r = &Rules{}
	}
	log := cmp.Or(s.log, slog.Default())
	for _, p := range r.skipped {
		log.Warn("envoy rules: a link to nothing is skipped", "path", p)
	}
	s.rules.Store(r)
}

// Rules returns the rules in use.
func (s *Service) Rules() *Rules { return s.rules.Load() }

// ShouldRateLimit decides one request: every descriptor that a rule limits
// becomes a sluice.Check and all of them are decided in one Limiter.Allow
// call, all or nothing. A malformed request is answered with gRPC code
// InvalidArgument; a store error with Unavailable; a store call that
// fails once ctx is cancelled or past its deadline with Canceled or
// DeadlineExceeded (a store that does not wait, as the memory store,
// decides whatever ctx's state, and a decided request is answered its
// decision). Admitted requests that a leaky-bucket queue delays are
// answered after the delay, when their turn starts by ctx's deadline
// (Envoy's filter timeout) or ctx has none, or ctx's error if ctx
// ends while they wait; a turn that starts after the deadline is
// answered OVER_LIMIT at once, its descriptor's duration_until_reset and
// Retry-After at least the delay (see refuseLate).
func (s *Service) ShouldRateLimit(ctx context.Context, req *rlsv3.RateLimitRequest) (*rlsv3.RateLimitResponse, error) {
	if s.limiter == nil {
		return nil, status.Error(codes.Unavailable, "envoy: the zero Service has no limiter (make one with NewService)")
	}
	start := time.Now()
	sc := s.scratch.Get().(*scratch)
	now := s.now()
	domain := req.GetDomain()
	if len(domain) > MaxDomainBytes { // refused: observers are told its start
		domain = domain[:MaxDomainBytes]
	}
	sc.res = Result{Domain: domain, Descriptors: sc.res.Descriptors[:0], Now: now}
	resp, delay, err := s.decide(ctx, req, sc, now)
	if s.observe != nil {
		s.observe(&sc.res, time.Since(start), err)
	}
	s.release(sc)
	if err != nil {
		return nil, err
	}
	if delay > 0 {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, status.FromContextError(ctx.Err()).Err()
		}
	}
	return resp, nil
}

// release returns sc to the pool, without the references it holds into
// the request and the rules.
func (s *Service) release(sc *scratch) {
	clear(sc.plan.slots)
	clear(sc.plan.checks)
	clear(sc.plan.batch)
	clear(sc.plan.gives)
	sc.res.Domain = ""
	clear(sc.res.Descriptors)
	s.scratch.Put(sc)
}

func (s *Service) decide(ctx context.Context, req *rlsv3.RateLimitRequest, sc *scratch, now time.Time) (*rlsv3.RateLimitResponse, time.Duration, error) {
	p, d := &sc.plan, &sc.d
	if err := p.build(s.rules.Load(), req, now); err != nil {
		return nil, 0, &notDecided{status.New(codes.InvalidArgument, err.Error()), err}
	}
	*d = sluice.Decision{Statuses: d.Statuses[:0], Violated: d.Violated[:0]}
	if len(p.gives) > 0 {
		if err := p.peekGives(ctx, s.limiter, &sc.settle); err != nil {
			return nil, 0, grpcError(ctx, err)
		}
	}
	if len(p.checks) > 0 {
		over, err := p.peekOver(ctx, s.limiter, d, &sc.settle)
		if err == nil && !over {
			*d = sluice.Decision{Statuses: d.Statuses[:0], Violated: d.Violated[:0]}
			err = p.decide(ctx, s.limiter, d, &sc.settle)
		}
		if err != nil {
			return nil, 0, grpcError(ctx, err)
		}
		s.refuseLate(ctx, p, d)
		p.settle(ctx, s.limiter, now, d, &sc.settle, &s.marks)
	}
	if len(p.gives) > 0 {
		p.giveBack(ctx, s.limiter, now, d, &sc.settle)
	}
	parts := newResponseParts(len(p.slots))
	resp := p.response(d, parts)
	sc.res.fill(p, d, resp)
	if h := s.headers.Load(); h != nil && h.mode != "" {
		resp.ResponseHeadersToAdd = p.headers(h, d, resp.OverallCode, parts)
	}
	if resp.OverallCode != rlsv3.RateLimitResponse_OK {
		return resp, 0, nil
	}
	return resp, d.Delay, nil
}

// grpcError is the error of a request whose decision failed with err: the
// caller's context's (Canceled, DeadlineExceeded) when it left, else
// InvalidArgument for an invalid check, else Unavailable; it wraps its
// cause (see notDecided).
func grpcError(ctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil:
		return &notDecided{status.FromContextError(ctx.Err()), ctx.Err()}
	case errors.Is(err, sluice.ErrInvalidCheck):
		return &notDecided{status.New(codes.InvalidArgument, err.Error()), err}
	}
	return &notDecided{status.New(codes.Unavailable, err.Error()), err}
}

// notDecided is the error of a request that was not decided: its gRPC
// status, which Envoy is answered, wrapping its cause, which observers
// can tell apart with errors.Is (the caller left: context.Canceled,
// context.DeadlineExceeded; the store failed: sluice.ErrStoreUnavailable).
type notDecided struct {
	st    *status.Status
	cause error
}

func (e *notDecided) Error() string              { return e.st.Err().Error() }
func (e *notDecided) GRPCStatus() *status.Status { return e.st }
func (e *notDecided) Unwrap() error              { return e.cause }
