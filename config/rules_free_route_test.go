package config_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// A rule of no method matches every method, and a free route of one
// method makes only that method's requests free: a rule of /v1/items
// without cost: beside "GET /v1/items": 0 counts the path's writes (POST
// costs 1, the default) and loads, as it does with "POST /v1/items": 1
// written out. Its limit of 2 a minute refuses a client's third POST and
// none of its GETs.
func TestARuleOfNoMethodOnAFreeReadRouteCountsItsWrites(t *testing.T) {
	const rule = "rules:\n  - name: item-writes\n    match: {paths: [\"/v1/items\"]}\n    key: [ip]\n" +
		"    limits: [{name: per-minute, algorithm: fixed-window, quantity: 2, window: 1m}]\n"
	plan := func(costs string) string {
		return "plans:\n  free:\n    limits: [{name: m, algorithm: fixed-window, quantity: 1000, window: 1h}]\n" +
			"    costs: {" + costs + "}\n" + "default_plan: free\nanonymous_plan: free\n" + rule
	}
	for _, costs := range []string{`"GET /v1/items": 0`, `"GET /v1/items": 0, "POST /v1/items": 1`} {
		c, err := config.Parse("r.yaml", []byte(plan(costs)))
		if err != nil {
			t.Errorf("costs {%s}: %v", costs, err)
			continue
		}
		store := memory.New()
		defer store.Close()
		mw, err := httplimit.New(sluice.NewLimiter(store), c.HTTPLimitOptions())
		if err != nil {
			t.Fatal(err)
		}
		h := mw.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		for i, want := range []struct {
			method string
			status int
		}{{"GET", 200}, {"POST", 200}, {"GET", 200}, {"POST", 200}, {"GET", 200}, {"POST", 429}, {"GET", 200}} {
			w, r := httptest.NewRecorder(), httptest.NewRequest(want.method, "/v1/items", nil)
			r.RemoteAddr = "192.0.2.7:1234"
			if h.ServeHTTP(w, r); w.Code != want.status {
				t.Errorf("costs {%s}: request %d, %s /v1/items: %d, want %d", costs, i+1, want.method, w.Code, want.status)
			}
		}
	}
}
