package grpclimit_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/client"
	"github.com/sluice-dev/sluice/grpclimit"
	"github.com/sluice-dev/sluice/httplimit"
)

func TestRetryLandsAfterRetryInfosDelayNotBefore(t *testing.T) {
	t.Parallel()
	retry := grpclimit.NewRetry(client.RetryPolicy{})
	ts := start(t, grpclimit.Options{Limits: httplimit.Options{Plans: []*httplimit.Plan{plan("free", sluice.GCRA(1, 2*time.Second))}}},
		grpc.WithChainUnaryInterceptor(retry.UnaryInterceptor()))
	ctx := context.Background()
	for i := range 2 {
		if _, err := say(ctx, ts.conn, methodSay); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
	}
	d := ts.decisions()
	if len(d) != 3 || !d[0].allowed || d[1].allowed || !d[2].allowed {
		t.Fatalf("decisions %+v, want admitted, refused, admitted (the retry)", d)
	}
	waited := d[2].at.Sub(d[1].at)
	if waited < d[1].retryAfter {
		t.Errorf("the retry came %v after the refusal, before its delay %v", waited, d[1].retryAfter)
	}
	// Jitter adds at most a tenth; the rest is the loopback round trip and
	// the timer's wake-up, which a loaded machine may delay by hundreds of
	// milliseconds: a second, still short of waiting the delay twice.
	if most := d[1].retryAfter*11/10 + time.Second; waited > most {
		t.Errorf("the retry came %v after the refusal, later than %v", waited, most)
	}
}

func TestRetryDoesNotWaitPastTheDeadline(t *testing.T) {
	t.Parallel()
	retry := grpclimit.NewRetry(client.RetryPolicy{})
	ts := start(t, grpclimit.Options{Limits: httplimit.Options{Plans: []*httplimit.Plan{plan("free", sluice.GCRA(1, 10*time.Second))}}},
		grpc.WithChainUnaryInterceptor(retry.UnaryInterceptor()))
	if _, err := say(context.Background(), ts.conn, methodSay); err != nil {
		t.Fatal(err)
	}
	// A wait begun would end at the deadline, 3 s; the refusal returned at
	// once takes a loopback round trip, far less even on a loaded machine.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	begin := time.Now()
	_, err := say(ctx, ts.conn, methodSay)
	if ri, _, _ := details(t, err); ri == nil {
		t.Error("the refusal returned has no RetryInfo")
	}
	if took := time.Since(begin); took > 1500*time.Millisecond {
		t.Errorf("the refusal came back after %v: a wait of about 10s past a 3s deadline was begun", took)
	}
	if n := len(ts.decisions()); n != 2 {
		t.Errorf("%d decisions, want 2 (no retry)", n)
	}
}

// refuseAll answers every call RESOURCE_EXHAUSTED with a RetryInfo of
// delay, or without one when delay is negative, and counts the calls.
func refuseAll(t *testing.T, delay time.Duration, dial ...grpc.DialOption) (*grpc.ClientConn, *atomic.Int64) {
	t.Helper()
	var calls atomic.Int64
	conn := serveWith(t, grpc.UnaryInterceptor(func(context.Context, any, *grpc.UnaryServerInfo, grpc.UnaryHandler) (any, error) {
		calls.Add(1)
		st := status.New(codes.ResourceExhausted, "no")
		if delay >= 0 {
			st, _ = st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(delay)})
		}
		return nil, st.Err()
	}), dial...)
	return conn, &calls
}

func TestRetriesAreBoundedAndNeedRetryInfo(t *testing.T) {
	t.Parallel()
	retry := grpclimit.NewRetry(client.RetryPolicy{MaxRetries: 2})
	conn, calls := refuseAll(t, 5*time.Millisecond, grpc.WithChainUnaryInterceptor(retry.UnaryInterceptor()))
	if _, err := say(context.Background(), conn, methodSay); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("%v, want the last refusal", err)
	}
	if n := calls.Load(); n != 3 {
		t.Errorf("%d attempts, want MaxRetries+1 = 3", n)
	}
	// RESOURCE_EXHAUSTED without RetryInfo (say, a message too large) is
	// not a rate limit: no retry.
	conn, calls = refuseAll(t, -1, grpc.WithChainUnaryInterceptor(retry.UnaryInterceptor()))
	if _, err := say(context.Background(), conn, methodSay); status.Code(err) != codes.ResourceExhausted || calls.Load() != 1 {
		t.Errorf("%v after %d attempts, want the refusal after 1", err, calls.Load())
	}
}

