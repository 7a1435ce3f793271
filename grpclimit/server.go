package grpclimit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/internal/logsample"
	"github.com/sluice-dev/sluice/internal/sockaddr"
)

// Options configure a Server.
type Options struct {
	// Limits are the plans, global limits, keys, identity rules,
	// exemptions and header modes, with the meaning and defaults they have
	// for HTTP (see httplimit.Options), read from a call thus: the method
	// is POST and the path the call's full method ("/pkg.Service/Method"),
	// so that a plan's Costs and the Exempt list name methods as ServeMux
	// patterns ("/pkg.Service/Method", "/pkg.Service/" for all of a
	// service); headers are the call's metadata; the peer is the
	// connection's remote address, and TrustedProxies are the peers whose
	// forwarding, user and plan metadata are believed. Limits.ErrorHandler
	// must be nil: OnError says what happens when no decision can be made.
	// Limits.RefusalTemplate, the body of an HTTP refusal, is not used: a
	// refused call has no body, and its status, message and details are the
	// same with or without one. Limits.RetryJitter spreads the
	// grpc-retry-pushback-ms trailer alone, by up to a tenth of its delay
	// (grpc-go's own retries add no jitter; see PushbackOf): the other
	// figures are exact (RetryInfo, the retry-after trailer, the message),
	// and grpclimit.Retry adds a jitter of its own to RetryInfo.
	//
	// A Server and an httplimit.Middleware built with the same Scope on
	// one store share each client's state: one quota over HTTP and gRPC.
	Limits httplimit.Options
	// OnError decides a call when no decision could be made (the store
	// failed beyond its own failure policy): it returns nil to serve the
	// call anyway, or the error to answer with (a status error; any other
	// error reaches the client as UNKNOWN). Nil: serve the call (fail
	// open), so that a broken limiter never takes the service down with it;
	// the failure is logged as a warning by Limits.Logger (nil:
	// slog.Default()), at most once every 10 s, the next line counting the
	// calls left out ("left_out"). A call whose context ended before its decision (the
	// caller cancelled or its deadline passed) is no such failure: it is
	// answered with Canceled or DeadlineExceeded, without OnError.
	OnError func(ctx context.Context, fullMethod string, err error) error
}

// Server limits the calls of a gRPC server: install its interceptors with
// grpc.ChainUnaryInterceptor(s.UnaryInterceptor()) and
// grpc.ChainStreamInterceptor(s.StreamInterceptor()). A call is decided
// once, before its handler runs (a stream when it opens, whatever its
// messages); an admitted call holds its concurrency leases until its
// handler returns. It is safe for concurrent use. The zero Server limits
// nothing: it serves every call, logging (with slog's default logger) that
// it decided nothing, as New's default OnError does when a store fails.
type Server struct {
	m *httplimit.Middleware
	// log is Limits.Logger, or slog.Default().
	log     *slog.Logger
	onError func(ctx context.Context, fullMethod string, err error) error
	// warnings are the default OnError's lines (see serveUndecided).
	warnings logsample.Log
	// keys are the metadata keys the middleware reads (its
	// RequestHeaders), in lower case.
	keys []string
	// jitter is Limits.RetryJitter, which spreads the pushback.
	jitter time.Duration
	// reported: some limit counts what the answer reports
	// (httplimit.CountHeader), so the answer's metadata is read when the
	// handler returns (see recorded).
	reported bool
}

// New returns a Server that decides calls with limiter by o. It refuses
// what httplimit.New refuses, with the same field errors (naming fields
// of Options.Limits), and a Limits.ErrorHandler.
func New(limiter *sluice.Limiter, o Options) (*Server, error) {
	if o.Limits.ErrorHandler != nil {
		return nil, errors.New("grpclimit: Options.Limits.ErrorHandler is for HTTP: set Options.OnError")
	}
	limits := o.Limits
	limits.RefusalTemplate = "" // the refusal's problem gives the status and its details
	limits.RetryJitter = 0      // exact figures: the pushback alone is spread (see pushback)
	if j := o.Limits.RetryJitter; j < 0 || j > httplimit.MaxRetryJitter {
		return nil, fmt.Errorf("grpclimit: %w", &httplimit.FieldError{Field: "RetryJitter",
			Err: fmt.Errorf("%v: a jitter is between 0 and %v", j, httplimit.MaxRetryJitter)})
	}
	m, err := httplimit.New(limiter, limits)
	if err != nil {
		return nil, fmt.Errorf("grpclimit: %w", err)
	}
	s := &Server{m: m, onError: o.OnError, log: o.Limits.Logger, jitter: o.Limits.RetryJitter}
	if s.log == nil {
		s.log = slog.Default()
	}
	for _, c := range o.Limits.Count {
		s.reported = s.reported || strings.HasPrefix(c, httplimit.CountHeader)
	}
	if s.onError == nil {
		s.onError = func(ctx context.Context, method string, err error) error {
			return s.serveUndecided(ctx, s.log, method, err)
		}
	}
	for _, k := range m.RequestHeaders() {
		s.keys = append(s.keys, strings.ToLower(k))
	}
	return s, nil
}

