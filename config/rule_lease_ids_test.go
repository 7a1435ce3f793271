package config_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// ruleLeaseConfig is a configuration on Redis (store: the store's redis
// settings beyond its address) with plan free's limit per-minute (planLease:
// its settings beyond the limit's own) and rule uploads' limit of that name
// (ruleLease likewise): two states, per-minute and uploads.per-minute.
func ruleLeaseConfig(store, planLease, ruleLease string) []byte {
	return []byte(`store:
  type: redis
  redis: {addresses: ["127.0.0.1:6379"]` + store + `}
plans:
  free:
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m` + planLease + `}]
rules:
  - name: uploads
    match: {paths: [/upload]}
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 5, window: 1m` + ruleLease + `}]
`)
}

// A rule's limit is decided by the store under the ID "<rule>.<limit>" (a
// rule's limits are named so in the store too), and Redis looks the
// lease: of a limit up by that ID (redis.LeaseOptions.Limits): the lease:
// a rule's limit says is recorded under it, setting the mode of the rule's
// limit, never of a plan's limit of its bare name.
func TestARuleLimitsLeaseIsRecordedUnderItsStoreID(t *testing.T) {
	cfg, err := config.Parse("l.yaml", ruleLeaseConfig(", lease: auto", "", `, lease: "off"`))
	if err != nil {
		t.Fatal(err)
	}
	if leases := cfg.Store.Redis.Leases; len(leases) != 1 || leases["uploads.per-minute"] != "off" {
		t.Errorf("Redis.Leases %v, want only uploads.per-minute off: the plan's per-minute says no lease: and is leased as the store says", leases)
	}
}

// Two limits of one ID, one state, may not say different lease: modes; a
// plan's limit and a rule's limit of one bare name are two states
// (per-minute and uploads.per-minute), and may.
func TestARuleLimitAndAPlanLimitOfOneNameLeaseApart(t *testing.T) {
	cfg, err := config.Parse("l.yaml", ruleLeaseConfig("", ", lease: auto", `, lease: "off"`))
	if err != nil {
		t.Fatalf("plan limit per-minute and rule limit uploads.per-minute, two states, refused: %v", err)
	}
	if leases := cfg.Store.Redis.Leases; leases["per-minute"] != "auto" || leases["uploads.per-minute"] != "off" {
		t.Errorf("Redis.Leases %v, want per-minute auto and uploads.per-minute off", leases)
	}
}

// A limit counted by the answer (count: failures) needs exact refunds,
// which a leased unit cannot give: it is refused where the store leases
// it, judged by the lease: under the ID the store looks up. A rule's
// limit that says no lease: of its own is leased as the store says, however
// a plan's limit of its bare name is leased; one that says lease: off is
// not, and may count by the answer.
func TestARuleLimitCountedByTheAnswerIsJudgedByItsOwnLease(t *testing.T) {
	_, err := config.Parse("l.yaml", ruleLeaseConfig(", lease: auto", `, lease: "off"`, ", count: failures"))
	want := `l.yaml:10:90: rules[0].limits[0].count: failures needs exact refunds, which leased quota cannot give`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("rule limit uploads.per-minute, leased by the store's lease: auto, counting failures: error %v, want %s", err, want)
	}
	cfg, err := config.Parse("l.yaml", ruleLeaseConfig(", lease: auto", "", `, lease: "off", count: failures`))
	if err != nil {
		t.Fatalf("rule limit uploads.per-minute of lease: off counting failures refused: %v", err)
	}
	if lease := cfg.Store.Redis.Leases["uploads.per-minute"]; lease != "off" {
		t.Errorf("rule limit counting failures accepted as lease: off, and the store leases uploads.per-minute: %q (Leases %v)", lease, cfg.Store.Redis.Leases)
	}
}

// A rule's count: counts its limits alike (all are named after the rule),
// and is judged against their leases under their IDs in the store: a
// plan's limit of a rule limit's bare name does not lend it its lease: off.
func TestARulesCountIsJudgedByItsLimitsOwnLeases(t *testing.T) {
	yml := strings.Replace(string(ruleLeaseConfig(", lease: auto", `, lease: "off"`, "")),
		"    match: {paths: [/upload]}\n", "    match: {paths: [/upload]}\n    count: failures\n", 1)
	want := `l.yaml:10:12: rules[0].count: failures needs exact refunds, which leased quota cannot give`
	if _, err := config.Parse("l.yaml", []byte(yml)); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("rule uploads counting failures, its limit leased by the store's lease: auto: error %v, want %s", err, want)
	}
}
