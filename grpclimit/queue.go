package grpclimit

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sluice-dev/sluice/httplimit"
)

// queue waits out the Delay of res, a call admitted by a leaky-bucket
// queue, before its handler runs. A call whose turn comes after its
// deadline is refused at once (see tooLate); one whose context ends while
// it waits leaves the queue, ended as httplimit's Handler ends such a
// request (httplimit.Middleware.DoneUnserved). It returns nil when the call
// may run; else the call is ended, and the error is its answer.
func (s *Server) queue(ctx context.Context, res *httplimit.Result, md metadata.MD, trailer func(metadata.MD)) error {
	delay := res.Decision.Delay
	if deadline, ok := ctx.Deadline(); ok {
		if left := time.Until(deadline); left < delay {
			return s.tooLate(ctx, res, left, md, trailer)
		}
	}
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		// Its handler never ran: no answer, nothing used (see
		// httplimit.Middleware.DoneUnserved); its queue slot stays spent.
		s.m.DoneUnserved(ctx, res)
		return status.FromContextError(ctx.Err()).Err()
	}
}

// tooLate refuses res, a call admitted with a Delay longer than the time
// left before its deadline, which it could not be answered by: the
// refusal is RESOURCE_EXHAUSTED, with the Delay as its RetryInfo (a call
// sent then finds the queue ahead of it drained) and a QuotaFailure
// violation per queue whose wait is past the deadline, and the trailers
// md (the decision's RateLimit fields) with retry-after. The charges the
// store can give back (sluice.Refunder: fixed windows, sliding windows)
// are given back, as a refusal charges nothing; a queue's slot cannot be
// (a bucket keeps no receipt), and stays spent.
func (s *Server) tooLate(ctx context.Context, res *httplimit.Result, left time.Duration, md metadata.MD, trailer func(metadata.MD)) error {
	delay := res.Decision.Delay
	qf := &errdetails.QuotaFailure{}
	rules := res.Rules()
	for i := range res.Checks {
		if l := res.Checks[i].Limit; !l.Shadow() && res.Decision.Statuses[i].Delay > left {
			qf.Violations = append(qf.Violations, violation(res, i, rules))
		}
	}
	st := status.New(codes.ResourceExhausted, fmt.Sprintf(
		"Rate limit exceeded: this call's turn in the queue comes in %v, after its deadline (%v left).",
		delay.Round(time.Millisecond), max(left, 0).Round(time.Millisecond)))
	details := []protoadapt.MessageV1{&errdetails.RetryInfo{RetryDelay: durationpb.New(delay)}, qf}
	if withDetails, err := st.WithDetails(details...); err == nil {
		st = withDetails
	}
	md.Set("retry-after", strconv.FormatInt(int64((delay+time.Second-1)/time.Second), 10))
	trailer(md)
	if err := s.limiter.Refund(context.WithoutCancel(ctx), res.Checks, &res.Decision); err != nil {
		s.warnings.Warn(ctx, s.log, "call refused for its deadline still counted: the refund failed",
			"err", err, "subject", res.Identity.Subject)
	}
	s.m.Done(ctx, res)
	return st.Err()
}
