package grpclimit

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/sluice-dev/sluice/client"
)

// Pacer is a client interceptor that keeps the calls to one server within
// the server's quota, learned from the RateLimit fields of each call's
// metadata (the trailers, as a Server sends them, or the header, as sluice
// serve's proxy does), as client.Transport does for
// HTTP: it holds calls that might not fit, paces them at the rate the quota
// comes back once the burst is spent, and after a refusal holds every call
// until the refusal's RetryInfo delay is over. A server that sends no
// RateLimit fields is not limited, as any status it answers the first call
// with shows: an error (NOT_FOUND, PERMISSION_DENIED, UNAVAILABLE,
// DEADLINE_EXCEEDED, …) as well as OK, sent trailers-only or after its
// header; but not CANCELLED, nor UNAVAILABLE without a quota detail, after
// its header, which grpc-go gives a call reset by a peer or whose
// connection broke after the header as well (the call may or may not have
// been counted). CANCELLED, DEADLINE_EXCEEDED and UNAVAILABLE without a
// quota detail, in trailers without RateLimit fields (DEADLINE_EXCEEDED
// after a header without them), tell no more than that (its handler's own
// status, or a proxy's for a call that never reached the limiter): a Pacer
// that knows the server's slots stays bound by them. Two kinds of call
// say nothing of its limits and count as calls whose answer did not
// arrive, unless they carry RateLimit fields or a quota detail: a call
// whose status grpc-go made on the client's side, which comes with none
// of the server's metadata (the call failed before it was sent, on a
// message above grpc.MaxCallSendMsgSize, a marshalling or per-RPC
// credentials error; its connection failed; the answer was not gRPC's);
// and a call answered UNIMPLEMENTED, as grpc-go answers a method the
// server does not serve, before any interceptor. docs/client.md gives the
// model.
//
// A call waits before it is sent; a wait with a known end beyond MaxWait or
// the call's deadline fails at once with RESOURCE_EXHAUSTED (the error
// wrapping client.ErrWaitTooLong in its message), and a call whose context
// ends first fails with its context's error as a status. A stream is paced
// when it opens and learns from its first message's header, the server's
// answer: the stream's admission when that carries RateLimit fields (a
// Server's admitted stream), a server without limits for the stream when
// it carries none (a server without limits, a client or method the server
// exempts); a stream that ends before its first message, from its end.
// Until then it counts as in flight. A stream that ends in a refusal after
// its first message (RESOURCE_EXHAUSTED or UNAVAILABLE with a quota
// detail: the service's own) holds every call for its RetryInfo delay as
// any refusal does. A stream whose server sends no message for long, as
// the first call of a Pacer (its probe), holds the other calls for that
// long.
//
// The zero Pacer is ready to use. Set its fields before the first call and
// do not change them afterwards. It is safe for concurrent use; use one
// per server (per grpc.ClientConn), shared by every goroutine calling it.
type Pacer struct {
	// Cost returns the units a call of fullMethod spends in the server's
	// quota (make it match the server's costs); nil means 1.
	Cost func(fullMethod string) int64
	// MaxWait is the longest a call is held: 0 means
	// client.DefaultMaxWait, a negative value no bound but the deadline.
	MaxWait time.Duration
	// Exempt reports whether the server exempts calls of fullMethod from
	// its limits (make it match the server's Exempt list); nil means none
	// is. An exempt call is sent at once, held by nothing, and the Pacer
	// learns nothing from its answer, which carries no RateLimit fields:
	// without it, a Pacer whose first call is exempt (a health check)
	// takes the server for one without limits, and sends the calls that
	// follow unpaced until one of them is answered.
	Exempt func(fullMethod string) bool

	once sync.Once
	p    *client.Pacer
}

func (p *Pacer) pacer() *client.Pacer {
	p.once.Do(func() { p.p = client.NewPacer("grpc server", p.MaxWait) })
	return p.p
}

// exempt reports whether calls of method bypass the pacer (see Exempt).
func (p *Pacer) exempt(method string) bool { return p.Exempt != nil && p.Exempt(method) }

// wait holds a call of method until it may be sent.
func (p *Pacer) wait(ctx context.Context, method string) (client.Send, error) {
	cost := int64(1)
	if p.Cost != nil {
		cost = p.Cost(method)
	}
	return p.waitFor(ctx, cost)
}

// waitFor holds a call of cost units until it may be sent.
func (p *Pacer) waitFor(ctx context.Context, cost int64) (client.Send, error) {
	s, err := p.pacer().Wait(ctx, cost)
	if err != nil {
		if ctx.Err() != nil && !errors.Is(err, client.ErrWaitTooLong) {
			return s, status.FromContextError(ctx.Err()).Err()
		}
		return s, status.Error(codes.ResourceExhausted, "grpclimit: pacer: "+err.Error())
	}
	return s, nil
}

