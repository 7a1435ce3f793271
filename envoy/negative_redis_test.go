package envoy_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/overlimit"
	"github.com/sluice-dev/sluice/redis"
)

// On the store sluice serve runs Envoy's rules on — Redis behind an
// over-limit cache, in a failover store — with Redis's clock and the
// service's, units given back go back to the window Redis counts.
func TestNegativeHitsGiveBackOnRedis(t *testing.T) {
	rs := redistest.Standalone(t)
	local := memory.New(memory.WithSweepInterval(0))
	t.Cleanup(func() { local.Close() })
	primary := redis.New(rs.Client(t), redis.WithTimeout(5*time.Second))
	store, err := failover.New(overlimit.New(primary, overlimit.Options{}), local, failover.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	rules, err := envoy.LoadRules("rules.yaml", []byte(`
domain: api
descriptors:
  - key: client
    rate_limit: {name: per-client, unit: hour, requests_per_unit: 5}
`))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := envoy.NewService(sluice.NewLimiter(store), rules, envoy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if left := time.Until(time.Now().Truncate(time.Hour).Add(time.Hour)); left < 20*time.Second {
		time.Sleep(left + time.Second) // not across an hour's end
	}
	ask := func(hits uint32, d ...string) (string, uint32) {
		t.Helper()
		req := request("api", hits, desc("client", d[0]))
		if len(d) > 1 {
			req.Descriptors[0].IsNegativeHits = true
		}
		resp, err := svc.ShouldRateLimit(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Statuses[0].Code.String(), resp.Statuses[0].LimitRemaining
	}
	for i, c := range []struct {
		hits   uint32
		d      []string
		code   string
		remain uint32
	}{
		{3, []string{"c"}, "OK", 2},
		{2, []string{"c", "back"}, "OK", 4},
		{4, []string{"c"}, "OK", 0},
		{1, []string{"c"}, "OVER_LIMIT", 0},
		{3, []string{"c", "back"}, "OK", 0}, // a window that went over gives nothing back
		{1, []string{"c"}, "OVER_LIMIT", 0},
		{1, []string{"d"}, "OK", 4},
		{100, []string{"d", "back"}, "OK", 5}, // never more than the limit
		{5, []string{"d"}, "OK", 0},
		{1, []string{"d"}, "OVER_LIMIT", 0},
	} {
		if code, remain := ask(c.hits, c.d...); code != c.code || remain != c.remain {
			t.Errorf("call %d %v: %s %d remaining, want %s %d", i, c.d, code, remain, c.code, c.remain)
		}
	}
}