// UnaryInterceptor returns the interceptor that limits unary calls.
//
// A call admitted by a leaky-bucket queue (a limit WithMaxWait) waits its
// turn, the decision's Delay, before its handler runs. A call whose turn
// comes after its deadline could not be answered in time: it is refused
// at once by the queue, as httplimit's Handler refuses such a request
// (see httplimit.Middleware.DecideFor), RESOURCE_EXHAUSTED with the Delay as
// its RetryInfo and the queue as its QuotaFailure, and observed as a
// refusal (httplimit.Options.Observer); it gives back what the store can
// (a fixed or sliding window's charge, with a sluice.Refunder store, and
// concurrency leases), its slot in the queue, which a bucket cannot give
// back, staying spent. A call
// whose context ends while it waits leaves the queue, answered CANCELED or
// DEADLINE_EXCEEDED, its slot spent; it has no answer, as a request that
// left httplimit's queue has none: a failure for the limits that count by
// status, and nothing used of those that count what the answer reports
// (httplimit.Options.Count).
func (s *Server) UnaryInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		done, err := s.admit(ctx, info.FullMethod, func(md metadata.MD) { grpc.SetTrailer(ctx, md) }, nil)
		if err != nil {
			return nil, err
		}
		answer, rec := 0, (*recorded)(nil) // a panic is no answer
		if s.reported {
			ctx, rec = recordUsage(ctx)
		}
		defer func() { done(answer, rec.header()) }()
		resp, err := handler(ctx, req)
		answer = answerOf(err)
		return resp, err
	}
}

// StreamInterceptor returns the interceptor that limits streams: a stream
// is one call, decided when it opens. An admitted stream carries its
// RateLimit fields in its header metadata too (sent with the handler's
// first message or header, merged with what the handler sets), so that a
// client learns its quota while the stream lasts (see Pacer). A stream
// admitted by a leaky-bucket queue waits its turn as a unary call does
// (see UnaryInterceptor), before its handler runs.
func (s *Server) StreamInterceptor() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		header := func(md metadata.MD) { ss.SetHeader(md) } // fails only once a header was sent: none was
		done, err := s.admit(ss.Context(), info.FullMethod, ss.SetTrailer, header)
		if err != nil {
			return err
		}
		answer, rec := 0, (*recorded)(nil) // a panic is no answer
		if s.reported {
			ss, rec = recordStream(ss)
		}
		defer func() { done(answer, rec.header()) }()
		err = handler(srv, ss)
		answer = answerOf(err)
		return err
	}
}

// Limit decides the call of ctx (a server handler's or server
// interceptor's context, which carries the call's method, metadata and
// peer) and returns nil when it is admitted, or the refusal: an error
// whose text is the refusal's message and whose status (status.FromError)
// is the refusal's, details included. Server thus satisfies the Limiter
// interface of go-grpc-middleware v2's ratelimit package, for services
// already built on its server interceptors. Those replace the refusal by
// a status of their own (RESOURCE_EXHAUSTED, with the refusal's message in
// its text but no details); the RateLimit trailers stay. A call admitted
// through Limit cannot give its concurrency leases back (the interface has
// no end of call): they are held until they expire; nor can its answer
// refund a limit that counts by response (httplimit.Options.Count). Prefer
// UnaryInterceptor and StreamInterceptor.
func (s *Server) Limit(ctx context.Context) error {
	method, _ := grpc.Method(ctx)
	_, err := s.admit(ctx, method, func(md metadata.MD) { grpc.SetTrailer(ctx, md) }, nil)
	if st, ok := status.FromError(err); ok && (st.Code() == codes.ResourceExhausted || st.Code() == codes.Unavailable) {
		return refused{st}
	}
	return err
}

// refused is a refusal whose text is its message alone, for interceptors
// that write it into a status of their own.
type refused struct{ st *status.Status }

func (r refused) Error() string              { return r.st.Message() }
func (r refused) GRPCStatus() *status.Status { return r.st }

// undecided handles err, the failure to decide a call of method, by
// Options.OnError, or for the zero Server by serving the call (see
// serveUndecided).
func (s *Server) undecided(ctx context.Context, method string, err error) error {
	if s.onError == nil {
		return s.serveUndecided(ctx, slog.Default(), method, err)
	}
	return s.onError(ctx, method, err)
}

// serveUndecided logs err, the failure to decide a call of method, to log
// and returns nil: the call is served. A store that fails every call is
// logged at most once per logsample.Interval, the next line counting the
// calls left out.
func (s *Server) serveUndecided(ctx context.Context, log *slog.Logger, method string, err error) error {
	s.warnings.Warn(ctx, log, "call served without a rate-limit decision", "method", method, "err", err)
	return nil
}

