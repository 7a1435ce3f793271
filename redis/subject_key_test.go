package redis_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// oddSubjects are subjects that redis.Key does not write as they are: the
// empty one, and ones holding braces, among them ones that start with "}"
// (whose braces, written as they are, held an empty hash tag) and binary
// bytes.
var oddSubjects = []string{"", "}", "}lead", "{}", "a}b{c", "tenant:{a}:user:{b}", "\x00\xff}{%"}

// On a Cluster, a receipt given before a Reset is not refunded into the
// fresh state of any subject, the empty one and ones with braces
// included: the refund reads the reset key in its state's slot.
func TestARefundAfterAResetLeavesTheFreshStateAloneOfEverySubjectOnACluster(t *testing.T) {
	t.Parallel()
	store := redis.New(redistest.Cluster(t).Client(t), redis.WithTimeout(testTimeout))
	ctx := context.Background()
	limit := sluice.FixedWindow(10, time.Hour).Named("hourly")
	for _, subject := range oddSubjects {
		checks := []sluice.Check{{Key: subject, Limit: limit, Cost: 1}}
		spend := func() (receipt int64, allowed bool) {
			t.Helper()
			out := make([]sluice.Status, 1)
			if err := store.Apply(ctx, checks, out); err != nil {
				t.Fatal(err)
			}
			return out[0].Charged, out[0].Allowed
		}
		var receipts []int64
		for range 5 {
			r, ok := spend()
			if !ok {
				t.Fatalf("%q: refused before the reset", subject)
			}
			receipts = append(receipts, r)
		}
		if _, err := store.Reset(ctx, subject, []sluice.Limit{limit}); err != nil {
			t.Fatal(err)
		}
		admitted := 0
		for range 10 {
			if _, ok := spend(); ok {
				admitted++
			}
		}
		for _, r := range receipts {
			if err := store.Refund(ctx, checks, []int64{r}); err != nil {
				t.Fatal(err)
			}
		}
		for range 10 {
			if _, ok := spend(); ok {
				admitted++
			}
		}
		if admitted != 10 {
			t.Errorf("%q: %d admitted after the reset, the limit is 10: refunds of receipts from before it were taken from the fresh state", subject, admitted)
		}
	}
}

// On a Cluster, Close gives back the unspent units of a lease of any
// subject, the empty one and ones with braces included: the give-back
// reads the reset key in its state's slot.
func TestLeasedCloseGivesBackTheUnitsOfEverySubjectOnACluster(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t)
	peeker := redis.New(cl.Client(t), redis.WithTimeout(testTimeout))
	limit := sluice.FixedWindow(1000, 400*24*time.Hour).Named("fw")
	for _, subject := range oddSubjects {
		g, err := redis.Open(context.Background(), redis.Options{Mode: redis.ModeCluster, Addrs: cl.Addrs(),
			Timeout: testTimeout, Instances: 1, OnStoreError: failover.Local,
			Lease: redis.LeaseOptions{Mode: redis.LeaseAuto, Idle: time.Hour, MaxAge: time.Hour}}, redis.WithBatching(0))
		if err != nil {
			t.Fatal(err)
		}
		c := sluice.Check{Key: subject, Limit: limit, Cost: 1}
		admitted := 0
		for range 10 {
			admitted += spendN(t, g, c, 1)
			settled(t, g.Leases())
		}
		held := settled(t, g.Leases()).Held
		if admitted != 10 || held == 0 {
			t.Fatalf("%q: %d of 10 admitted, %d units of lease held; want all admitted and a lease held", subject, admitted, held)
		}
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
		out := make([]sluice.Status, 1)
		c.Cost = 0
		if err := peeker.Apply(context.Background(), []sluice.Check{c}, out); err != nil {
			t.Fatal(err)
		}
		if want := int64(1000 - admitted); out[0].Remaining != want {
			t.Errorf("%q: after Close Redis has %d left, want %d: the %d units of lease held were not given back; leases %+v",
				subject, out[0].Remaining, want, held, g.Leases().Stats())
		}
	}
}

// On a Cluster, a check of two limits of one subject, the empty one and
// ones with braces included, is one script run in one slot: it is decided
// atomically, never through the reservations of a call that spans slots.
func TestACheckOfTwoLimitsOfEverySubjectIsOneSlotOnACluster(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t)
	store := redis.New(cl.Client(t), redis.WithTimeout(testTimeout))
	ctx := context.Background()
	for i, subject := range oddSubjects {
		checks := []sluice.Check{
			{Key: subject, Limit: sluice.FixedWindow(10, time.Hour).Named(fmt.Sprintf("hourly-%d", i)), Cost: 1},
			{Key: subject, Limit: sluice.FixedWindow(100, 24*time.Hour).Named(fmt.Sprintf("daily-%d", i)), Cost: 1},
		}
		out := make([]sluice.Status, len(checks))
		if err := store.Apply(ctx, checks, out); err != nil { // the scripts loaded
			t.Fatal(err)
		}
		var monitors []*redistest.Monitor
		for _, m := range cl.Masters {
			monitors = append(monitors, m.Monitor(t))
		}
		if err := store.Apply(ctx, checks, out); err != nil || !out[0].Allowed || !out[1].Allowed {
			t.Fatalf("%q: %+v, %v; want both admitted", subject, out, err)
		}
		runs := 0
		for _, m := range monitors {
			cmds, err := m.Next()
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cmds {
				if c.Client != "lua" && strings.HasPrefix(c.Name, "EVAL") {
					runs++
				}
			}
		}
		if runs != 1 {
			t.Errorf("%q: a check of two limits took %d script runs, want 1", subject, runs)
		}
		slots := map[int64]bool{}
		for _, l := range []string{checks[0].Limit.ID(), checks[1].Limit.ID()} {
			n, err := cl.Masters[0].Do("CLUSTER", "KEYSLOT", redis.Key(subject, l))
			if err != nil {
				t.Fatal(err)
			}
			slots[n.(int64)] = true
		}
		if len(slots) != 1 {
			t.Errorf("%q: its two limits' keys lie in slots %v, want one", subject, slots)
		}
	}
}
