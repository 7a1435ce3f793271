package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sluice-dev/sluice/degrade"
	"github.com/sluice-dev/sluice/grpclimit"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/internal/grpcweb"
)

// grpcReplyType returns the Content-Type of sluice's own answers to r when
// r is a gRPC call: application/grpc for gRPC, and for gRPC-Web the
// request's own media type (application/grpc-web, application/grpc-web-text
// and their +proto, +json… forms), whose clients read a trailers-only
// answer from the response's headers as gRPC clients do. It returns "" for
// any other request. It reads the first Content-Type field: the limits
// (httplimit's Handler) refuse a request whose fields differ, with a 400,
// before the upstream could read another.
func grpcReplyType(r *http.Request) string {
	media, base := grpcweb.Media(r.Header.Get("Content-Type"))
	switch base {
	case "application/grpc":
		return "application/grpc"
	case "application/grpc-web", "application/grpc-web-text":
		return media
	}
	return ""
}

// grpcTrailed reports whether resp, the upstream's answer, is a gRPC
// answer whose status comes in trailers after its messages: the answer to
// a gRPC call (application/grpc, not gRPC-Web, whose status is in the
// body) over HTTP/2, of type application/grpc, and not trailers-only (its
// header carries no grpc-status).
func grpcTrailed(resp *http.Response) bool {
	_, base := grpcweb.Media(resp.Header.Get("Content-Type"))
	return base == "application/grpc" && resp.Request.ProtoMajor == 2 &&
		grpcReplyType(resp.Request) == "application/grpc" && len(resp.Header["Grpc-Status"]) == 0
}

// grpcAnswerType reports whether contentType, an answer's, is a gRPC or
// gRPC-Web one: application/grpc, application/grpc-web or
// application/grpc-web-text, with or without a +suffix and parameters.
func grpcAnswerType(contentType string) bool {
	switch _, base := grpcweb.Media(contentType); base {
	case "application/grpc", "application/grpc-web", "application/grpc-web-text":
		return true
	}
	return false
}

// grpcExposed are the headers of a trailers-only answer that a gRPC-Web
// page of another origin must be let read (see corsPolicy).
const grpcExposed = "Grpc-Status, Grpc-Message, Grpc-Status-Details-Bin"

// maxGRPCRefusal bounds the refusal body a grpcAnswer reads, in bytes.
const maxGRPCRefusal = 64 << 10

// grpcAnswer answers a gRPC or gRPC-Web call as their clients read
// answers: what sluice answers itself (a refusal, a degraded level's 503, a
// bad request, the proxy's own 400, 408, 502 and 504) becomes a
// trailers-only response — HTTP 200, the status in grpc-status,
// grpc-message and grpc-status-details-bin (google.rpc.Status with a
// RetryInfo of Retry-After, a QuotaFailure naming the violated limits as
// the problem's Violations describe them, and
// Help links to the upgrade and the documentation) — with the
// answer's other headers (RateLimit, Retry-After) as metadata; the
// upstream's answers pass as they are. A gRPC client would read sluice's
// own 429 as UNAVAILABLE with no detail. A refusal (see refusal) also
// carries grpc-retry-pushback-ms, the one word of the server that gRPC's
// own retries (a service config's retryPolicy) heed.
type grpcAnswer struct {
	http.ResponseWriter
	sw *statusWriter // protect's: knows whether the upstream answers
	// contentType is the answer's (see grpcReplyType).
	contentType string
	// deadline is the call's (grpcCallDeadline; zero: none), which a
	// refusal's pushback heeds, and past which the call's outcome is its
	// caller's (pastDeadline).
	deadline time.Time
	// code is the HTTP status of sluice's own answer being turned into a
	// gRPC status (0: none), body its problem.
	code int
	body []byte
}

// WriteHeader holds back sluice's own answer of status 400 or above, to
// turn it into a gRPC status (finish): a refusal, a degraded level's 503,
// and the proxy's own 400, 408, 502 and 504 (markOwn). The upstream's
// answer, which it passes on, is the caller's outcome when it starts at or
// after the call's deadline (pastDeadline): the monitor counts its latency,
// not its outcome (degrade.Abandoned).
func (g *grpcAnswer) WriteHeader(code int) {
	if g.code == 0 && (!g.sw.upstream || g.sw.own) && code >= 400 {
		g.code = code
		if g.sw.upstream && g.pastDeadline() {
			g.sw.late = true
		}
		return
	}
	if g.sw.upstream && !g.sw.own && g.pastDeadline() {
		g.sw.late = true
	}
	g.ResponseWriter.WriteHeader(code)
}

