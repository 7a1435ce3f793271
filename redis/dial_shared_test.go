package redis_test

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/faultproxy"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// rueidis makes a connection on the goroutine of the first call that needs
// it, under that call's deadline, and hands the outcome to every call that
// waits for the same connection meanwhile. A call with 5 ms left that
// starts a connection to a Redis 20 ms away (a round trip) gives up on its
// HELLO; the calls without a deadline of their own that waited for that
// connection are then sent again, never failed as errors of the store
// (counted, fed to the breaker, and here denied by on_store_error). Each
// round opens a store, whose client has made one of its connections (Open
// pings Redis) and makes the others on first use, starts four hasty calls
// at once and the patient ones a millisecond later, so that connections
// the patient calls need are being made by hasty ones.
func TestCallsWaitingForAConnectionAHastyCallMakesAreSentAgain(t *testing.T) {
	addr := farRedis(t)
	lim := sluice.FixedWindow(1_000_000_000, time.Hour)
	var calls, failed, storeErrors atomic.Int64
	for round := range 8 {
		g, err := redis.Open(context.Background(), redis.Options{Addrs: []string{addr}, Instances: 1,
			OnStoreError: failover.Deny, Timeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		hastyCalls(&wg, 4, func(i int) time.Duration { return 5 * time.Millisecond }, func(ctx context.Context, i int) {
			g.Apply(ctx, []sluice.Check{{Key: "hasty-" + strconv.Itoa(round) + "-" + strconv.Itoa(i), Limit: lim, Cost: 1}}, make([]sluice.Status, 1))
		})
		time.Sleep(time.Millisecond)
		for i := range 8 {
			wg.Go(func() {
				out := make([]sluice.Status, 1)
				key := "patient-" + strconv.Itoa(round) + "-" + strconv.Itoa(i)
				err := g.Apply(context.Background(), []sluice.Check{{Key: key, Limit: lim, Cost: 1}}, out)
				calls.Add(1)
				if err != nil || out[0].Unavailable || !out[0].Allowed {
					failed.Add(1)
				}
			})
		}
		wg.Wait()
		storeErrors.Add(int64(g.Failover().Stats().StoreErrors))
		g.Close()
	}
	if n := failed.Load(); n > 0 {
		t.Errorf("%d of %d calls without a deadline of their own were not decided by Redis: a hasty call's connection failed them",
			n, calls.Load())
	}
	if n := storeErrors.Load(); n > 0 {
		t.Errorf("%d store errors counted while Redis answered every HELLO within the store's timeout", n)
	}
}

// A hasty call handed a connection with a little more time than its dial
// took can see its deadline pass before rueidis sends HELLO (_newPipe
// allocates its buffers first, then pipe.DoMulti answers ctx.Err() without
// writing): rueidis hands that bare context.DeadlineExceeded to every call
// waiting for the connection, which is sent again, nothing of it written
// and its own time (2 s) far from spent. Redis is 20 ms away (round
// trip); the hasty deadlines span 0.1 to 1.75 ms, on an unbatched store.
func TestCallsWaitingForAConnectionAHastyCallGaveUpBeforeHelloAreSentAgain(t *testing.T) {
	addr := farRedis(t)
	lim := sluice.FixedWindow(1_000_000_000, time.Hour)
	var calls, failed atomic.Int64
	var firstErr atomic.Value
	for round := range 10 {
		s, err := redis.Dial(redis.Options{Addrs: []string{addr}, Timeout: 2 * time.Second}, redis.WithBatching(0))
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		hastyCalls(&wg, 12, func(i int) time.Duration { return time.Duration(100+150*i) * time.Microsecond }, func(ctx context.Context, i int) {
			s.Apply(ctx, []sluice.Check{{Key: "hasty-" + strconv.Itoa(round) + "-" + strconv.Itoa(i), Limit: lim, Cost: 1}}, make([]sluice.Status, 1))
		})
		for i := range 8 {
			wg.Go(func() {
				out := make([]sluice.Status, 1)
				key := "patient-" + strconv.Itoa(round) + "-" + strconv.Itoa(i)
				err := s.Apply(context.Background(), []sluice.Check{{Key: key, Limit: lim, Cost: 1}}, out)
				calls.Add(1)
				if err != nil || !out[0].Allowed {
					failed.Add(1)
					if err != nil {
						firstErr.CompareAndSwap(nil, err.Error())
					}
				}
			})
		}
		wg.Wait()
		s.Close()
	}
	if n := failed.Load(); n > 0 {
		t.Errorf("%d of %d patient calls failed (first: %v) although Redis answered every HELLO within their Timeout: "+
			"a hasty call's deadline failed them", n, calls.Load(), firstErr.Load())
	}
}

// A call sent again because another call gave up on its connection is one
// whose context has not ended; a connection the store's own bound ended is
// the store's failure, never sent again: with Timeout negative (Apply
// bounded by its caller alone), a call without a deadline against a Redis
// that new connects no longer reach fails as the dial timeout
// (DefaultTimeout) passes, not when the background dial gives up (5 s),
// nor a call with 3 s by its deadline.
func TestACallWithoutADeadlineFailsByTheDialTimeoutWhenRedisIsUnreachable(t *testing.T) {
	srv := redistest.Standalone(t)
	proxy, err := faultproxy.New(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	addr := proxy.Addr()
	s, err := redis.Dial(redis.Options{Addrs: []string{addr}, Timeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	check := []sluice.Check{{Key: "k", Limit: sluice.FixedWindow(1000, time.Hour), Cost: 1}}
	if err := s.Apply(context.Background(), check, make([]sluice.Status, 1)); err != nil {
		t.Fatal(err)
	}
	proxy.Close() // every connection closed
	blackhole(t, addr)
	for _, bound := range []time.Duration{0, 3 * time.Second} {
		ctx, cancel := context.Background(), context.CancelFunc(func() {})
		if bound > 0 {
			ctx, cancel = context.WithTimeout(ctx, bound)
		}
		start := time.Now()
		err := s.Apply(ctx, check, make([]sluice.Status, 1))
		took := time.Since(start)
		cancel()
		if err == nil || took > time.Second {
			t.Errorf("a call with a deadline %v away (0: none) against an unreachable Redis: %v after %v; "+
				"want a failure by the dial timeout, %v", bound, err, took, redis.DefaultTimeout)
		}
	}
}

// blackhole holds addr, a loopback address no one listens on any longer,
// with a socket that never accepts and whose accept queue is full: a TCP
// connect to it hangs, its SYNs dropped, as behind a partition.
func blackhole(t *testing.T, addr string) {
	t.Helper()
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	var fill []net.Conn // connects the queue holds
	t.Cleanup(func() {
		for _, c := range fill {
			c.Close()
		}
	})
	for range 8 {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			return // the queue is full: connects hang
		}
		fill = append(fill, c)
	}
	t.Fatalf("a connect to %s still succeeds after %d", addr, len(fill))
}

// farRedis returns the address of a proxy to a Redis of its own that adds
// 10 ms each way (a round trip of 20 ms), both ended with t.
func farRedis(t *testing.T) string {
	t.Helper()
	srv := redistest.Standalone(t)
	proxy, err := faultproxy.New(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	proxy.SetLatency(10 * time.Millisecond)
	return proxy.Addr()
}

// hastyCalls starts n calls of apply on wg, the i-th under a deadline
// deadline(i) away: each makes a connection it needs, and gives up on it
// when its deadline is shorter than a HELLO's round trip.
func hastyCalls(wg *sync.WaitGroup, n int, deadline func(i int) time.Duration, apply func(ctx context.Context, i int)) {
	for i := range n {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), deadline(i))
			defer cancel()
			apply(ctx, i)
		})
	}
}
