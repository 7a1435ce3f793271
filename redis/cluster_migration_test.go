package redis

import (
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/redistest"
)

// slotMove moves the slot of one subject from the master that serves it
// to the next master, as redis-cli --cluster reshard does: IMPORTING on
// the target, MIGRATING on the source, then (finish) MIGRATE of its keys
// and SETSLOT NODE on every master.
type slotMove struct {
	c        *redistest.ClusterFixture
	slot     string
	src, dst *redistest.Server
	done     sync.Once
}

// startMove opens the move of subject's slot; the test's cleanup finishes
// it if the test did not.
func startMove(t *testing.T, c *redistest.ClusterFixture, subject string) *slotMove {
	t.Helper()
	sl := int(subjectSlot(subject))
	src := c.MasterOf(sl)
	var dst *redistest.Server
	for i, m := range c.Masters {
		if m == src {
			dst = c.Masters[(i+1)%len(c.Masters)]
		}
	}
	m := &slotMove{c: c, slot: strconv.Itoa(sl), src: src, dst: dst}
	dst.MustDo("CLUSTER", "SETSLOT", m.slot, "IMPORTING", c.IDs[src.Addr])
	src.MustDo("CLUSTER", "SETSLOT", m.slot, "MIGRATING", c.IDs[dst.Addr])
	t.Cleanup(m.finish)
	return m
}

// finish moves the slot's keys and hands the slot to the target, once.
func (m *slotMove) finish() {
	m.done.Do(func() {
		for {
			keys, _ := m.src.MustDo("CLUSTER", "GETKEYSINSLOT", m.slot, "100").([]any)
			if len(keys) == 0 {
				break
			}
			args := []string{"MIGRATE", "127.0.0.1", strconv.Itoa(m.dst.Port), "", "0", "5000", "KEYS"}
			for _, k := range keys {
				args = append(args, k.(string))
			}
			m.src.MustDo(args...)
		}
		m.dst.MustDo("CLUSTER", "SETSLOT", m.slot, "NODE", m.c.IDs[m.dst.Addr])
		for _, s := range m.c.Masters {
			if s != m.dst {
				s.MustDo("CLUSTER", "SETSLOT", m.slot, "NODE", m.c.IDs[m.dst.Addr])
			}
		}
	})
}

// tryAgainClient is a cluster client that counts Redis's TRYAGAIN answers
// and, after the first (before the answer reaches the store), runs onTry:
// finishing the slot move under way, a store that sends the call again,
// as Redis asks, then finds the slot moved; one that does not fails the
// call.
type tryAgainClient struct {
	rueidis.Client
	mu       sync.Mutex
	onTry    func()
	tryAgain atomic.Int64
}

func (c *tryAgainClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	r := c.Client.Do(ctx, cmd)
	if isTryAgain(r.Error()) {
		c.tryAgain.Add(1)
		c.mu.Lock()
		f := c.onTry
		c.mu.Unlock()
		if f != nil {
			f()
		}
	}
	return r
}

// during makes the first TRYAGAIN finish m.
func (c *tryAgainClient) during(m *slotMove) {
	c.mu.Lock()
	c.onTry = m.finish
	c.mu.Unlock()
}

