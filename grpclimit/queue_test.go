package grpclimit_test

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/grpclimit"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// queued is a Server whose free plan queues one call an hour (a leaky
// bucket waiting up to two hours) and counts two calls an hour in a fixed
// window, "hourly"; with the limiter, and the last checks it decided.
type queued struct {
	s       *grpclimit.Server
	limiter *sluice.Limiter
	mu      sync.Mutex
	checks  []sluice.Check
}

func newQueued(t *testing.T, o httplimit.Options) *queued {
	t.Helper()
	// The store's clock stands still (stillAt): on the wall clock an hour
	// that ended between two calls gave the hourly limit its quantity again.
	store := memory.New(memory.WithClock(func() time.Time { return stillAt }), memory.WithSweepInterval(0))
	t.Cleanup(func() { store.Close() })
	q := &queued{limiter: sluice.NewLimiter(store)}
	o.Plans = []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{
		sluice.LeakyBucket(1, time.Hour).WithMaxWait(2 * time.Hour).Named("queue"),
		sluice.FixedWindow(2, time.Hour).Named("hourly"),
	}, Costs: map[string]int64{"POST " + methodUse: 1}}}
	o.Observer = func(res *httplimit.Result, _ time.Duration, err error) {
		if err == nil {
			q.mu.Lock()
			q.checks = append(q.checks[:0], res.Checks...)
			q.mu.Unlock()
		}
	}
	s, err := grpclimit.New(q.limiter, grpclimit.Options{Limits: o})
	if err != nil {
		t.Fatal(err)
	}
	q.s = s
	return q
}

// hourlyLeft reports how many calls the client's hourly limit still
// admits, by asking the limiter (a peek of cost 0 admits whatever is left).
func (q *queued) hourlyLeft(t *testing.T) int64 {
	t.Helper()
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, c := range q.checks {
		if c.Limit.Name() == "hourly" {
			c.Cost = 0
			var d sluice.Decision
			if err := q.limiter.Allow(context.Background(), []sluice.Check{c}, &d); err != nil {
				t.Fatal(err)
			}
			return d.Remaining
		}
	}
	t.Fatal("no hourly check decided")
	return 0
}

// call makes a unary call of Use through q's interceptor from one client,
// its handler returning usage in an x-usage-tokens trailer; it reports the
// call's error and whether the handler ran.
func (q *queued) call(ctx context.Context, usage string) (ran bool, err error) {
	ctx = peer.NewContext(ctx, &peer.Peer{Addr: &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 1}})
	_, err = q.s.UnaryInterceptor()(ctx, nil, &grpc.UnaryServerInfo{FullMethod: methodUse}, func(ctx context.Context, _ any) (any, error) {
		ran = true
		return "ok", nil
	})
	return ran, err
}

// A call whose turn in a leaky-bucket queue comes after its deadline
// cannot be answered in time: it is refused at once, RESOURCE_EXHAUSTED
// with the queue's wait as its RetryInfo and the queue as its
// QuotaFailure, rather than held until its deadline passes, and the
// charges that can be given back (the hourly limit's) are.
func TestACallWhoseTurnComesAfterItsDeadlineIsRefusedAtOnce(t *testing.T) {
	t.Parallel()
	q := newQueued(t, httplimit.Options{})
	if ran, err := q.call(context.Background(), ""); !ran || err != nil {
		t.Fatalf("first call: ran %v, %v; want it served at once", ran, err)
	}
	if left := q.hourlyLeft(t); left != 1 {
		t.Fatalf("after one call the hourly limit admits %d more, want 1", left)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	ran, err := q.call(ctx, "")
	if ctx.Err() != nil {
		t.Fatalf("the call was held until its deadline (%v), not refused at once", err)
	}
	st, _ := status.FromError(err)
	if ran || st.Code() != codes.ResourceExhausted {
		t.Fatalf("a call whose turn comes in an hour, with 2 s left: ran %v, %v; want RESOURCE_EXHAUSTED at once", ran, err)
	}
	var retry *errdetails.RetryInfo
	var qf *errdetails.QuotaFailure
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.RetryInfo:
			retry = d
		case *errdetails.QuotaFailure:
			qf = d
		}
	}
	if got := retry.GetRetryDelay().AsDuration(); got < 59*time.Minute || got > time.Hour {
		t.Errorf("RetryInfo %v, want the queue's wait, an hour", got)
	}
	if v := qf.GetViolations(); len(v) != 1 || v[0].GetQuotaId() != "queue" {
		t.Errorf("QuotaFailure %v, want one violation, the queue", v)
	}
	if left := q.hourlyLeft(t); left != 1 {
		t.Errorf("after the refused call the hourly limit admits %d more, want 1: a refused call counts nothing", left)
	}
}

// A call that leaves a leaky-bucket queue before its turn never reached
// its handler, as a request leaving httplimit's queue never reaches its
// upstream: a limit counting what the answer reports gets the call's
// whole cost back, nothing having been used, and one counting only
// successes gets it back too, the call having no answer (a failure).
func TestACallThatLeftTheQueueIsCountedAsNoAnswer(t *testing.T) {
	t.Parallel()
	for _, count := range []string{httplimit.CountHeader + "X-Usage-Tokens", httplimit.CountSuccesses} {
		q := newQueued(t, httplimit.Options{Count: map[string]string{"hourly": count}})
		if ran, err := q.call(context.Background(), ""); !ran || err != nil {
			t.Fatalf("count %q: first call: ran %v, %v; want it served at once", count, ran, err)
		}
		// A header count keeps the whole cost of an answer that reports
		// nothing; a count of successes keeps a success's.
		if left := q.hourlyLeft(t); left != 1 {
			t.Fatalf("count %q: after one call the hourly limit admits %d more, want 1", count, left)
		}
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		if ran, err := q.call(ctx, ""); ran || status.Code(err) != codes.Canceled {
			t.Fatalf("count %q: a call cancelled in the queue: ran %v, %v; want CANCELED before its handler", count, ran, err)
		}
		if left := q.hourlyLeft(t); left != 1 {
			t.Errorf("count %q: after a call left the queue the hourly limit admits %d more, want 1: it used nothing", count, left)
		}
	}
}
