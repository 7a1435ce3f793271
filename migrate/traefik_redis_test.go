package migrate_test

import (
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportTraefikRedisAddress: a rateLimit middleware's redis.endpoints
// (Traefik 3.4) name its Redis; the imported store is that Redis.
func TestImportTraefikRedisAddress(t *testing.T) {
	for name, src := range map[string]string{
		"plan": `http:
  middlewares:
    rl:
      rateLimit: {average: 10, burst: 20, redis: {endpoints: ["redis.internal:6380"], db: 3}}
`,
		"routers": `http:
  routers:
    api: {rule: "PathPrefix(` + "`/api/`" + `)", service: api, middlewares: [rl]}
  middlewares:
    rl:
      rateLimit: {average: 10, burst: 20, redis: {endpoints: ["redis.internal:6380"], db: 3}}
`,
	} {
		t.Run(name, func(t *testing.T) {
			tr, err := migrate.Import("traefik", src, "dynamic.yaml")
			if err != nil {
				t.Fatal(err)
			}
			cfg := load(t, tr, false)
			if got := cfg.Store.Redis.Addresses; !slices.Equal(got, []string{"redis.internal:6380"}) || cfg.Store.Redis.DB != 3 {
				t.Errorf("store.redis: addresses %v, db %d, want [redis.internal:6380], db 3", got, cfg.Store.Redis.DB)
			}
		})
	}
}

// TestImportedTraefikRedisRoutersOfDifferentHostsCountOnce: with Redis
// storage Traefik keeps one bucket set for every router naming the
// middleware, whatever the routers match: two routers of different hosts
// (a.example/orders, b.example/billing) share one bucket of 3 per client.
// The import is one rule with an alternative per router, and a router's
// path on the other router's host is neither's.
func TestImportedTraefikRedisRoutersOfDifferentHostsCountOnce(t *testing.T) {
	tr, err := migrate.Import("traefik", "http:\n"+
		"  routers:\n"+
		"    a: {rule: \"Host(`a.example`) && PathPrefix(`/orders`)\", service: s, middlewares: [rl]}\n"+
		"    b: {rule: \"Host(`b.example`) && PathPrefix(`/billing`) && Method(`POST`)\", service: s, middlewares: [rl]}\n"+
		"  middlewares:\n"+
		"    rl: {rateLimit: {average: 3, period: 1m, burst: 3, redis: {endpoints: [\"redis.internal:6379\"]}}}\n", "dynamic.yaml")
	if err != nil {
		t.Fatal(err)
	}
	load(t, tr, true)
	h := serveImported(t, tr)
	n := 0
	for i := range 6 {
		method, host, path := "GET", "a.example", "/orders/x"
		if i%2 == 1 {
			method, host, path = "POST", "b.example", "/billing"
		}
		r := httptest.NewRequest(method, "http://"+host+path, nil)
		r.RemoteAddr = "192.0.2.1:1234"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code == 200 {
			n++
		}
	}
	if n != 3 {
		t.Errorf("a.example/orders and POST b.example/billing, one bucket of 3 in Traefik's Redis: %d of 6 admitted, want 3", n)
	}
	expectRequests(t, h, []request{
		{"GET", "a.example", "/billing", "192.0.2.1", 200}, // b's path on a's host: no router's
		{"GET", "b.example", "/billing", "192.0.2.1", 200}, // b's path, not its method
		{"POST", "b.example", "/orders", "192.0.2.1", 200}, // a's path on b's host
		{"GET", "a.example", "/orders", "192.0.2.2", 200},  // another client
	})
	if len(tr.SluiceRules) != 1 {
		t.Errorf("%d rules, want 1: %+v", len(tr.SluiceRules), tr.SluiceRules)
	}
	if !hasDifference(tr, true, "middleware rl redis") || hasDifference(tr, false, "counts apart") {
		t.Errorf("the report does not say the routers count once: %+v", tr.Differences)
	}
}

// TestImportedTraefikRedisRuleLeavesOutALongerRouter: Traefik sends a
// request to one router, the longest rule, so router special's requests
// (a middleware of its own) do not count in the Redis bucket set of the
// routers of /orders/; the shared rule, of one match or of an alternative
// per router, leaves special's paths out (except_paths). The second case
// passes on the code that wrote a rule per router, and guards it.
func TestImportedTraefikRedisRuleLeavesOutALongerRouter(t *testing.T) {
	for name, hosts := range map[string][3]string{
		"one match":    {"", "", ""},
		"alternatives": {"Host(`a.example`) && ", "Host(`b.example`) && ", "Host(`a.example`) && "},
	} {
		t.Run(name, func(t *testing.T) {
			tr, err := migrate.Import("traefik", "http:\n"+
				"  routers:\n"+
				"    orders: {rule: \""+hosts[0]+"PathPrefix(`/orders/`)\", service: s, middlewares: [rl]}\n"+
				"    billing: {rule: \""+hosts[1]+"Path(`/billing`)\", service: s, middlewares: [rl]}\n"+
				"    special: {rule: \""+hosts[2]+"PathPrefix(`/orders/special/`)\", service: s, middlewares: [other]}\n"+
				"  middlewares:\n"+
				"    rl: {rateLimit: {average: 3, period: 1m, burst: 3, redis: {endpoints: [\"redis.internal:6379\"]}}}\n"+
				"    other: {rateLimit: {average: 100, period: 1m, burst: 100}}\n", "dynamic.yaml")
			if err != nil {
				t.Fatal(err)
			}
			var reqs []request
			for range 4 {
				reqs = append(reqs, request{"GET", "a.example", "/orders/special/x", "192.0.2.1", 200}) // special's 100
			}
			for range 3 {
				reqs = append(reqs, request{"GET", "a.example", "/orders/x", "192.0.2.1", 200}) // rl's 3, untouched by special's
			}
			reqs = append(reqs, request{"GET", "a.example", "/orders/x", "192.0.2.1", 429})
			expectRequests(t, serveImported(t, tr), reqs)
			if !hasDifference(tr, true, "router special: Traefik sends its requests to it alone") {
				t.Errorf("the report does not say the rule leaves router special out: %+v", tr.Differences)
			}
		})
	}
}