// While a slot moves between masters (a reshard), Redis answers TRYAGAIN
// to every script whose keys are not all on one node, and the store's
// scripts declare keys that usually do not exist (a state's reset key, a
// charge's id key, a limit of a subject not written yet). The store sends
// such a script again, after a short wait, until the move ends or the
// call's time is up: a release, a two-limit check, a refund and a charge
// under an id made while the slot moves are decided once it has moved, as
// RELIABILITY.md states for "slots moved under load": no error. Here the
// move ends the moment Redis first answers TRYAGAIN, well within the
// store's timeout.
func TestCallsDuringASlotMigrationAreSentAgainUntilTheSlotHasMoved(t *testing.T) {
	cl := redistest.Cluster(t)
	client := &tryAgainClient{Client: cl.Client(t)}
	store := New(client, WithTimeout(5*time.Second))
	ctx := context.Background()

	// A release while the slot moves frees the lease: a concurrency limit
	// of 1 admits the next request at once, not after the lease's hour.
	t.Run("release", func(t *testing.T) {
		subject := "migration-release"
		limit := sluice.Concurrency(1, time.Hour)
		checks := []sluice.Check{{Key: subject, Limit: limit, Cost: 1}}
		out := make([]sluice.Status, 1)
		if err := store.Apply(ctx, checks, out); err != nil || !out[0].Allowed || out[0].Lease == 0 {
			t.Fatalf("acquire: %+v, %v", out[0], err)
		}
		m := startMove(t, cl, subject)
		client.during(m)
		before := client.tryAgain.Load()
		err := store.Release(ctx, checks, []int64{out[0].Lease})
		m.finish()
		if err != nil {
			t.Errorf("Release while the slot moves (TRYAGAIN answered %d times): %v; want the lease released once the slot has moved",
				client.tryAgain.Load()-before, err)
		}
		if err := store.Apply(ctx, checks, out); err != nil {
			t.Fatal(err)
		}
		if !out[0].Allowed {
			t.Errorf("after the move, a new request of a concurrency limit of 1 whose one request ended: %+v; want admitted", out[0])
		}
	})

	// A check of a subject's two limits, one never written, is decided.
	t.Run("check of two limits", func(t *testing.T) {
		subject := "migration-two-limits"
		perLong := sluice.FixedWindow(100, longWindow).Named("long")
		perSecond := sluice.FixedWindow(10, time.Second).Named("per-second")
		out := make([]sluice.Status, 2)
		if err := store.Apply(ctx, []sluice.Check{{Key: subject, Limit: perLong, Cost: 1}}, out[:1]); err != nil || !out[0].Allowed {
			t.Fatalf("first call: %+v, %v", out[0], err)
		}
		m := startMove(t, cl, subject)
		client.during(m)
		before := client.tryAgain.Load()
		err := store.Apply(ctx, []sluice.Check{{Key: subject, Limit: perLong, Cost: 1}, {Key: subject, Limit: perSecond, Cost: 1}}, out)
		m.finish()
		if err != nil {
			t.Errorf("a check of the subject's two limits while its slot moves (TRYAGAIN answered %d times): %v; want a decision",
				client.tryAgain.Load()-before, err)
		}
		if !out[0].Allowed || out[0].Remaining != 98 || !out[1].Allowed {
			t.Errorf("the check's statuses: %+v; want both admitted, 98 left of the window's 100 (counted once)", out)
		}
	})

	// A refund while the slot moves gives the unit back.
	t.Run("refund", func(t *testing.T) {
		subject := "migration-refund"
		limit := sluice.FixedWindow(1, longWindow).Named("long")
		checks := []sluice.Check{{Key: subject, Limit: limit, Cost: 1}}
		out := make([]sluice.Status, 1)
		if err := store.Apply(ctx, checks, out); err != nil || !out[0].Allowed || out[0].Charged == 0 {
			t.Fatalf("first call: %+v, %v", out[0], err)
		}
		m := startMove(t, cl, subject)
		client.during(m)
		before := client.tryAgain.Load()
		err := store.Refund(ctx, checks, []int64{out[0].Charged})
		m.finish()
		if err != nil {
			t.Errorf("Refund while the slot moves (TRYAGAIN answered %d times): %v; want the unit refunded", client.tryAgain.Load()-before, err)
		}
		if err := store.Apply(ctx, checks, out); err != nil {
			t.Fatal(err)
		}
		if !out[0].Allowed {
			t.Errorf("after the move, the one unit of a limit of 1 whose charge was refunded: %+v; want admitted", out[0])
		}
	})

	// A charge under an id while the slot moves is taken, once.
	t.Run("charge once", func(t *testing.T) {
		subject := "migration-charge"
		limit := sluice.FixedWindow(10, longWindow).Named("long")
		checks := []sluice.Check{{Key: subject, Limit: limit, Cost: 3}}
		out := make([]sluice.Status, 1)
		if err := store.Apply(ctx, []sluice.Check{{Key: subject, Limit: limit, Cost: 1}}, out); err != nil || !out[0].Allowed {
			t.Fatalf("first call: %+v, %v", out[0], err)
		}
		m := startMove(t, cl, subject)
		client.during(m)
		before := client.tryAgain.Load()
		err := store.ChargeOnce(ctx, checks, []string{"migration-id"})
		m.finish()
		if err != nil {
			t.Errorf("ChargeOnce while the slot moves (TRYAGAIN answered %d times): %v; want the charge taken",
				client.tryAgain.Load()-before, err)
		}
		if err := store.Apply(ctx, []sluice.Check{{Key: subject, Limit: limit}}, out); err != nil {
			t.Fatal(err)
		}
		if out[0].Remaining != 6 {
			t.Errorf("after the move, a limit of 10 charged 1 then 3: %d left; want 6", out[0].Remaining)
		}
	})
}

