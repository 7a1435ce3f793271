package redis

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/conformance"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/internal/storetest"
	"github.com/sluice-dev/sluice/memory"
)

// A charge that Redis runs but whose reply its caller never sees failed
// for the failover, which keeps owing it and charges it again at its next
// call: Redis must count those units once. A fallback admits 3 of 10; the
// return call that charges them reaches Redis, whose reply is lost, and
// admits 1 more locally; the next call, on a healthy connection, charges
// again and is decided by Redis. 5 were admitted, so Redis must have 5
// left (before: 2, the 3 taken twice).
func TestAChargeWhoseReplyIsLostIsTakenOnce(t *testing.T) {
	srv := redistest.Standalone(t)
	thief := newReplyThief(t, srv.Addr)
	clock := conformance.NewClock(conformance.DefaultStart.Add(17 * time.Second))
	direct := New(srv.Client(t), WithTimeout(testTimeout), WithTimeForTesting(clock.Now))
	// One connection (rueidis otherwise spreads calls over several, each
	// opened when first used: an opening whose replies are stolen never
	// sends the call).
	thiefClient, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{thief.Addr()},
		DisableCache: true, ForceSingleClient: true, PipelineMultiplex: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(thiefClient.Close)
	robbed := New(thiefClient, WithTimeout(time.Second), WithTimeForTesting(clock.Now))

	l := sluice.FixedWindow(10, time.Hour)
	ctx := context.Background()
	// A charge of nothing loads the script, so that the robbed run is the
	// charge itself.
	if err := robbed.ChargeOnce(ctx, []sluice.Check{{Key: "lost", Limit: l}}, []string{"warm"}); err != nil {
		t.Fatal(err)
	}
	var via atomic.Pointer[Store]
	via.Store(direct)
	primary := &storetest.Flaky{Next: direct}
	local := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { local.Close() })
	f, err := failover.New(primary, local, failover.Options{
		Timeout: 2 * time.Second, Breaker: failover.BreakerOptions{Failures: 100},
		ChargeOnce: func(ctx context.Context, checks []sluice.Check, ids []string) error {
			return via.Load().ChargeOnce(ctx, checks, ids)
		}})
	if err != nil {
		t.Fatal(err)
	}
	check := func(cost int64) sluice.Status {
		t.Helper()
		out := make([]sluice.Status, 1)
		if err := f.Apply(ctx, []sluice.Check{{Key: "lost", Limit: l, Cost: cost}}, out); err != nil || !out[0].Allowed {
			t.Fatalf("a check of %d: %+v, %v; want admitted", cost, out[0], err)
		}
		return out[0]
	}
	left := func() int64 {
		t.Helper()
		out := make([]sluice.Status, 1)
		if err := direct.Apply(ctx, []sluice.Check{{Key: "lost", Limit: l}}, out); err != nil {
			t.Fatal(err)
		}
		return out[0].Remaining
	}

	primary.Fail(errors.New("redis is down"))
	check(3)
	primary.Fail(nil)

	thief.steal(true)
	via.Store(robbed)
	check(1) // charges the 3: Redis runs it, the reply is lost
	deadline := time.Now().Add(testTimeout)
	for left() != 7 {
		if time.Now().After(deadline) {
			t.Fatalf("Redis has %d left, want 7: the robbed charge never ran", left())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if st := f.Stats(); st.StoreErrors != 2 {
		t.Fatalf("store errors %d, want 2 (the primary down, the robbed charge)", st.StoreErrors)
	}

	via.Store(direct)
	check(1) // charges what is owed, then Redis decides
	if got := left(); got != 5 {
		t.Errorf("Redis has %d of 10 left after 5 admitted, want 5", got)
	}
}

// A replyThief forwards TCP connections to a Redis server; while it
// steals, every reply the server sends is swallowed: the server runs each
// command it is sent, and its client never hears of it. A connection that
// lost a reply is of no further use to its client.
type replyThief struct {
	ln       net.Listener
	target   string
	stealing atomic.Bool

	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

// newReplyThief starts a replyThief in front of target, closed when the
// test ends.
func newReplyThief(t *testing.T, target string) *replyThief {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &replyThief{ln: ln, target: target}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

// Addr is the address clients dial.
func (p *replyThief) Addr() string { return p.ln.Addr().String() }

// steal starts (on) or stops swallowing replies.
func (p *replyThief) steal(on bool) { p.stealing.Store(on) }

func (p *replyThief) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		p.wg.Add(2)
		go func() { defer p.wg.Done(); io.Copy(up, c); up.Close() }()
		go func() { defer p.wg.Done(); p.replies(c, up); c.Close() }()
	}
}

// replies copies up's replies to c, unless it is stealing them.
func (p *replyThief) replies(c, up net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := up.Read(buf)
		if n > 0 && !p.stealing.Load() {
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *replyThief) close() {
	p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}