// pastDeadline reports whether the call's deadline (its grpc-timeout) has
// passed: an outcome arriving now is the caller's choice of how long to
// wait, as a call it cancels is, not the upstream's failure. A healthy
// gRPC server gives a call up at its deadline (grpc-go resets the stream),
// so a caller's deadline shorter than the work would otherwise make any
// caller's calls the upstream's failures. False for a call without one.
func (g *grpcAnswer) pastDeadline() bool {
	return !g.deadline.IsZero() && !time.Now().Before(g.deadline)
}

func (g *grpcAnswer) Write(b []byte) (int, error) {
	if g.code != 0 {
		if len(g.body) < maxGRPCRefusal {
			g.body = append(g.body, b[:min(len(b), maxGRPCRefusal-len(g.body))]...)
		}
		return len(b), nil
	}
	return g.ResponseWriter.Write(b)
}

// Unwrap returns the writer beneath, for http.ResponseController.
func (g *grpcAnswer) Unwrap() http.ResponseWriter { return g.ResponseWriter }

// finish writes sluice's own answer, if there is one, as a gRPC status.
func (g *grpcAnswer) finish() {
	if g.code == 0 {
		return
	}
	var p httplimit.Problem
	if json.Unmarshal(g.body, &p) != nil || p.Detail == "" {
		p = httplimit.Problem{Detail: http.StatusText(g.code)} // a template's body, or none
	}
	h := g.Header()
	code := grpcCode(g.code)
	if g.sw.late {
		// The proxy's own failure (502, 504) or a stalled request stream
		// (408) after the call's deadline: the caller's client reads its
		// deadline's passing, as it would had the upstream answered so.
		code = codes.DeadlineExceeded
		p.Detail = "The call's deadline (its grpc-timeout) passed before the upstream service answered."
	}
	st := status.New(code, p.Detail)
	var details []protoadapt.MessageV1
	if s, err := strconv.ParseInt(h.Get("Retry-After"), 10, 64); err == nil && s > 0 {
		details = append(details, &errdetails.RetryInfo{RetryDelay: durationpb.New(time.Duration(s) * time.Second)})
	}
	if len(p.ViolatedPolicies) > 0 {
		qf := &errdetails.QuotaFailure{}
		for _, name := range p.ViolatedPolicies {
			qf.Violations = append(qf.Violations, quotaViolation(&p, name))
		}
		details = append(details, qf)
	}
	if help := grpclimit.HelpOf(&p); help != nil {
		details = append(details, help)
	}
	if withDetails, err := st.WithDetails(details...); err == nil {
		st = withDetails
	}
	for _, name := range []string{"Content-Length", "Content-Type", "X-Content-Type-Options"} {
		h.Del(name)
	}
	h.Set("Content-Type", g.contentType)
	h.Set("Grpc-Status", strconv.Itoa(int(st.Code())))
	h.Set("Grpc-Message", grpcMessage(st.Message()))
	if b, err := proto.Marshal(st.Proto()); err == nil {
		h.Set("Grpc-Status-Details-Bin", base64.RawStdEncoding.EncodeToString(b))
	}
	if g.refusal() {
		h.Set("Grpc-Retry-Pushback-Ms", g.pushback(st))
	}
	if g.sw.upstream {
		g.ownOutcome()
	}
	g.ResponseWriter.WriteHeader(http.StatusOK)
}

// refusal reports whether the answer finish turns into a gRPC status is
// one of sluice's refusals, made before the upstream was reached: the
// limits' 429 or 503 (a limit's, the penalty box's, the global limits',
// the store's under on_store_error deny) or a degraded level's 503. The
// proxy's own 400, 408, 502 and 504 (markOwn) are none: they are failures
// that a retry may cure, which a pushback of -1 would tell not to be
// retried; nor is a bad request.
func (g *grpcAnswer) refusal() bool {
	return !g.sw.upstream && (g.code == http.StatusTooManyRequests || g.code == http.StatusServiceUnavailable)
}

// pushback returns the grpc-retry-pushback-ms of st, sluice's refusal of
// the call: grpclimit.PushbackOf for the call's deadline, so the
// RetryInfo delay in whole milliseconds, or -1 (do not retry) when st has
// no RetryInfo or its delay ends at or after the deadline.
func (g *grpcAnswer) pushback(st *status.Status) string {
	ctx := context.Background()
	if !g.deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, g.deadline)
		defer cancel()
	}
	return grpclimit.PushbackOf(ctx, st)
}

