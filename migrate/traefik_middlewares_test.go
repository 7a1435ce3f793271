package migrate_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportTraefikRateLimitsInTurnAreReported: Traefik runs a router's
// middlewares one after the other; a rateLimit that admits a request keeps
// the token it reserved (golang.org/x/time/rate), so a request a later
// middleware refuses has spent it, where sluice decides a request's rules
// in one call and a refusal spends nothing. With "generous" (1 per 10s,
// burst 2) then "strict" (1 per second, burst 1): at 0s the first request
// passes, the second is refused by strict after spending generous's last
// token; at 1s Traefik's generous bucket holds 0.1 token and refuses,
// where sluice's admits. The contract: a router (or a file without
// routers) running a rateLimit before another limiting middleware is
// reported, naming them.
func TestImportTraefikRateLimitsInTurnAreReported(t *testing.T) {
	src := "http:\n" +
		"  routers:\n" +
		"    api: {rule: \"PathPrefix(`/api/`)\", middlewares: [generous, strict]}\n" +
		"  middlewares:\n" +
		"    generous: {rateLimit: {average: 1, period: 10s, burst: 2}}\n" +
		"    strict: {rateLimit: {average: 1, period: 1s, burst: 1}}\n"
	tr, err := migrate.Import("traefik", src, "traefik.yaml")
	if err != nil {
		t.Fatal(err)
	}
	now := servedAt
	h := serveImportedAt(t, tr, &now)
	got := []int{sendKey(h, "/api/x", "", "192.0.2.1"), sendKey(h, "/api/x", "", "192.0.2.1")}
	now = now.Add(time.Second)
	got = append(got, sendKey(h, "/api/x", "", "192.0.2.1"))
	if want := []int{200, 429, 200}; !equalInts(got, want) {
		t.Errorf("statuses %v, want sluice's %v (Traefik's: 200 429 429)", got, want)
	}
	if !hasDifference(tr, false, "generous, strict one after the other") {
		t.Errorf("not reported that Traefik spends generous's token on a request strict refuses: %+v", tr.Differences)
	}

	tr, err = migrate.Import("traefik", "http:\n  middlewares:\n"+
		"    generous: {rateLimit: {average: 1, period: 10s, burst: 2}}\n"+
		"    strict: {rateLimit: {average: 1, period: 1s, burst: 1}}\n", "traefik.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !hasDifference(tr, false, "generous, strict one after the other") {
		t.Errorf("a file without routers, both middlewares on every request: not reported: %+v", tr.Differences)
	}

	tr, err = migrate.Import("traefik", "http:\n  routers:\n"+
		"    api: {rule: \"PathPrefix(`/api/`)\", middlewares: [generous]}\n"+
		"    web: {rule: \"PathPrefix(`/web/`)\", middlewares: [strict]}\n"+
		"  middlewares:\n"+
		"    generous: {rateLimit: {average: 1, period: 10s, burst: 2}}\n"+
		"    strict: {rateLimit: {average: 1, period: 1s, burst: 1}}\n", "traefik.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if hasDifference(tr, false, "one after the other") {
		t.Errorf("one rateLimit per router reported as run in turn: %+v", tr.Differences)
	}
}

// TestImportedTraefikInFlightReqIsAConcurrencyLimit: Traefik's
// inFlightReq refuses a request when amount requests of its source are in
// flight, its source the request's Host unless sourceCriterion says
// otherwise. The contract: it becomes a concurrency rule of its router,
// keyed as its source, in a file-provider configuration and in a
// Kubernetes Middleware; an amount below 1, with which Traefik refuses
// every request, is refused.
func TestImportedTraefikInFlightReqIsAConcurrencyLimit(t *testing.T) {
	for _, c := range []struct{ name, src, key string }{
		{"file provider, by Host", "http:\n  routers:\n" +
			"    api: {rule: \"PathPrefix(`/api/`)\", middlewares: [rl, inflight]}\n" +
			"  middlewares:\n" +
			"    rl: {rateLimit: {average: 100}}\n" +
			"    inflight: {inFlightReq: {amount: 2}}\n", "host"},
		{"Kubernetes, by address", "apiVersion: traefik.io/v1alpha1\nkind: Middleware\n" +
			"metadata: {name: inflight, namespace: shop}\n" +
			"spec: {inFlightReq: {amount: 2, sourceCriterion: {ipStrategy: {}}}}\n" +
			"---\napiVersion: traefik.io/v1alpha1\nkind: IngressRoute\nmetadata: {name: api, namespace: shop}\n" +
			"spec:\n  routes:\n    - {match: \"PathPrefix(`/api/`)\", kind: Rule, middlewares: [{name: inflight}]}\n", "ip/32/128"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr, err := migrate.Import("traefik", c.src, "traefik.yaml")
			if err != nil {
				t.Fatal(err)
			}
			load(t, tr, true) // the configuration written loads
			found := false
			for _, r := range tr.SluiceRules {
				for _, l := range r.Limits {
					if l.Algorithm != "concurrency" {
						continue
					}
					found = true
					if l.Quantity != 2 || !slices.Equal(r.Paths, []string{"/api/"}) || !slices.Equal(r.Key, []string{c.key}) {
						t.Errorf("rule %s: concurrency %d on %v keyed by %v, want 2 on [/api/] keyed by %s", r.Name, l.Quantity, r.Paths, r.Key, c.key)
					}
				}
			}
			if !found {
				t.Errorf("no concurrency rule imported of inFlightReq amount 2:\n%s", tr.Report())
			}
		})
	}
	if _, err := migrate.Import("traefik", "http:\n  middlewares:\n    inflight: {inFlightReq: {amount: 0}}\n", "traefik.yaml"); err == nil || !strings.Contains(err.Error(), "amount 0") {
		t.Errorf("inFlightReq amount 0 (Traefik refuses every request): err %v, want it refused", err)
	}
}