// A batch from 8 goroutines through a Pacer (and a Retry, which would hide
// refusals from the caller but not from the server) meets no refusal, at
// the server's pace.
func TestPacerKeepsABatchWithinTheServersLimit(t *testing.T) {
	t.Parallel()
	const rate, burst, calls = 50, 5, 100
	pacer := &grpclimit.Pacer{}
	retry := grpclimit.NewRetry(client.RetryPolicy{})
	ts := start(t, grpclimit.Options{Limits: httplimit.Options{Plans: []*httplimit.Plan{plan("free", sluice.GCRA(rate, time.Second).WithBurst(burst))}}},
		grpc.WithChainUnaryInterceptor(retry.UnaryInterceptor(), pacer.UnaryInterceptor()))
	var next atomic.Int64
	var wg sync.WaitGroup
	begin := time.Now()
	for range 8 {
		wg.Go(func() {
			for next.Add(1) <= calls {
				if _, err := say(context.Background(), ts.conn, methodSay); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	took := time.Since(begin)
	if n := ts.refused(); n != 0 {
		t.Errorf("the server refused %d calls", n)
	}
	if ideal := time.Duration(calls-burst) * time.Second / rate; took < ideal {
		t.Errorf("%d calls took %v, less than the limit allows (%v)", calls, took, ideal)
	}
	t.Logf("%d calls in %v", calls, took.Round(time.Millisecond))
}

func TestPacerPacesStreams(t *testing.T) {
	t.Parallel()
	pacer := &grpclimit.Pacer{}
	ts := start(t, grpclimit.Options{Limits: httplimit.Options{Plans: []*httplimit.Plan{plan("free", sluice.GCRA(20, time.Second).WithBurst(2))}}},
		grpc.WithChainStreamInterceptor(pacer.StreamInterceptor()))
	for i := range 12 {
		if n, _, err := count(context.Background(), ts.conn); err != nil || n != 3 {
			t.Fatalf("stream %d: %d messages, %v", i, n, err)
		}
	}
	if n := ts.refused(); n != 0 {
		t.Errorf("the server refused %d streams", n)
	}
}

// After a refusal (another client spent the quota), a Pacer holds calls
// until RetryInfo's delay is over, and fails at once a call whose deadline
// comes first.
func TestPacerHoldsCallsAfterARefusal(t *testing.T) {
	t.Parallel()
	pacer := &grpclimit.Pacer{}
	ts := start(t, grpclimit.Options{Limits: httplimit.Options{Plans: []*httplimit.Plan{plan("free", sluice.GCRA(1, 4*time.Second))}}},
		grpc.WithChainUnaryInterceptor(pacer.UnaryInterceptor()))
	if _, err := say(context.Background(), ts.dial(), methodSay, "x-api-key", "other"); err != nil {
		t.Fatal(err)
	}
	// The pacer's first call (its probe) is refused: another client spent
	// the key's quota.
	if _, err := say(context.Background(), ts.conn, methodSay, "x-api-key", "other"); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("%v, want a refusal", err)
	}
	// The delay is about 4 s: a call held until its 1.5 s deadline would
	// take that long; one failed at once takes no round trip at all.
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	begin := time.Now()
	_, err := say(ctx, ts.conn, methodSay, "x-api-key", "other")
	if status.Code(err) != codes.ResourceExhausted || time.Since(begin) > 750*time.Millisecond {
		t.Errorf("a call whose deadline comes before the delay: %v after %v, want RESOURCE_EXHAUSTED at once", err, time.Since(begin))
	}
	if _, err := say(context.Background(), ts.conn, methodSay, "x-api-key", "other"); err != nil {
		t.Errorf("after the delay: %v", err)
	}
	if d := ts.decisions(); len(d) != 3 || d[2].at.Sub(d[1].at) < d[1].retryAfter {
		t.Errorf("decisions %+v: the call after the refusal did not wait its delay", d)
	}
}
