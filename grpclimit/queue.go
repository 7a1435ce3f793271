package grpclimit

import (
	"context"
	"time"

	"google.golang.org/grpc/status"

	"github.com/sluice-dev/sluice/httplimit"
)

// queue waits out the Delay of res, a call admitted by a leaky-bucket
// queue, before its handler runs. (A call whose turn came after its
// deadline was refused by the middleware's decision already, see
// httplimit.Middleware.DecideFor.) A call whose context ends while it waits
// leaves the queue, ended as httplimit's Handler ends such a request
// (httplimit.Middleware.DoneUnserved). It returns nil when the call may
// run; else the call is ended, and the error is its answer.
func (s *Server) queue(ctx context.Context, res *httplimit.Result) error {
	t := time.NewTimer(res.Decision.Delay)
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
