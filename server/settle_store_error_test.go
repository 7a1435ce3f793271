package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// refundFails is a memory store whose refunds fail while down is set, as
// an unreachable store fails them; its decisions go on.
type refundFails struct {
	*memory.Store
	down atomic.Bool
}

func (s *refundFails) Refund(ctx context.Context, checks []sluice.Check, charged []int64) error {
	if s.down.Load() {
		return fmt.Errorf("refund: connection refused: %w", sluice.ErrStoreUnavailable)
	}
	return s.Store.Refund(ctx, checks, charged)
}

// A settlement whose refund the store fails is not answered "settled": it
// is a 503 problem that says the request stays counted and the id
// is spent, counted in sluice_store_errors_total and as a failed
// settlement. A second settle of the id is a 404 and refunds nothing,
// whether the id is held by the instance or signed.
func TestSettleAnswersAStoreFailure(t *testing.T) {
	for name, extra := range map[string]func(t *testing.T) string{
		"held":   func(*testing.T) string { return "" },
		"signed": func(t *testing.T) string { return "settle: {secret_file: " + settleSecret(t, "7c") + "}\n" },
	} {
		t.Run(name, func(t *testing.T) {
			var store *refundFails
			f := newFixtureWith(t, settleConfig+testAdmin+extra(t), func(o *server.Options) {
				store = &refundFails{Store: o.Store.(*memory.Store)}
				o.Store = store
			})
			check := func(body string) map[string]any {
				var out map[string]any
				if err := json.NewDecoder(f.do(t, "POST", "/v1/check", body, nil).Body).Decode(&out); err != nil {
					t.Fatal(err)
				}
				return out
			}
			id, _ := check(`{"subject":"batch-7","method":"POST","path":"/api/complete"}`)["settle"].(string)
			if id == "" {
				t.Fatal("/v1/check gave no settle id")
			}
			settle := `{"id":"` + id + `","status":200,"headers":{"X-Usage-Tokens":"10"}}`
			store.down.Store(true)
			r := f.do(t, "POST", "/v1/settle", settle, nil)
			body := readAll(t, r)
			if r.StatusCode != 503 || r.Header.Get("Content-Type") != "application/problem+json" ||
				!strings.Contains(body, "stays counted") || strings.Contains(body, "settled\":true") {
				t.Errorf("settle with the store failing its refund: %d %s %s, want a 503 problem", r.StatusCode, r.Header.Get("Content-Type"), body)
			}
			store.down.Store(false)
			if r := f.do(t, "POST", "/v1/settle", settle, nil); r.StatusCode != 404 {
				t.Errorf("settling the id again: %d %s, want 404 (spent: a refund is never tried twice)", r.StatusCode, readAll(t, r))
			}
			left := check(`{"subject":"batch-7","method":"POST","path":"/api/complete","cost":0}`)["limits"].([]any)[0].(map[string]any)
			if left["name"] != "tokens" || left["remaining"] != 60.0 {
				t.Errorf("after the failed settlement: %v, want tokens 60 (all 40 reserved stay counted)", left)
			}
			m := scrape(t, f.admin.URL)
			if m[`sluice_store_errors_total{store="memory"}`] != 1 || m[`sluice_settlements_total{result="failed"}`] != 1 ||
				m[`sluice_settlements_total{result="settled"}`] != 0 {
				t.Errorf("store errors %v, settlements failed %v and settled %v; want 1, 1 and 0", m[`sluice_store_errors_total{store="memory"}`],
					m[`sluice_settlements_total{result="failed"}`], m[`sluice_settlements_total{result="settled"}`])
			}
		})
	}
}

// Behind a failover (a Redis store as serve runs it), a refund the primary
// fails is one store error: the failover counts it, and
// sluice_store_errors_total does not count it again.
func TestSettleFailureBehindAFailoverIsOneStoreError(t *testing.T) {
	var primary *refundFails
	f := newFixtureWith(t, settleConfig+testAdmin, func(o *server.Options) {
		primary = &refundFails{Store: o.Store.(*memory.Store)}
		local := memory.New(memory.WithSweepInterval(0))
		t.Cleanup(func() { local.Close() })
		fo, err := failover.New(primary, local, failover.Options{})
		if err != nil {
			t.Fatal(err)
		}
		o.Store, o.Failover = fo, fo
	})
	var out map[string]any
	if err := json.NewDecoder(f.do(t, "POST", "/v1/check", `{"subject":"batch-7","method":"POST","path":"/api/complete"}`, nil).Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	id, _ := out["settle"].(string)
	if id == "" {
		t.Fatalf("/v1/check gave no settle id: %v", out)
	}
	primary.down.Store(true)
	if r := f.do(t, "POST", "/v1/settle", `{"id":"`+id+`","status":200,"headers":{"X-Usage-Tokens":"10"}}`, nil); r.StatusCode != 503 {
		t.Fatalf("settle with the primary failing its refund: %d %s, want 503", r.StatusCode, readAll(t, r))
	}
	m := scrape(t, f.admin.URL)
	if m[`sluice_store_errors_total{store="redis"}`] != 1 || m[`sluice_settlements_total{result="failed"}`] != 1 {
		t.Errorf("store errors %v and failed settlements %v, want 1 and 1",
			m[`sluice_store_errors_total{store="redis"}`], m[`sluice_settlements_total{result="failed"}`])
	}
}
