package server

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/failover"
)

// A request refused because the store cannot be reached (on_store_error
// deny: its statuses are Unavailable) was refused by no limit: it is
// counted sluice_decisions_total{result="unavailable"}, never "limited"
// (the series of SluiceHighRefusalRatio, whose runbook says to raise the
// limit), and the dashboard lists neither its limits as refusing nor its
// client among the most limited.
func TestStoreDownDenyIsNoRefusalByALimit(t *testing.T) {
	srv, _ := serverOverFailingPrimary(t, failover.Deny, 1)
	if body := checkVia(t, srv, "acme"); !strings.Contains(body, "temporary-reduced-capacity") {
		t.Fatalf("with the store down under deny: %s, want a refusal for capacity", body)
	}
	mfs, err := srv.opts.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	unavailable := 0.0
	for _, mf := range mfs {
		if mf.GetName() != "sluice_decisions_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			switch labels["result"] {
			case "limited":
				if v := m.GetCounter().GetValue(); v > 0 {
					t.Errorf("sluice_decisions_total%v = %v after one request refused because the store is down, want no refusal by a limit", labels, v)
				}
			case "unavailable":
				unavailable += m.GetCounter().GetValue()
			}
		}
	}
	if unavailable != 1 {
		t.Errorf("sluice_decisions_total{result=\"unavailable\"} = %v, want 1: the one check refused because the store is down", unavailable)
	}
	d := srv.stats.snapshot(dashboardRanges[0], dashboardTop)
	if len(d.TopLimited) != 0 || len(d.Limits) != 0 {
		t.Errorf("the dashboard lists %+v as most limited clients and %+v as limits refusing, after a refusal by the store alone, want none", d.TopLimited, d.Limits)
	}
}
