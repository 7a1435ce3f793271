package server_test

import (
	"strings"
	"testing"
)

// sluice_shed_requests_total counts the requests a degraded level refused
// before deciding them, by surface and level: they are in no decision
// counter, and without it an operator who pins a level sees nothing of
// what it refuses.
func TestShedRequestsAreCounted(t *testing.T) {
	f := newFixture(t, shedConfig)
	series := func(via, level string) string {
		return `sluice_shed_requests_total{level="` + level + `",via="` + via + `"}`
	}
	f.pin(t, "elevated")
	for range 2 {
		if r := f.do(t, "POST", "/api/generate", "", nil); r.StatusCode != 503 {
			t.Fatalf("proxy, elevated: %d", r.StatusCode)
		}
	}
	f.pin(t, "high")
	if r := f.do(t, "GET", "/v1/forward-auth", "", map[string]string{"X-Forwarded-Method": "DELETE", "X-Forwarded-Uri": "/api/orders/7"}); r.StatusCode != 503 {
		t.Fatalf("forward-auth, high: %d", r.StatusCode)
	}
	if r := f.do(t, "GET", "/api/search", "", nil); r.StatusCode == 503 {
		t.Fatal("proxy, high: a read was shed")
	}
	f.pin(t, "critical")
	if a := f.check(t, `{"subject":"s"}`); a.Allowed {
		t.Fatalf("decision API, critical: %+v", a)
	}
	metrics := readAll(t, f.do(t, "GET", "/metrics", "", nil))
	for s, want := range map[string]string{
		series("proxy", "elevated"): "2", series("forward-auth", "high"): "1", series("decision-api", "critical"): "1",
		series("proxy", "high"): "0", series("forward-auth", "critical"): "0",
	} {
		if !strings.Contains(metrics, s+" "+want+"\n") {
			t.Errorf("metrics lack %s %s:\n%s", s, want, grepLines(metrics, "sluice_shed_requests_total"))
		}
	}
}