// admit decides the call of ctx to method and sets its RateLimit trailers
// with trailer, and an admitted call's RateLimit fields with header too
// when it is not nil. Admitted, it returns the function that ends the call with
// its answer (see answerOf) and the metadata its handler set (as a header,
// for the limits that count what it reports); refused, the refusal's
// status error.
func (s *Server) admit(ctx context.Context, method string, trailer, header func(metadata.MD)) (done func(answer int, h http.Header), err error) {
	if s.m == nil {
		err := fmt.Errorf("grpclimit: %w: the zero Server has no limiter (make one with New)", sluice.ErrStoreUnavailable)
		if err := s.undecided(ctx, method, err); err != nil {
			return nil, err
		}
		return func(int, http.Header) {}, nil
	}
	r := s.request(ctx, method)
	res, err := s.m.Decide(r)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			// The caller gave up before its decision: no failure to decide.
			return nil, status.FromContextError(cerr).Err()
		}
		if err := s.undecided(ctx, method, err); err != nil {
			return nil, err
		}
		return func(int, http.Header) {}, nil
	}
	if res.Exempt {
		s.m.Discard(res)
		return func(int, http.Header) {}, nil
	}
	if !res.Decision.Allowed {
		st, md := s.refusal(r, res)
		s.m.Discard(res)
		trailer(md)
		return nil, st.Err()
	}
	h := http.Header{}
	s.m.WriteHeaders(h, res)
	md := fields(h, res.Now)
	if res.Decision.Delay > 0 {
		if err := s.queue(ctx, res); err != nil {
			return nil, err
		}
	}
	trailer(md)
	if header != nil {
		header(md.Copy())
	}
	return func(answer int, h http.Header) { s.m.DoneWithResponse(ctx, res, answer, h) }, nil
}

// answerOf is the HTTP status that stands for a call's outcome when a
// limit counts by response (httplimit.Options.Count): OK is a success
// (200), any other code a failure, the status gRPC's HTTP mapping gives it
// (NotFound 404, Unauthenticated 401, Unavailable 503, Canceled 499…), so
// that a list of statuses (httplimit.CountStatus) can pick codes. An
// error that is no status is judged by the code grpc-go's server sends for
// it: a context's error, wrapped or not, is Canceled or DeadlineExceeded,
// any other Unknown.
func answerOf(err error) int {
	st, ok := status.FromError(err)
	if !ok {
		st = status.FromContextError(err)
	}
	return httplimit.StatusOfGRPC(uint32(st.Code()))
}

// request is the HTTP request the middleware decides for a call of ctx to
// method: POST to the method's path, the call's :authority as its host,
// the metadata the middleware reads as headers, and the peer's address.
// A call on a Unix-domain socket has the socket's address in its context
// under http.LocalAddrContextKey, as net/http's Server puts it, so that
// its peer is a Unix one (see httplimit.Options.TrustUnixPeers), whatever
// its address's text: the path the client bound its end to, which may
// read as an IP address.
func (s *Server) request(ctx context.Context, method string) *http.Request {
	p, _ := peer.FromContext(ctx)
	if p != nil && sockaddr.IsUnix(p.LocalAddr) {
		ctx = context.WithValue(ctx, http.LocalAddrContextKey, p.LocalAddr)
	}
	r := (&http.Request{Method: http.MethodPost, URL: &url.URL{Path: method}, Header: http.Header{}}).WithContext(ctx)
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		if vs := md.Get(":authority"); len(vs) > 0 {
			r.Host = vs[0]
		}
		for _, k := range s.keys {
			if vs := md.Get(k); len(vs) > 0 {
				r.Header[http.CanonicalHeaderKey(k)] = vs
			}
		}
	}
	if p != nil && p.Addr != nil {
		r.RemoteAddr = p.Addr.String()
	}
	return r
}

// fields returns the RateLimit fields of h (and Retry-After) as metadata,
// keys in lower case as gRPC sends them, with a "date" entry when it has
// any: now, the decision's time, as an HTTP-date (http.TimeFormat), which
// a client takes a Unix-time reset (the legacy X-RateLimit-Reset) relative
// to, as it does an HTTP response's Date, so that the clocks' skew does not
// matter.
func fields(h http.Header, now time.Time) metadata.MD {
	md := metadata.MD{}
	for k, vs := range h {
		lk := strings.ToLower(k)
		if strings.HasPrefix(lk, "ratelimit") || strings.HasPrefix(lk, "x-ratelimit") || lk == "retry-after" {
			md[lk] = vs
		}
	}
	if len(md) > 0 && !now.IsZero() {
		md[dateKey] = []string{now.UTC().Format(http.TimeFormat)}
	}
	return md
}

// dateKey is the metadata key of the time of a Server's decision (see
// fields).
const dateKey = "date"