// longWindow is the fixed window of the subtests that count: Redis's clock
// reckons it, and a window that ended during a subtest (a day's, at UTC
// midnight) would start its count afresh; one of about 814 days ends during a
// run once in millions.
const longWindow = sluice.MaxFixedWindow

// A slot that stays in the middle of a move (a reshard stopped half-way)
// fails a call whose script Redis keeps answering TRYAGAIN within the
// store's timeout, with an error wrapping sluice.ErrStoreUnavailable, after
// sending it more than once: the wait for the move never outlasts the
// call's time.
func TestACallWhoseSlotStaysMigratingFailsWithinTheTimeout(t *testing.T) {
	cl := redistest.Cluster(t)
	client := &tryAgainClient{Client: cl.Client(t)}
	const timeout = 200 * time.Millisecond
	store := New(client, WithTimeout(timeout))
	ctx := context.Background()
	limit := sluice.Concurrency(1, time.Hour)
	out := make([]sluice.Status, 1)
	// The acquire is the client's first call, within the 200 ms timeout:
	// a machine loaded enough to miss it (a connection, the script loaded)
	// tries a new subject, as a timed-out acquire may hold its slot.
	var subject string
	var checks []sluice.Check
	for try := 0; ; try++ {
		subject = "migration-stuck-" + strconv.Itoa(try)
		checks = []sluice.Check{{Key: subject, Limit: limit, Cost: 1}}
		err := store.Apply(ctx, checks, out)
		if err == nil && out[0].Allowed && out[0].Lease != 0 {
			break
		}
		if try == 9 {
			t.Fatalf("acquire: %+v, %v", out[0], err)
		}
	}
	startMove(t, cl, subject)
	start := time.Now()
	err := store.Release(ctx, checks, []int64{out[0].Lease})
	took := time.Since(start)
	t.Logf("Release failed after %v, TRYAGAIN answered %d times", took, client.tryAgain.Load())
	// The last TRYAGAIN, or the deadline when a loaded machine made the
	// last send take longer than the one before it.
	if !errors.Is(err, sluice.ErrStoreUnavailable) || !strings.Contains(err.Error(), "TRYAGAIN") && !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Release while the slot stays migrating: %v; want TRYAGAIN or the deadline, wrapping sluice.ErrStoreUnavailable", err)
	}
	if took > timeout+100*time.Millisecond {
		t.Errorf("Release took %v; want at most the store's timeout, %v", took, timeout)
	}
	if n := client.tryAgain.Load(); n < 2 {
		t.Errorf("TRYAGAIN answered %d times; want the script sent again while the timeout allows", n)
	}
}

// lostReplyClient sends every script and counts those Redis ran; in place
// of the reply of one that ran, it returns a connection error, as when the connection drops after the
// send: the script may have run.
type lostReplyClient struct {
	rueidis.Client
	sent atomic.Int64
}

func (c *lostReplyClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	name := cmd.Commands()[0]
	r := c.Client.Do(ctx, cmd)
	if name != "EVALSHA" && name != "EVAL" {
		return r
	}
	if e, ok := rueidis.IsRedisErr(r.Error()); ok && e.IsNoScript() {
		return r // not run
	}
	c.sent.Add(1)
	return rueidis.NewErrorResult(io.ErrUnexpectedEOF)
}

// Only TRYAGAIN makes the store send a script again: a script whose reply
// is lost may have run, and is sent once, its error the caller's.
func TestAScriptWhoseReplyIsLostIsNotSentAgain(t *testing.T) {
	srv := redistest.Standalone(t)
	client := &lostReplyClient{Client: srv.Client(t)}
	store := New(client, WithTimeout(2*time.Second), WithBatching(0))
	checks := []sluice.Check{{Key: "lost-reply", Limit: sluice.FixedWindow(10, time.Hour), Cost: 1}}
	err := store.Apply(context.Background(), checks, make([]sluice.Status, 1))
	if !errors.Is(err, sluice.ErrStoreUnavailable) {
		t.Errorf("Apply whose reply is lost: %v; want an error wrapping sluice.ErrStoreUnavailable", err)
	}
	if n := client.sent.Load(); n != 1 {
		t.Errorf("the script ran %d times; want once", n)
	}
}