// TestImportedTraefikMiddlewaresAreNamespaced: Kubernetes Middlewares are
// namespaced, and a reference names one of the referring resource's
// namespace, or of the namespace it gives, or (<namespace>-<name>@kubernetescrd)
// the one Traefik names so. Two Middlewares "rl", in namespace a (100 a
// second, burst 100) and b (1, burst 1): the contract is that each route
// runs the one its reference names.
func TestImportedTraefikMiddlewaresAreNamespaced(t *testing.T) {
	const middlewares = "apiVersion: traefik.io/v1alpha1\nkind: Middleware\nmetadata: {name: rl, namespace: a}\nspec: {rateLimit: {average: 100, burst: 100}}\n" +
		"---\napiVersion: traefik.io/v1alpha1\nkind: Middleware\nmetadata: {name: rl, namespace: b}\nspec: {rateLimit: {average: 1, burst: 1}}\n"
	route := func(ns, ref string) string {
		return "---\napiVersion: traefik.io/v1alpha1\nkind: IngressRoute\nmetadata: {name: api, namespace: " + ns + "}\nspec:\n  routes:\n    - {match: \"PathPrefix(`/api/`)\", kind: Rule, middlewares: [" + ref + "]}\n"
	}
	for _, c := range []struct {
		name, route string
		admitted    int // of 5 at once
	}{
		{"its own namespace's", route("a", "{name: rl}"), 5},
		{"the other namespace's", route("b", "{name: rl}"), 1},
		{"the namespace the reference gives", route("a", "{name: rl, namespace: b}"), 1},
		{"<namespace>-<name>@kubernetescrd", route("a", "{name: b-rl@kubernetescrd}"), 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr, err := migrate.Import("traefik", middlewares+c.route, "traefik.yaml")
			if err != nil {
				t.Fatal(err)
			}
			h := serveImported(t, tr)
			admitted := 0
			for range 5 {
				if sendKey(h, "/api/x", "", "192.0.2.1") == 200 {
					admitted++
				}
			}
			if admitted != c.admitted {
				t.Errorf("%d of 5 requests at once admitted, want %d", admitted, c.admitted)
			}
		})
	}
}

// TestImportTraefikUnknownMiddlewareIsReported: a router naming a
// middleware the file does not define (another provider's, such as
// ratelimit@docker, or another file's) may run a limit the import cannot
// read. The contract: each is reported, saying its router's requests are
// imported as unlimited by it; a middleware the file defines, of any kind,
// is not.
func TestImportTraefikUnknownMiddlewareIsReported(t *testing.T) {
	src := "http:\n" +
		"  routers:\n" +
		"    api: {rule: \"PathPrefix(`/api/`)\", middlewares: [ratelimit@docker, strip]}\n" +
		"    web: {rule: \"PathPrefix(`/web/`)\", middlewares: [local]}\n" +
		"  middlewares:\n" +
		"    local: {rateLimit: {average: 1, period: 1m}}\n" +
		"    strip: {stripPrefix: {prefixes: [/api]}}\n"
	tr, err := migrate.Import("traefik", src, "traefik.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !hasDifference(tr, false, "router api middleware ratelimit@docker: the file does not define ratelimit@docker") ||
		!hasDifference(tr, false, "router api's requests are imported as unlimited by it") {
		t.Errorf("ratelimit@docker, which the file does not define, not reported:\n%s", tr.Report())
	}
	if hasDifference(tr, false, "does not define strip") {
		t.Errorf("strip, which the file defines, reported as undefined:\n%s", tr.Report())
	}
}

// TestImportTraefikRefusesIPStrategyWithRequestHeaderName: Traefik (since
// 2.11) refuses a sourceCriterion with both ipStrategy and
// requestHeaderName as mutually exclusive. The contract: the import
// refuses it too, naming the middleware, rather than key it by a header
// any client sets where the author meant the address.
func TestImportTraefikRefusesIPStrategyWithRequestHeaderName(t *testing.T) {
	for _, kind := range []string{"rateLimit: {average: 1, period: 1m", "inFlightReq: {amount: 1"} {
		src := "http:\n" +
			"  routers:\n" +
			"    api: {rule: \"PathPrefix(`/api/`)\", middlewares: [rl]}\n" +
			"  middlewares:\n" +
			"    rl: {" + kind + ", sourceCriterion: {ipStrategy: {}, requestHeaderName: X-Tenant}}}\n"
		_, err := migrate.Import("traefik", src, "traefik.yaml")
		if err == nil || !strings.Contains(err.Error(), "middleware rl") || !strings.Contains(err.Error(), "mutually exclusive") {
			t.Errorf("%s with ipStrategy and requestHeaderName: err %v, want it refused as mutually exclusive", kind, err)
		}
	}
}

// A Traefik file whose only limiting middleware is an inFlightReq is
// detected as Traefik's, as one of a rateLimit is, in YAML and in TOML.
func TestDetectFindsTraefikByItsInFlightReq(t *testing.T) {
	for _, src := range []string{
		"http:\n  middlewares:\n    at-once:\n      inFlightReq:\n        amount: 10\n",
		"[http.middlewares.at-once.inFlightReq]\n  amount = 10\n",
	} {
		if f, ok := migrate.Detect(src); !ok || f != migrate.FormatTraefik {
			t.Errorf("Detect(%q) = %q, %v; want %q", src, f, ok, migrate.FormatTraefik)
		}
	}
}