// UnaryInterceptor returns the interceptor of unary calls.
func (p *Pacer) UnaryInterceptor() grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if p.exempt(method) {
			return invoker(ctx, method, req, reply, cc, opts...)
		}
		send, err := p.wait(ctx, method)
		if err != nil {
			return err
		}
		var header, trailer metadata.MD
		// Clipped: opts may be the connection's default call options, whose
		// backing array every call of the connection shares.
		err = invoker(ctx, method, req, reply, cc, append(slices.Clip(opts), grpc.Header(&header), grpc.Trailer(&trailer))...)
		send.Done(answer(err, header, trailer, endOf(ctx, err, header, trailer)))
		return err
	}
}

// StreamInterceptor returns the interceptor of streams.
func (p *Pacer) StreamInterceptor() grpc.StreamClientInterceptor {
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		if p.exempt(method) {
			return streamer(ctx, desc, cc, method, opts...)
		}
		send, err := p.wait(ctx, method)
		if err != nil {
			return nil, err
		}
		var late client.Send
		if desc.ServerStreams {
			// Of no cost, it is held by a refusal's wait alone, which send
			// has just waited out.
			if late, err = p.waitFor(ctx, 0); err != nil {
				send.Done(client.Answer{Failed: true}) // never sent
				return nil, err
			}
		}
		cs, err := streamer(ctx, desc, cc, method, opts...)
		if err != nil {
			send.Done(answer(err, nil, nil, endedByClient))
			late.Done(client.Answer{Failed: true})
			return nil, err
		}
		s := &pacedStream{ClientStream: cs, ctx: ctx, send: send, late: late, serverStreams: desc.ServerStreams}
		s.stop = context.AfterFunc(ctx, func() {
			s.end(client.Answer{Failed: true}) // the stream is abandoned: counted or not
		})
		return s, nil
	}
}

// pacedStream finishes its Send when the server's answer is known or when
// the stream ends, whichever comes first: when RecvMsg returns the first
// message of a stream whose server streams, with its header, RateLimit
// fields or none (a Server's admitted stream, sluice serve's proxy, which
// decided the stream when it opened; a server that does not limit it; a
// long-lived stream would otherwise keep its Send, perhaps the pacer's
// probe, in flight while it lasts); otherwise however the stream ends
// (grpc.ClientConn.NewStream lists the ways): when RecvMsg first returns
// an error (io.EOF included), or its answer on a stream whose server
// sends one message (client streaming), its header and trailers are then
// known; when SendMsg fails on the client's side; when the call's context
// is done, read to its end or not. A stream whose header finished its
// Send ends it when it ends, in any of these ways: a slot of a concurrency
// quota is held while it lasts, when the header carried RateLimit fields;
// and when it ends in a refusal, the refusal is its late Send's answer
// (see ended). Ended by the server (read to its end, its status
// received), the slot is back (Send.End); ended on the client's side (its
// context done, SendMsg failed, CANCELLED, DEADLINE_EXCEEDED or
// UNAVAILABLE without a quota detail nor trailers with RateLimit fields:
// see cutShort), the server may serve
// it still, until its handler returns, and the slot is held until a probe
// after the quota's reset (Send.Cut).
type pacedStream struct {
	grpc.ClientStream
	// ctx is the call's context.
	ctx           context.Context
	serverStreams bool
	// headerRead: RecvMsg has had a message, so the header was read.
	headerRead bool
	once       sync.Once
	send       client.Send
	// streaming: the header finished the Send while the stream went on
	// (see admitted), so its end is the Send's End or Cut; set in once,
	// read after it.
	streaming bool
	// late, a Send of no cost taken with send on a stream whose server
	// streams (the zero Send otherwise), is finished when the stream ends,
	// once (lateOnce): with its end's refusal when the header finished
	// send, as a failure otherwise.
	late     client.Send
	lateOnce sync.Once
	// stop stops the watch of the call's context.
	stop func() bool
}

// end finishes the stream's Sends with a, once, or cuts the Send its
// header finished (see admitted): the client ended the stream, its
// context done or SendMsg failed, and the server may serve it still.
func (s *pacedStream) end(a client.Answer) {
	s.once.Do(func() { s.send.Done(a) })
	s.lateOnce.Do(func() { s.late.Done(client.Answer{Failed: true}) })
	if s.streaming {
		s.send.Cut()
	}
}

