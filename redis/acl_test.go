package redis_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// documentedACL returns the ACL SETUSER line of docs/operations.md, as
// arguments, with password in place of the placeholder.
func documentedACL(t *testing.T, password string) []string {
	t.Helper()
	doc, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(doc), "\n") {
		if strings.HasPrefix(line, "ACL SETUSER sluice ") {
			return strings.Fields(strings.Replace(line, ">sluice-redis-password", ">"+password, 1))
		}
	}
	t.Fatal("docs/operations.md has no ACL SETUSER sluice line")
	return nil
}

// aclUser creates the documented user on srv, with the log of refusals
// emptied, and returns its password.
func aclUser(t *testing.T, srv *redistest.Server) string {
	t.Helper()
	const password = "a-password-of-the-test"
	srv.MustDo(documentedACL(t, password)...)
	srv.MustDo("ACL", "LOG", "RESET")
	return password
}

// noACLRefusals fails t if srv logged a command or key the ACL refused.
func noACLRefusals(t *testing.T, srv *redistest.Server) {
	t.Helper()
	if log, ok := srv.MustDo("ACL", "LOG").([]any); !ok || len(log) > 0 {
		t.Errorf("%s refused what the documented ACL does not allow: %v", srv.Addr, log)
	}
}

// exercise runs on g what a server asks of Redis: every algorithm in one
// call and alone, a refund, a release, a reset, and leases taken, spent
// and given back.
func exercise(t *testing.T, g *redis.Guarded) {
	t.Helper()
	ctx := context.Background()
	limits := []sluice.Limit{
		sluice.FixedWindow(10, time.Minute).Named("fw"),
		sluice.SlidingLog(10, time.Minute).Named("sl"),
		sluice.SlidingCounter(10, time.Minute).Named("sc"),
		sluice.TokenBucket(10, time.Minute).Named("tb"),
		sluice.LeakyBucket(10, time.Minute).Named("lb"),
		sluice.GCRA(10, time.Minute).Named("gcra"),
		sluice.Concurrency(10, time.Minute).Named("conc"),
	}
	var checks []sluice.Check
	for _, l := range limits {
		checks = append(checks, sluice.Check{Key: "acl", Limit: l, Cost: 1})
	}
	out := make([]sluice.Status, len(checks))
	if err := g.Apply(ctx, checks, out); err != nil {
		t.Fatal(err)
	}
	receipts, leases := make([]int64, len(checks)), make([]int64, len(checks))
	for i, st := range out {
		if !st.Allowed {
			t.Fatalf("%s refused: %+v", checks[i].Limit.Name(), st)
		}
		receipts[i], leases[i] = st.Charged, st.Lease
	}
	if err := g.Refund(ctx, checks, receipts); err != nil {
		t.Fatalf("refund: %v", err)
	}
	if err := g.Release(ctx, checks, leases); err != nil {
		t.Fatalf("release: %v", err)
	}
	for _, c := range checks { // one limit a call, as the leases take them
		for range 3 {
			if err := g.Apply(ctx, []sluice.Check{c}, out[:1]); err != nil {
				t.Fatal(err)
			}
			if l := out[0].Lease; l != 0 {
				g.Release(ctx, []sluice.Check{c}, []int64{l})
			}
		}
	}
	// A call of two subjects (on a Cluster, two slots: reserved slot by
	// slot) whose second refuses: the first's reservation is undone. The
	// limit of 1 is a sliding log's, the minute before each call: a fixed
	// window's minute, on Redis's clock, may end between the two calls.
	one := sluice.SlidingLog(1, time.Minute).Named("one")
	for _, c := range [][]sluice.Check{
		{{Key: "other", Limit: one, Cost: 1}},
		{{Key: "acl", Limit: limits[3], Cost: 1}, {Key: "other", Limit: one, Cost: 1}},
	} {
		if err := g.Apply(ctx, c, out[:len(c)]); err != nil {
			t.Fatal(err)
		}
	}
	if out[1].Allowed {
		t.Fatalf("a second unit of a limit of 1 admitted: %+v", out[:2])
	}
	if _, err := g.Reset(ctx, "acl", limits); err != nil {
		t.Fatalf("reset: %v", err)
	}
	time.Sleep(300 * time.Millisecond) // the watch reads the deployment and the resets' notices
	if s := g.Failover().Stats(); s.StoreErrors != 0 {
		t.Errorf("store errors as the documented ACL user: %+v", s)
	}
}

// TestTheDocumentedACLIsEnough: a user created by the ACL SETUSER line of
// docs/operations.md can do all that sluice asks of Redis, standalone (with
// leases, and with replica_wait), behind a Sentinel and on a Cluster, and
// Redis refuses it nothing (its ACL LOG stays empty).
func TestTheDocumentedACLIsEnough(t *testing.T) {
	t.Parallel()
	t.Run("standalone", func(t *testing.T) {
		t.Parallel()
		srv := redistest.Standalone(t)
		password := aclUser(t, srv)
		for _, o := range []redis.Options{
			{},
			{Lease: redis.LeaseOptions{Mode: redis.LeaseAuto}},
			{Replicas: 1, ReplicaWait: time.Millisecond},
		} {
			o.Addrs, o.Username, o.Password = []string{srv.Addr}, "sluice", password
			o.Timeout, o.OnStoreError, o.MustConnect = testTimeout, failover.Deny, true
			g, err := redis.Open(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if o.Replicas == 0 {
				exercise(t, g)
			} else { // no replica acknowledges: only what the user may send counts
				g.Apply(context.Background(), []sluice.Check{{Key: "acl", Limit: sluice.PerMinute(5), Cost: 1}}, make([]sluice.Status, 1))
			}
			g.Close()
		}
		noACLRefusals(t, srv)
	})
	t.Run("sentinel", func(t *testing.T) {
		t.Parallel()
		primary := redistest.Standalone(t)
		password := aclUser(t, primary)
		sentinel := redistest.Sentinel(t, primary, "acl")
		g, err := redis.Open(context.Background(), redis.Options{Mode: redis.ModeSentinel, Addrs: []string{sentinel.Addr},
			MasterSet: "acl", Username: "sluice", Password: password, SentinelUsername: "default", SentinelPassword: "any",
			Timeout: testTimeout, OnStoreError: failover.Deny, MustConnect: true})
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		exercise(t, g)
		noACLRefusals(t, primary)
	})
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		cl := redistest.Cluster(t)
		var password string
		for _, n := range cl.Masters {
			password = aclUser(t, n)
		}
		g, err := redis.Open(context.Background(), redis.Options{Mode: redis.ModeCluster, Addrs: cl.Addrs(),
			Username: "sluice", Password: password, Timeout: testTimeout, OnStoreError: failover.Deny, MustConnect: true,
			Lease: redis.LeaseOptions{Mode: redis.LeaseAuto}})
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		exercise(t, g)
		for _, n := range cl.Masters {
			noACLRefusals(t, n)
		}
	})
}
