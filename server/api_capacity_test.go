package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// A refusal of the service's capacity — every refusing limit refused
// because the store could not be reached (on_store_error: deny), or the
// global limits alone under response.global_status 503 — is answered by
// the decision API as the proxy answers it: with the problem type
// temporary-reduced-capacity (and, for the store, a detail saying the
// quota is not spent), so that a caller can tell it from a client whose
// quota is spent. A quota refusal has no type.
func TestDecisionAPIMarksARefusalOfCapacity(t *testing.T) {
	type answer struct {
		Allowed  bool
		Type     string
		Detail   string
		Violated []string
	}
	check := func(t *testing.T, f *fixture, body string) answer {
		t.Helper()
		var a answer
		if err := json.NewDecoder(f.do(t, "POST", "/v1/check", body, nil).Body).Decode(&a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	t.Run("store down under deny", func(t *testing.T) {
		var primary *switchedStore
		f := newFixtureWith(t, settleConfig+testAdmin, func(o *server.Options) {
			primary = &switchedStore{Store: o.Store}
			local := memory.New(memory.WithSweepInterval(0))
			t.Cleanup(func() { local.Close() })
			fo, err := failover.New(primary, local, failover.Options{OnError: failover.Deny})
			if err != nil {
				t.Fatal(err)
			}
			o.Store, o.Failover = fo, fo
		})
		if a := check(t, f, `{"subject":"batch-7","path":"/api/other"}`); !a.Allowed || a.Type != "" {
			t.Fatalf("before the store went down: %+v, want admitted, no type", a)
		}
		primary.down.Store(true)
		a := check(t, f, `{"subject":"batch-7","path":"/api/other"}`)
		if a.Allowed || a.Type != httplimit.ProblemReducedCapacity || !strings.Contains(a.Detail, "not spent") {
			t.Errorf("with the store down under deny: %+v, want refused, type %s, a detail saying the quota is not spent", a, httplimit.ProblemReducedCapacity)
		}
	})
	t.Run("global limits under global_status 503", func(t *testing.T) {
		f := newFixture(t, `
plans:
  free: {limits: [{name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m}]}
global:
  - {name: everyone, algorithm: fixed-window, quantity: 1, window: 1h}
response:
  global_status: 503
`)
		if a := check(t, f, `{"subject":"a","path":"/api/other"}`); !a.Allowed {
			t.Fatalf("first check: %+v, want admitted", a)
		}
		a := check(t, f, `{"subject":"b","path":"/api/other"}`)
		if a.Allowed || a.Type != httplimit.ProblemReducedCapacity || len(a.Violated) != 1 || a.Violated[0] != "everyone" {
			t.Errorf("refused by the global limit alone: %+v, want refused by everyone, type %s", a, httplimit.ProblemReducedCapacity)
		}
	})
	t.Run("quota", func(t *testing.T) {
		f := newFixture(t, settleConfig)
		for range 2 {
			check(t, f, `{"subject":"q","method":"POST","path":"/api/complete"}`)
		}
		a := check(t, f, `{"subject":"q","method":"POST","path":"/api/complete"}`)
		if a.Allowed || a.Type != "" {
			t.Errorf("a spent quota: %+v, want refused with no type", a)
		}
	})
}