// ended finishes the stream's Send with its answer, err (nil or io.EOF:
// success), and its metadata (the header's RateLimit fields when it has
// some, else the header's and the trailers'), or ends the Send its header
// finished (see admitted), or cuts it when err may have ended the stream
// before its handler returned (see cutShort), and stops watching its
// context. When the header finished the Send, an end in a refusal
// (RESOURCE_EXHAUSTED or UNAVAILABLE with a quota detail: the service's
// own, after the server's answer) is the answer of the late Send, so that
// it holds the calls that follow as any refusal does.
func (s *pacedStream) ended(err error) {
	s.stop()
	if err == io.EOF {
		err = nil
	}
	s.once.Do(func() {
		var h metadata.MD
		if md, herr := s.Header(); herr == nil {
			h = md
		}
		t := s.Trailer()
		end := endOf(s.ctx, err, h, t)
		if hasRateLimit(h) {
			t = nil
		}
		s.send.Done(answer(err, h, t, end))
	})
	s.lateOnce.Do(func() {
		a := client.Answer{Failed: true}
		if s.streaming && err != nil {
			// Its status alone: the trailers of an admitted stream carry the
			// RateLimit fields of its admission, not of its end.
			if r := answer(err, nil, nil, endedByClient); r.Refused || r.Unavailable {
				a = r
			}
		}
		s.late.Done(a)
	})
	switch {
	case !s.streaming:
	case s.cutShort(err):
		s.send.Cut()
	default:
		s.send.End()
	}
}

// cutShort reports whether err, which ended the stream after the server's
// answer, may have ended it on the client's side, before the server's
// handler returned: the call's context is done, or err is CANCELLED,
// DEADLINE_EXCEEDED, or UNAVAILABLE without a quota detail (a connection
// broken), the codes grpc-go gives a stream that its caller or its
// connection ended, unless trailers with RateLimit fields came with it
// (see endOf). A status the server ended the stream with otherwise,
// or one of those codes in trailers with its RateLimit fields (its
// handler's own: an upstream timed out, a dependency down), came after its
// handler returned.
func (s *pacedStream) cutShort(err error) bool {
	if err == nil {
		return false
	}
	if s.ctx.Err() != nil {
		return true
	}
	switch status.Code(err) {
	case codes.Canceled, codes.DeadlineExceeded:
	case codes.Unavailable:
		if answer(err, nil, nil, endedByClient).Unavailable {
			return false
		}
	default:
		return false
	}
	return endOf(s.ctx, err, nil, s.Trailer()) != endedByServer
}

// An ending is what a call's context and trailers tell of who ended it by
// its status (see endOf).
type ending int

const (
	// endedByClient: the call's context is done, or no trailers came
	// (but see endedAside): grpc-go gives a call no trailers when its end
	// is its own (a context done, a connection broken, a stream reset).
	endedByClient ending = iota
	// endedAside: the context alive, trailers without RateLimit fields;
	// or no trailers, but a header without them and DEADLINE_EXCEEDED
	// without a quota detail, the call's deadline not passed (a status
	// the server sent after its header, in trailers of no metadata of
	// their own: grpc-go makes DEADLINE_EXCEEDED only of the call's
	// deadline). It is the status of the server's handler (an upstream
	// timed out, a dependency down), or of a proxy in front of it, by
	// itself, for a call that never reached the limiter or whose handler
	// may hold its slot still. It tells a Pacer that has learned nothing
	// yet that the server states no limit, and nothing of a quota
	// (client.Answer's Aside). CANCELLED and UNAVAILABLE after a header
	// without trailers are not: grpc-go makes them of a stream reset by a
	// peer (RST_STREAM) or a connection broken after the header too.
	endedAside
	// endedByServer: the context alive, trailers with RateLimit fields,
	// which a Server always sends: the server's status after its limiter
	// saw the call, its handler having returned.
	endedByServer
)

// endOf returns how a call whose context is ctx, whose status is err and
// whose header and trailers are header and trailer ended.
func endOf(ctx context.Context, err error, header, trailer metadata.MD) ending {
	switch {
	case ctx.Err() != nil:
		return endedByClient
	case len(trailer) > 0 && hasRateLimit(trailer):
		return endedByServer
	case len(trailer) > 0 || deadlineAfterHeader(ctx, err, header):
		return endedAside
	}
	return endedByClient
}

// deadlineAfterHeader reports whether err, which came without trailers,
// is the server's DEADLINE_EXCEEDED after its header, header, which has
// no RateLimit fields: err has no quota detail and ctx's deadline, if it
// has one, has not passed (grpc-go makes DEADLINE_EXCEEDED of a stream
// reset once it has).
func deadlineAfterHeader(ctx context.Context, err error, header metadata.MD) bool {
	if len(header) == 0 || hasRateLimit(header) || status.Code(err) != codes.DeadlineExceeded {
		return false
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return false
	}
	st, _ := status.FromError(err)
	for _, d := range st.Details() {
		switch d.(type) {
		case *errdetails.RetryInfo, *errdetails.QuotaFailure:
			return false
		}
	}
	return true
}

