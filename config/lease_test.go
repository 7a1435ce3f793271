package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
)

// The store's lease: is every limit's default; a limit's own lease:
// overrides it, recorded by the limit's ID.
func TestLeaseOfTheStoreAndOfALimit(t *testing.T) {
	c, err := config.Parse("t.yaml", []byte(`
store:
  type: redis
  redis: {addresses: ["r:6379"], lease: auto, lease_max_units: 200, lease_max_age: 500ms}
plans:
  free:
    limits:
      - {name: per-minute, algorithm: gcra, quantity: 10, window: 1m, lease: off}
      - {name: per-day, id: day, algorithm: fixed-window, quantity: 1000, window: 24h, lease: auto}
      - {name: per-hour, algorithm: fixed-window, quantity: 100, window: 1h}
`))
	if err != nil {
		t.Fatal(err)
	}
	r := c.Store.Redis
	if r.Lease != "auto" || r.LeaseMaxUnits != 200 || r.LeaseMaxAge != 500*time.Millisecond {
		t.Errorf("store lease %q, max units %d, max age %v", r.Lease, r.LeaseMaxUnits, r.LeaseMaxAge)
	}
	if len(r.Leases) != 2 || r.Leases["per-minute"] != "off" || r.Leases["day"] != "auto" {
		t.Errorf("limits' leases %v, want per-minute off and day auto", r.Leases)
	}
}

// Without a lease: anywhere, nothing is leased.
func TestLeaseIsOffByDefault(t *testing.T) {
	c, err := config.Parse("t.yaml", []byte(`
store: {type: redis, redis: {addresses: ["r:6379"]}}
plans: {free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}}
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Store.Redis.Lease != "off" || len(c.Store.Redis.Leases) != 0 {
		t.Errorf("lease %q, leases %v", c.Store.Redis.Lease, c.Store.Redis.Leases)
	}
}

// Two limits of one state may not ask for different leases, and a lease
// is auto or off.
func TestLeaseErrorsNameTheirPlace(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{`
plans:
  free: {limits: [{name: m, id: s, algorithm: gcra, quantity: 10, window: 1m, lease: auto}]}
  pro: {limits: [{name: m, id: s, algorithm: gcra, quantity: 20, window: 1m, lease: off}]}
`, `t.yaml:4:85: plans.pro.limits[0].lease: "off": another limit of id "s" says lease: auto, and the two share one state`},
		{`
plans: {free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m, lease: always}]}}
`, `t.yaml:2:85: plans.free.limits[0].lease: "always"`},
	} {
		_, err := config.Parse("t.yaml", []byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want it to contain %s", err, c.want)
		}
	}
}

// lease_max_units and lease_max_age bound leases: where nothing is leased
// (no lease: auto, in the store section or on a limit) they are refused at
// their line, not kept as settings that do nothing.
func TestLeaseBoundsWithoutALeaseAreRefused(t *testing.T) {
	const plans = "plans:\n  free:\n    limits:\n      - {name: m, algorithm: fixed-window, quantity: 10, window: 1m%s}\n"
	for _, c := range []struct{ redis, limit, want string }{
		{"lease_max_units: 200", "", `t.yaml:3:51: store.redis.lease_max_units: applies only where a limit is leased: set lease: auto here or on a limit, or remove it`},
		{"lease: off, lease_max_age: 1s", "", `t.yaml:3:61: store.redis.lease_max_age: applies only where a limit is leased`},
		{"lease_max_age: 1s", ", lease: off", `t.yaml:3:49: store.redis.lease_max_age: applies only where a limit is leased`},
	} {
		_, err := config.Parse("t.yaml", []byte("store:\n  type: redis\n  redis: {addresses: [\"r:6379\"], "+c.redis+"}\n"+fmtPlans(plans, c.limit)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s%s: error %v, want %s", c.redis, c.limit, err, c.want)
		}
	}
	for _, c := range []struct{ redis, limit string }{
		{"lease: auto, lease_max_units: 200, lease_max_age: 1s", ""},
		{"lease_max_units: 200, lease_max_age: 1s", ", lease: auto"},
	} {
		if _, err := config.Parse("t.yaml", []byte("store:\n  type: redis\n  redis: {addresses: [\"r:6379\"], "+c.redis+"}\n"+fmtPlans(plans, c.limit))); err != nil {
			t.Errorf("%s%s: %v", c.redis, c.limit, err)
		}
	}
}

func fmtPlans(format, limit string) string { return strings.Replace(format, "%s", limit, 1) }

// A limit's lease: auto leases from Redis: on a memory store (the default)
// nothing is leased, and it is refused at its line, in the configuration
// or the keys file; lease: off says what a memory store does anyway.
func TestLeaseAutoWithoutRedisIsRefused(t *testing.T) {
	_, err := config.Parse("t.yaml", []byte(fmtPlans("plans:\n  free:\n    limits:\n      - {name: m, algorithm: fixed-window, quantity: 10, window: 1m%s}\n", ", lease: auto")))
	want := `t.yaml:4:77: plans.free.limits[0].lease: auto leases from Redis, and the store is memory: set store.type: redis, or remove it`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want %s", err, want)
	}
	if _, err := config.Parse("t.yaml", []byte(fmtPlans("plans:\n  free:\n    limits:\n      - {name: m, algorithm: fixed-window, quantity: 10, window: 1m%s}\n", ", lease: off"))); err != nil {
		t.Errorf("lease: off on a memory store: %v", err)
	}
}

// A lease lives at most lease_max_age, and one shorter than a millisecond
// ends before its take's reply can arrive: lease_max_age: 100us (100ms
// meant) loaded, and every leased check cost a round trip to Redis and a
// lease besides; under a microsecond, the state Redis last sent was never
// used. Refused at its line; 1ms loads.
func TestLeaseMaxAgeBelowAMillisecondIsRefused(t *testing.T) {
	const plans = "plans:\n  free:\n    limits:\n      - {name: m, algorithm: fixed-window, quantity: 10, window: 1m}\n"
	for _, age := range []string{"100us", "999us", "500ns"} {
		_, err := config.Parse("t.yaml", []byte("store:\n  type: redis\n  redis: {addresses: [\"r:6379\"], lease: auto, lease_max_age: "+age+"}\n"+plans))
		want := `t.yaml:3:62: store.redis.lease_max_age: ` + age + `: a lease under 1ms ends before its take's reply can arrive; give at least 1ms`
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want %s", err, want)
		}
	}
	if _, err := config.Parse("t.yaml", []byte("store:\n  type: redis\n  redis: {addresses: [\"r:6379\"], lease: auto, lease_max_age: 1ms}\n"+plans)); err != nil {
		t.Errorf("lease_max_age: 1ms: %v", err)
	}
}
