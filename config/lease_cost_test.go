package config_test

import (
	"fmt"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// TestALeasedBucketCostAboveItsSharedBurstIsRefusedAtLoad: configuration
// refuses a cost above a limit's burst ("such requests could never be
// admitted"). A bucket the Redis store leases (lease: auto, the store's or
// its own) is decided with its burst less its hold-back
// (leasehold.Of: a GCRA of burst 10 holds back 2), and the
// store refuses a cost above that shared burst as one above a burst
// (redis.TestALeasedBucketRefusesACostAboveItsSharedBurstAsAboveABurst).
// The contract: such a cost is refused at its line — a plan's cost against
// the plan's and the global limits, a key's own limits, a rule's cost: and
// the plan costs a rule without cost: charges — naming the shared burst,
// the hold-back and the remedies (lease: off on the limit, or the least
// burst that admits the cost); a cost the shared burst holds, a limit with
// lease: off, and a store that leases nothing load.
func TestALeasedBucketCostAboveItsSharedBurstIsRefusedAtLoad(t *testing.T) {
	const store = "store:\n  type: redis\n  redis: {addresses: [\"r:6379\"], lease: auto}\n"
	const gcra = "{name: per-minute, algorithm: gcra, quantity: 10, window: 1m, burst: 10"
	const why = "more than limit %s admits at once while leased from Redis (lease: auto): its shared state decides every check " +
		"with a burst of 8, its 10 less the 2 it holds back (what refills in a lease's life, 12s), and such requests could never " +
		"be admitted (%sset lease: off on the limit, or give it a burst of at least %d)"
	for _, c := range []struct{ name, yaml, want string }{
		{"a plan's cost of the whole burst", store + `plans:
  free:
    limits:
      - ` + gcra + `}
    costs:
      "POST /v1/reports": 10
`, `t.yaml:9:7: plans.free.costs.POST /v1/reports: costs 10, ` + fmt.Sprintf(why, "per-minute", "", 13)},
		{"a plan's cost against a global limit", store + `global:
  - ` + gcra + `}
plans:
  free:
    limits: [{name: per-day, algorithm: fixed-window, quantity: 1000, window: 24h}]
    costs:
      "POST /v1/reports": 9
`, `t.yaml:10:7: plans.free.costs.POST /v1/reports: costs 9, ` + fmt.Sprintf(why, "per-minute", "", 11)},
		{"a rule's cost", store + `plans: {free: {limits: [{name: per-day, algorithm: fixed-window, quantity: 1000, window: 24h}]}}
rules:
  - name: reports
    cost: 9
    limits:
      - ` + gcra + `}
`, `t.yaml:7:11: rules[0].cost: 9, ` + fmt.Sprintf(why, "per-minute", "", 11)},
		{"a plan's cost that a rule without cost: charges", `store:
  type: redis
  redis: {addresses: ["r:6379"]}
plans:
  free:
    limits: [{name: per-day, algorithm: fixed-window, quantity: 1000, window: 24h}]
    costs:
      "POST /v1/reports": 9
rules:
  - name: reports
    match: {paths: [/v1/]}
    limits:
      - ` + gcra + `, lease: auto}
`, `t.yaml:13:7: rules[0].limits: "POST /v1/reports" costs 9 on plan free (plans.free.costs, line 8), which the rule ` +
			`charges as it sets no cost, ` + fmt.Sprintf(why, "per-minute", "give the rule a cost:, ", 11)},
		{"a key's own limit", store + `plans:
  pro:
    limits: [{name: per-day, algorithm: fixed-window, quantity: 1000, window: 24h}]
    costs:
      "POST /v1/reports": 9
keys:
  - name: acme
    sha256: 1fbfd5e2a34698deb796eb78add256a067ec065519b8329b1eb85f5e2ef906d4
    plan: pro
    limits:
      - ` + gcra + `}
`, `t.yaml:14:16: keys[0].limits[0].name: "POST /v1/reports" costs 9 on the key's plan, ` + fmt.Sprintf(why, "per-minute", "", 11)},
	} {
		_, err := config.Parse("t.yaml", []byte(c.yaml))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n%v\nwant exactly:\n%s", c.name, err, c.want)
		}
	}
	for _, c := range []struct{ name, yaml string }{
		{"a cost of the shared burst", store + "plans:\n  free:\n    limits:\n      - " + gcra + "}\n    costs: {\"POST /v1/reports\": 8}\n"},
		{"the limit's own lease: off", store + "plans:\n  free:\n    limits:\n      - " + gcra + ", lease: off}\n    costs: {\"POST /v1/reports\": 10}\n"},
		{"a Redis store that leases nothing", "store: {type: redis, redis: {addresses: [\"r:6379\"]}}\n" +
			"plans:\n  free:\n    limits:\n      - " + gcra + "}\n    costs: {\"POST /v1/reports\": 10}\n"},
		{"a larger burst", store + "plans:\n  free:\n    limits:\n      - {name: per-minute, algorithm: gcra, quantity: 10, window: 1m, burst: 13}\n    costs: {\"POST /v1/reports\": 10}\n"},
		{"a window, never held back", store + "plans:\n  free:\n    limits: [{name: m, algorithm: fixed-window, quantity: 10, window: 1m}]\n" +
			"    costs: {\"POST /v1/reports\": 10}\n"},
	} {
		if _, err := config.Parse("t.yaml", []byte(c.yaml)); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
