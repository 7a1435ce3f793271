package server

import (
	"net/http"
	"strings"
	"time"
)

// dashboardTop is the most clients the dashboard lists.
const dashboardTop = 10

func (s *Server) handleDashboard(w http.ResponseWriter, r *http.Request) {
	writeAdminPage(w, dashboardPage())
}

// handleDashboardData answers GET /dashboard/data?range=1m|15m|1h (1m
// when absent) with the dashboard's data, or 400 for another range.
func (s *Server) handleDashboardData(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	rg, ok := findRange(r.URL.Query().Get("range"))
	if !ok {
		names := make([]string, len(dashboardRanges))
		for i, r := range dashboardRanges {
			names[i] = r.name
		}
		writeJSONProblem(w, http.StatusBadRequest, "Bad Request", "range must be one of "+strings.Join(names, ", "))
		return
	}
	d := s.stats.snapshot(rg, dashboardTop)
	d.Store.Kind = "memory"
	if f := s.opts.Failover; f != nil {
		d.Store.Kind = "redis"
		d.Store.Breaker = f.Stats().Breaker.String()
		d.Store.OnStoreError = s.storeErrorPolicy()
	}
	st := s.ctl.State()
	d.Degradation = levelView{Level: int(st.Level), Name: st.Name, Pinned: st.Pinned, Since: st.Since.UTC().Format(time.RFC3339)}
	writeJSON(w, http.StatusOK, d)
}

// dashboardSample reads what the dashboard's stats sample: the store's
// error and fallback counters (none on memory) and the degradation level.
func (s *Server) dashboardSample() sample {
	smp := sample{level: int(s.ctl.Level())}
	if f := s.opts.Failover; f != nil {
		st := f.Stats()
		smp.storeErrors, smp.fallback = st.StoreErrors+s.storeErrors.Load(), st.FallbackDecisions
	}
	return smp
}
