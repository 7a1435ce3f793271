package server_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/internal/realtest"
)

// TestPenaltyBoxThroughTheProxy: on memory and Redis, a client refused
// twice within a minute is refused for 5 minutes with the box's problem
// type, though its quota is back, and admitted once they are over; the box
// counts in sluice_decisions_total as limit "penalty".
func TestPenaltyBoxThroughTheProxy(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		cfg := realtest.Replace(t, "testConfig", testConfig, "exempt:", "penalty: {refusals: 2, within: 1m, for: 5m}\nexempt:")
		f := newFixture(t, cfg, kind)
		for range 5 { // 3 admitted, 2 refused: boxed
			f.do(t, "GET", "/api/search", "", nil)
		}
		f.clock.Advance(2 * time.Minute)
		r := f.do(t, "GET", "/api/search", "", nil)
		body := readAll(t, r)
		if r.StatusCode != 429 || r.Header.Get("Retry-After") != "180" || !strings.Contains(body, `"type":"https://github.com/sluice-dev/sluice/blob/main/docs/rules.md#penalty-box"`) {
			t.Fatalf("boxed: %d %q %s", r.StatusCode, r.Header.Get("Retry-After"), body)
		}
		f.clock.Advance(3 * time.Minute)
		if r := f.do(t, "GET", "/api/search", "", nil); r.StatusCode != 200 {
			t.Errorf("after the box: %d", r.StatusCode)
		}
		if n := f.hits.Load(); n != 4 {
			t.Errorf("upstream saw %d requests, want 4", n)
		}
		metrics := readAll(t, f.do(t, "GET", "/metrics", "", nil))
		if !strings.Contains(metrics, `sluice_decisions_total{limit="penalty",policy="free",result="limited"} 1`) {
			t.Errorf("metrics:\n%s", grepLines(metrics, "decisions_total"))
		}
		f.noStoreErrors(t)
	})
}

// TestOperatorPenalizesAndReleasesAClient: on memory and Redis, an
// operator puts a listed key's client in the penalty box (POST
// /v1/keys/name:k1?action=penalize): its next request is refused by the
// box though it has quota, its state shows the box, and a reset of limit
// penalty takes it out at once. Without a penalty box the request is a
// 409; a subject that is not a client's, or another action, a 400.
func TestOperatorPenalizesAndReleasesAClient(t *testing.T) {
	cfg := realtest.Replace(t, "testConfig", testConfig, "exempt:", "penalty: {refusals: 2, within: 1m, for: 5m}\nexempt:")
	for _, kind := range storeKinds {
		t.Run(kind, func(t *testing.T) {
			var logs bytes.Buffer
			f := loggedFixture(t, cfg, &logs)
			if kind == "redis" {
				f = redisFixture(t, cfg, &logs) // the store as served: over-limit cache and failover
			}
			key := map[string]string{"X-API-Key": "demo-free-key"}
			if r := f.do(t, "GET", "/api/search", "", key); r.StatusCode != 200 {
				t.Fatalf("before: %d", r.StatusCode)
			}
			r := f.do(t, "POST", "/v1/keys/name:k1?action=penalize", "", nil)
			if body := readAll(t, r); r.StatusCode != 200 || !strings.Contains(body, `"penalizedForMs":300000`) {
				t.Fatalf("penalize: %d %s", r.StatusCode, body)
			}
			r = f.do(t, "GET", "/api/search", "", key)
			if body := readAll(t, r); r.StatusCode != 429 || r.Header.Get("Retry-After") != "300" || !strings.Contains(body, "#penalty-box") {
				t.Fatalf("after penalize: %d %q %s", r.StatusCode, r.Header.Get("Retry-After"), body)
			}
			if body := readAll(t, f.do(t, "GET", "/v1/keys/name:k1", "", nil)); !strings.Contains(body, `"name":"penalty","algorithm":"gcra","quantity":1,"window":"5m","burst":1,"remaining":0,"used":1,"resetAfterMs":300000`) {
				t.Errorf("inspect does not show the box:\n%s", body)
			}
			if r := f.do(t, "DELETE", "/v1/keys/name:k1?limit=penalty", "", nil); r.StatusCode != 200 {
				t.Fatalf("release: %d %s", r.StatusCode, readAll(t, r))
			}
			if r := f.do(t, "GET", "/api/search", "", key); r.StatusCode != 200 {
				t.Errorf("after the release: %d, want 200 at once", r.StatusCode)
			}
			for path, want := range map[string]int{
				"/v1/keys/*?action=penalize":                 400,
				"/v1/keys/rule:x/y?action=penalize":          400,
				"/v1/keys/name:k1?action=forgive":            400,
				"/v1/keys/name:nobody?action=penalize":       400,
				"/v1/keys/user:someone-else?action=penalize": 200,
			} {
				if r := f.do(t, "POST", path, "", nil); r.StatusCode != want {
					t.Errorf("POST %s: %d %s, want %d", path, r.StatusCode, readAll(t, r), want)
				}
			}
			if r := f.do(t, "POST", "/v1/keys/name:k1?action=penalize", "", map[string]string{"Sluice-Token": ""}); r.StatusCode != 401 {
				t.Errorf("penalize without a token: %d, want 401", r.StatusCode)
			}
			if !strings.Contains(logs.String(), "keys penalize") || !strings.Contains(logs.String(), "caller=tests") {
				t.Errorf("the penalty is not logged with its caller:\n%s", logs.String())
			}
			f.noStoreErrors(t)
		})
	}
	f := newFixture(t, testConfig)
	if r := f.do(t, "POST", "/v1/keys/name:k1?action=penalize", "", nil); r.StatusCode != 409 {
		t.Errorf("penalize without a penalty box: %d %s, want 409", r.StatusCode, readAll(t, r))
	}
}