// grpcCallDeadline returns the deadline of r that its caller set, from
// now: a gRPC or gRPC-Web call's (grpcReplyType), its grpc-timeout header,
// as gRPC over HTTP/2 defines it — 1 to 8 ASCII digits and a unit, H, M,
// S, m (milliseconds), u (microseconds) or n (nanoseconds); a Connect
// call's (grpcweb.Connect), its Connect-Timeout-Ms header, as connect-go reads
// it — up to 10 characters of a base-10 integer of milliseconds (a
// negative one: a deadline already past). It returns the zero time, no
// deadline, for any other request, for a call without the header, with a
// malformed one, or with a timeout longer than a time.Duration holds
// (centuries: past any delay a pushback can state). It reads the first
// field, as the limits do: they refuse a call whose fields differ, with a
// 400, before the upstream could obey another (grpc-go obeys the last
// grpc-timeout).
func grpcCallDeadline(r *http.Request) time.Time {
	if grpcReplyType(r) == "" {
		if v := r.Header.Get("Connect-Timeout-Ms"); v != "" && len(v) <= 10 && grpcweb.Connect(r.Header) {
			if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
				return time.Now().Add(time.Duration(ms) * time.Millisecond)
			}
		}
		return time.Time{}
	}
	v := r.Header.Get("Grpc-Timeout")
	if len(v) < 2 || len(v) > 9 {
		return time.Time{}
	}
	i := strings.IndexByte("HMSmun", v[len(v)-1])
	n, err := strconv.ParseUint(v[:len(v)-1], 10, 64) // digits only: no sign
	if i < 0 || err != nil {
		return time.Time{}
	}
	unit := [...]time.Duration{time.Hour, time.Minute, time.Second, time.Millisecond, time.Microsecond, time.Nanosecond}[i]
	if n > uint64(math.MaxInt64/unit) {
		return time.Time{}
	}
	return time.Now().Add(time.Duration(n) * unit)
}

// grpcFailed reports whether a gRPC call's status code is the upstream's
// failure for the degradation signals: StatusOfGRPC ≥ 500 (Internal,
// Unavailable, DeadlineExceeded, Unknown, DataLoss…) but Unimplemented,
// which says that the service has no such method, the caller's choice, as
// an HTTP 404 does.
func grpcFailed(code uint32) bool {
	return code != uint32(codes.Unimplemented) && httplimit.StatusOfGRPC(code) >= 500
}

// ownOutcome tells the monitor the outcome of the proxy's own answer
// (markOwn) that finish turns into a gRPC status: its HTTP status, as for
// any other request (a 502 or 504 the upstream's failure, a 400 or 408 the
// client's), and not the call's grpc-status, by which a stalled request
// stream (DEADLINE_EXCEEDED) would count as the upstream's failure; when
// it came at or after the call's deadline (statusWriter.late), the
// caller's outcome, degrade.Abandoned: its latency, to the deadline, is a
// lower bound of the upstream's. The answer is then no longer the
// upstream's (grpcOutcome reads none).
func (g *grpcAnswer) ownOutcome() {
	if end := g.sw.end; end != nil {
		g.sw.end = nil
		status := g.code
		if g.sw.late {
			status = degrade.Abandoned
		}
		end(status)
	}
	g.sw.upstream = false
}

// quotaViolation is the QuotaFailure violation of the limit named name in
// the refusal p: its quota id the name, its metric "requests", and the
// description and quota value p.Violations give it (httplimit.Violation, as
// grpclimit states them); none when p has no word of it (the penalty box's
// refusal, a problem from elsewhere).
func quotaViolation(p *httplimit.Problem, name string) *errdetails.QuotaFailure_Violation {
	v := &errdetails.QuotaFailure_Violation{QuotaId: name, QuotaMetric: "requests"}
	for _, pv := range p.Violations {
		if pv.Policy == name {
			v.Description, v.QuotaValue = pv.Description, pv.Quantity
			break
		}
	}
	return v
}

// grpcCode is the gRPC status of one of sluice's own HTTP answers.
func grpcCode(httpStatus int) codes.Code {
	switch httpStatus {
	case http.StatusTooManyRequests:
		return codes.ResourceExhausted
	case http.StatusServiceUnavailable, http.StatusBadGateway:
		return codes.Unavailable
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusRequestHeaderFieldsTooLarge:
		return codes.InvalidArgument
	case http.StatusRequestTimeout, http.StatusGatewayTimeout:
		return codes.DeadlineExceeded
	case http.StatusUnauthorized:
		return codes.Unauthenticated
	case http.StatusForbidden:
		return codes.PermissionDenied
	}
	return codes.Unknown
}

// grpcMessage percent-encodes msg as grpc-message asks: bytes outside
// printable ASCII, and '%'.
func grpcMessage(msg string) string {
	var b strings.Builder
	for i := 0; i < len(msg); i++ {
		c := msg[i]
		if c >= ' ' && c <= '~' && c != '%' {
			b.WriteByte(c)
			continue
		}
		b.WriteString("%" + strings.ToUpper(strconv.FormatUint(uint64(c)|0x100, 16)[1:]))
	}
	return b.String()
}
