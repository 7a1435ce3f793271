package redis_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// A per-second, per-minute and per-day check of one subject is one EVALSHA:
// one round trip, every other command run inside the script.
func TestThreeLimitsOfOneSubjectAreOneRoundTrip(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	lim := sluice.NewLimiter(redis.New(srv.Client(t), redis.WithTimeout(testTimeout)))
	checks := []sluice.Check{
		{Key: "user-42", Limit: sluice.PerSecond(10), Cost: 1},
		{Key: "user-42", Limit: sluice.FixedWindow(100, time.Minute).Named("per-minute"), Cost: 1},
		{Key: "user-42", Limit: sluice.SlidingLog(1000, 24*time.Hour).Named("per-day"), Cost: 1},
	}
	ctx := context.Background()
	if _, err := allow(lim, ctx, checks...); err != nil { // loads the script (NOSCRIPT, then EVAL)
		t.Fatal(err)
	}
	mon := srv.Monitor(t)
	before := evalshaCalls(t, srv)
	d, err := allow(lim, ctx, checks...)
	if err != nil || !d.Allowed {
		t.Fatalf("Allow: %+v, %v", d, err)
	}
	if got := evalshaCalls(t, srv) - before; got != 1 {
		t.Errorf("cmdstat_evalsha calls went up by %d, want 1", got)
	}
	cmds, err := mon.Next()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("commands run: %v", cmds)
	var fromClient []string
	for _, c := range cmds {
		switch {
		case c.Client == "lua": // inside the script
		case c.Name == "INFO" || c.Name == "PING": // the test's own, rueidis keep-alives
		case c.Name == "HELLO" || c.Name == "CLIENT" || c.Name == "AUTH" || c.Name == "SELECT":
			// a connection's handshake (rueidis may open one at any time), not data
		default:
			fromClient = append(fromClient, c.Name)
		}
	}
	if len(fromClient) != 1 || fromClient[0] != "EVALSHA" {
		t.Errorf("the client sent %v, want exactly [EVALSHA]", fromClient)
	}
}

func evalshaCalls(t *testing.T, srv *redistest.Server) int {
	t.Helper()
	info, err := srv.Info("commandstats")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range strings.Split(info["cmdstat_evalsha"], ",") {
		if v, ok := strings.CutPrefix(f, "calls="); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return 0
}