// TestAReleasedClientStartsItsRefusalsAfresh: a client boxed for its
// refusals and released by an operator (a reset of limit penalty) is not
// boxed again by the refusals that boxed it: its next refusal, within the
// minute that counted them, is a refusal by its quota, not a new box, and
// the minute after it is admitted.
func TestAReleasedClientStartsItsRefusalsAfresh(t *testing.T) {
	cfg := realtest.Replace(t, "testConfig", testConfig, "exempt:", "penalty: {refusals: 2, within: 1m, for: 5m}\nexempt:")
	f := newFixture(t, cfg)
	key := map[string]string{"X-API-Key": "demo-free-key"}
	for range 5 { // 3 admitted, 2 refused: boxed
		f.do(t, "GET", "/api/search", "", key)
	}
	r := f.do(t, "DELETE", "/v1/keys/name:k1?limit=penalty", "", nil)
	if r.StatusCode != 200 {
		t.Fatalf("release: %d %s", r.StatusCode, readAll(t, r))
	}
	r = f.do(t, "GET", "/api/search", "", key)
	if body := readAll(t, r); r.StatusCode != 429 || strings.Contains(body, "#penalty-box") {
		t.Fatalf("released, over its quota: %d %s, want a refusal by the quota", r.StatusCode, body)
	}
	f.clock.Advance(time.Minute)
	if r := f.do(t, "GET", "/api/search", "", key); r.StatusCode != 200 {
		t.Errorf("a minute after the release: %d %s, want 200", r.StatusCode, readAll(t, r))
	}
}

// An operator's release takes a client out of the box at once at a
// degraded level too, where the reduced limits' middleware decides and
// remembers the box.
func TestAReleaseTakesEffectAtOnceWhileDegraded(t *testing.T) {
	cfg := realtest.Replace(t, "testConfig", testConfig, "exempt:", `penalty: {refusals: 2, within: 1m, for: 5m}
degradation:
  factor: 1
  levels:
    critical: {enter: {in_flight: 100000}, leave: {in_flight: 1000}}
exempt:`)
	f := newFixture(t, cfg)
	if r := f.do(t, "PUT", "/v1/degradation", `{"level":"elevated"}`, nil); r.StatusCode != 200 {
		t.Fatalf("pin: %d %s", r.StatusCode, readAll(t, r))
	}
	key := map[string]string{"X-API-Key": "demo-free-key"}
	if r := f.do(t, "POST", "/v1/keys/name:k1?action=penalize", "", nil); r.StatusCode != 200 {
		t.Fatalf("penalize: %d %s", r.StatusCode, readAll(t, r))
	}
	for range 2 { // the box remembered by the middleware that decides
		if r := f.do(t, "GET", "/api/search", "", key); r.StatusCode != 429 {
			t.Fatalf("penalized: %d %s", r.StatusCode, readAll(t, r))
		}
	}
	if r := f.do(t, "DELETE", "/v1/keys/name:k1?limit=penalty", "", nil); r.StatusCode != 200 {
		t.Fatalf("release: %d %s", r.StatusCode, readAll(t, r))
	}
	if r := f.do(t, "GET", "/api/search", "", key); r.StatusCode != 200 {
		t.Errorf("after the release, at elevated: %d %s, want 200 at once", r.StatusCode, readAll(t, r))
	}
}
