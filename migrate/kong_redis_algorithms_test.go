package migrate_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/migrate"
)

// limitIDs returns the name, algorithm and ID of each limit of plan in
// cfg, one "name algorithm id" string each, in order.
func limitIDs(t *testing.T, cfg *config.Config, plan string) []string {
	t.Helper()
	p := cfg.Policy.Plan(plan)
	if p == nil {
		t.Fatalf("no plan %s", plan)
	}
	var out []string
	for _, l := range p.Limits {
		out = append(out, l.Name()+" "+l.Algorithm().String()+" "+l.ID())
	}
	return out
}

// wantLimitIDs fails t unless plan's limits in cfg are want (limitIDs).
func wantLimitIDs(t *testing.T, cfg *config.Config, plan string, want ...string) {
	t.Helper()
	if got := limitIDs(t, cfg, plan); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("plan %s:\n%s\nwant:\n%s", plan, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// wantIDsReported fails t unless tr's report says, at "limit <id>", why
// the limits of id's other algorithms took the id given.
func wantIDsReported(t *testing.T, tr *migrate.Translation, id, given string) {
	t.Helper()
	for _, d := range tr.Differences {
		if d.Where == "limit "+id && d.Same && strings.Contains(d.Text, "id: "+given) && strings.Contains(d.Text, "Redis keeps one state per client and ID") {
			return
		}
	}
	t.Errorf("no report at limit %s of id: %s:\n%s", id, given, tr.Report())
}

// TestImportedKongRedisPlansOfTwoAlgorithmsCountApart: on the Redis store
// (policy redis), consumers' plans whose limits of one name count by two
// algorithms — alice's rate-limiting (fixed window) and bob's and carol's
// rate-limiting-advanced (sliding window), each "per-minute" — import as a
// configuration that loads: the algorithm read first keeps the name as its
// ID, the other's limits take id "<name>-<algorithm>", one for them all
// (bob and carol share it, as on the memory store), their names unchanged,
// and the report says why.
func TestImportedKongRedisPlansOfTwoAlgorithmsCountApart(t *testing.T) {
	tr, err := migrate.Import(migrate.FormatKong, `_format_version: "3.0"
plugins:
- name: key-auth
services:
- name: web
  url: http://web.internal
  routes: [{name: web, paths: [/]}]
consumers:
- username: alice
  keyauth_credentials: [{key: alice-key}]
  plugins: [{name: rate-limiting, config: {minute: 5, policy: redis, redis: {host: redis.internal}}}]
- username: bob
  keyauth_credentials: [{key: bob-key}]
  plugins: [{name: rate-limiting-advanced, config: {limit: [5], window_size: [60], identifier: consumer, strategy: redis, redis: {host: redis.internal}}}]
- username: carol
  keyauth_credentials: [{key: carol-key}]
  plugins: [{name: rate-limiting-advanced, config: {limit: [7], window_size: [60], identifier: consumer, strategy: redis, redis: {host: redis.internal}}}]
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := load(t, tr, false)
	if cfg.Store.Type != "redis" {
		t.Fatalf("store %s, want redis", cfg.Store.Type)
	}
	wantLimitIDs(t, cfg, "consumer-alice", "per-minute fixed-window per-minute")
	wantLimitIDs(t, cfg, "consumer-bob", "per-minute sliding-window-counter per-minute-sliding-window-counter")
	wantLimitIDs(t, cfg, "consumer-carol", "per-minute sliding-window-counter per-minute-sliding-window-counter")
	wantIDsReported(t, tr, "per-minute", "per-minute-sliding-window-counter")
}

// TestImportedKongRedisWiderPluginKeepsItsLimitID: on the Redis store, a
// global rate-limiting plugin (the imported plan's fixed-window
// "per-minute", read first) keeps its name as its ID, and a consumer's
// rate-limiting-advanced "per-minute" (sliding window) takes an id of its
// own, beside the copy of the wider plugin's limit in its plan: the
// configuration loads.
func TestImportedKongRedisWiderPluginKeepsItsLimitID(t *testing.T) {
	tr, err := migrate.Import(migrate.FormatKong, `_format_version: "3.0"
plugins:
- name: key-auth
- name: rate-limiting
  config: {minute: 100, policy: redis, redis: {host: redis.internal}}
services:
- name: web
  url: http://web.internal
  routes: [{name: web, paths: [/]}]
consumers:
- username: bob
  keyauth_credentials: [{key: bob-key}]
  plugins: [{name: rate-limiting-advanced, config: {limit: [5], window_size: [60], identifier: consumer, strategy: redis}}]
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := load(t, tr, true)
	wantLimitIDs(t, cfg, migrate.PlanName, "per-minute fixed-window per-minute")
	wantLimitIDs(t, cfg, "consumer-bob",
		"per-minute sliding-window-counter per-minute-sliding-window-counter",
		"per-minute-2 fixed-window per-minute-2")
	wantIDsReported(t, tr, "per-minute", "per-minute-sliding-window-counter")
}

// TestImportedKongIngressControllerRedisPlansOfTwoAlgorithmsLoad: the Kong
// Ingress Controller's KongConsumers with a KongPlugin of policy redis
// (fixed window) and one of rate-limiting-advanced (sliding window), each
// "per-minute", import as a configuration that loads, the sliding ones
// under an id of their own.
func TestImportedKongIngressControllerRedisPlansOfTwoAlgorithmsLoad(t *testing.T) {
	tr, err := migrate.Import(migrate.FormatKong, `apiVersion: configuration.konghq.com/v1
kind: KongClusterPlugin
metadata: {name: auth, labels: {global: "true"}}
plugin: key-auth
---
apiVersion: configuration.konghq.com/v1
kind: KongPlugin
metadata: {name: fixed-rl, namespace: shop}
plugin: rate-limiting
config: {minute: 5, policy: redis, redis: {host: redis.internal}}
---
apiVersion: configuration.konghq.com/v1
kind: KongPlugin
metadata: {name: sliding-rl, namespace: shop}
plugin: rate-limiting-advanced
config: {limit: [5], window_size: [60], identifier: consumer, strategy: redis}
---
apiVersion: configuration.konghq.com/v1
kind: KongConsumer
metadata: {name: alice, namespace: shop, annotations: {konghq.com/plugins: fixed-rl}}
username: alice
credentials: [alice-key]
---
apiVersion: v1
kind: Secret
metadata: {name: alice-key, namespace: shop, labels: {konghq.com/credential: key-auth}}
stringData: {key: alice-secret}
---
apiVersion: configuration.konghq.com/v1
kind: KongConsumer
metadata: {name: bob, namespace: shop, annotations: {konghq.com/plugins: sliding-rl}}
username: bob
credentials: [bob-key]
---
apiVersion: v1
kind: Secret
metadata: {name: bob-key, namespace: shop, labels: {konghq.com/credential: key-auth}}
stringData: {key: bob-secret}
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := load(t, tr, true)
	if cfg.Store.Type != "redis" {
		t.Fatalf("store %s, want redis", cfg.Store.Type)
	}
	var plans []string
	for _, p := range cfg.Policy.Plans {
		plans = append(plans, p.Name)
	}
	var ids []string
	for _, p := range plans {
		ids = append(ids, limitIDs(t, cfg, p)...)
	}
	got := strings.Join(ids, "\n")
	for _, want := range []string{"per-minute fixed-window per-minute", "per-minute sliding-window-counter per-minute-sliding-window-counter"} {
		if !strings.Contains(got, want) {
			t.Errorf("plans %v' limits:\n%s\nwant one %q", plans, got, want)
		}
	}
}

// TestImportedKongLocalPlansOfTwoAlgorithmsKeepTheirNames: on the memory
// store (policy local), which keeps a state per ID and algorithm, plans'
// limits of one name and two algorithms keep their name as their ID.
func TestImportedKongLocalPlansOfTwoAlgorithmsKeepTheirNames(t *testing.T) {
	tr, err := migrate.Import(migrate.FormatKong, `_format_version: "3.0"
plugins:
- name: key-auth
services:
- name: web
  url: http://web.internal
  routes: [{name: web, paths: [/]}]
consumers:
- username: alice
  keyauth_credentials: [{key: alice-key}]
  plugins: [{name: rate-limiting, config: {minute: 5, policy: local}}]
- username: bob
  keyauth_credentials: [{key: bob-key}]
  plugins: [{name: rate-limiting-advanced, config: {limit: [5], window_size: [60], identifier: consumer, strategy: local}}]
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := load(t, tr, true)
	wantLimitIDs(t, cfg, "consumer-alice", "per-minute fixed-window per-minute")
	wantLimitIDs(t, cfg, "consumer-bob", "per-minute sliding-window-counter per-minute")
}