// admitted finishes the stream's Send with its header, read by now with
// its first message: the server's answer, as a unary call's is. With
// RateLimit fields (a Server's admitted stream), the stream is an admitted
// call that holds its slot of a concurrency quota until it ends: until
// the Send's End when the server ends it, or a probe after the Send's Cut
// when the client does (its context done: the server's handler may run
// on until it sees the cancellation); without them, the server does not
// limit it, and it holds none. Either way the stream goes on, and a
// refusal that ends it is its late Send's answer (see ended).
func (s *pacedStream) admitted() {
	h, err := s.Header()
	if err != nil {
		return
	}
	s.once.Do(func() {
		// A message came: the server answered, with its header's fields
		// or none (see answer, which reads no metadata as no answer).
		s.streaming = true
		s.send.Done(client.Answer{Header: httpHeader(h), Streaming: hasRateLimit(h)})
	})
}

func (s *pacedStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	switch {
	case err != nil || !s.serverStreams:
		s.ended(err)
	case !s.headerRead:
		s.headerRead = true
		s.admitted()
	}
	return err
}

// hasRateLimit reports whether md carries RateLimit fields.
func hasRateLimit(md metadata.MD) bool {
	for k := range md {
		if strings.HasPrefix(k, "ratelimit") || strings.HasPrefix(k, "x-ratelimit") {
			return true
		}
	}
	return false
}

func (s *pacedStream) SendMsg(m any) error {
	err := s.ClientStream.SendMsg(m)
	if err != nil && err != io.EOF {
		// The client's own failure (io.EOF would be the server's answer,
		// for RecvMsg): grpc-go has ended the stream, answered or not.
		s.stop()
		s.end(client.Answer{Failed: true})
	}
	return err
}

// answer is what a call's error and metadata tell the pacer: header is
// the server's header metadata and trailer its trailers, as the call's
// client stream returns them (a Server sends the RateLimit fields in its
// trailers, sluice serve's proxy in the header of an admitted call and
// again in its trailers when the service's status comes in them). A
// status the server sent comes with metadata in one or the other (at
// least the content-type of its header, or of its trailers when it was
// answered trailers-only); a status grpc-go made on the client's side
// comes with none. end tells who ended the call by its status (see endOf).
// A refusal is RESOURCE_EXHAUSTED with a quota detail (RetryInfo or
// QuotaFailure); an UNAVAILABLE without one, or a call CANCELLED or past
// its DEADLINE_EXCEEDED, is a call that may or may not have been counted
// (Failed), unless the server ended it (its handler's own status, in
// trailers with RateLimit fields: an answer), or the status came in
// trailers of the server's side, or is DEADLINE_EXCEEDED after a header
// (see endOf), and neither they nor the header carry RateLimit fields:
// an answer that tells a Pacer that has learned nothing
// yet that the server states no limit, and nothing of a quota, its call
// perhaps held by the handler still (Aside). So is a call without the
// server's metadata, or answered UNIMPLEMENTED, that has neither RateLimit
// fields nor a quota detail, Failed: it did not reach the server's limits
// (see Pacer). Any other answer came from the server.
func answer(err error, header, trailer metadata.MD, end ending) client.Answer {
	md := header
	if len(trailer) > 0 {
		md = metadata.Join(header, trailer)
	}
	var a client.Answer
	st, _ := status.FromError(err)
	quota := false
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.RetryInfo:
			quota = true
			if d.GetRetryDelay().IsValid() {
				a.RetryAfter = d.GetRetryDelay().AsDuration()
			}
		case *errdetails.QuotaFailure:
			quota = true
		}
	}
	if !quota && !hasRateLimit(md) && (len(md) == 0 || st.Code() == codes.Unimplemented) {
		return client.Answer{Failed: true}
	}
	a.Header = httpHeader(md)
	aside := end == endedAside && !hasRateLimit(md)
	switch st.Code() {
	case codes.ResourceExhausted:
		a.Refused = quota
	case codes.Unavailable:
		a.Unavailable = quota
		if !quota && end != endedByServer {
			a.Failed, a.Aside = !aside, aside
		}
	case codes.Canceled, codes.DeadlineExceeded:
		if end != endedByServer {
			a.Failed, a.Aside = !aside, aside
		}
	}
	return a
}

// httpHeader converts metadata to the HTTP fields the pacer reads (a
// Server's "date" entry to Date, which a Unix-time reset is taken relative
// to).
func httpHeader(md metadata.MD) http.Header {
	if len(md) == 0 {
		return nil
	}
	h := make(http.Header, len(md))
	for k, vs := range md {
		h[http.CanonicalHeaderKey(k)] = vs
	}
	return h
}
