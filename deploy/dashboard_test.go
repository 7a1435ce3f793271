package deploy_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const dashboardFile = "grafana/sluice.json"

// dashboard is the part of a Grafana dashboard the tests read.
type dashboard struct {
	Panels     []panel
	Templating struct{ List []variable }
}

// variable is a template variable.
type variable struct {
	Name, Type string
	Query      any // a string, or {"query": "..."}
	AllValue   string
}

type panel struct {
	ID          int
	Type        string
	Title       string
	Datasource  *struct{ Type, UID string }
	GridPos     struct{ X, Y, W, H int } `json:"gridPos"`
	FieldConfig struct {
		Defaults  struct{ Unit string }
		Overrides []struct {
			Matcher    struct{ ID, Options string }
			Properties []struct {
				ID    string
				Value any
			}
		}
	} `json:"fieldConfig"`
	Targets []struct {
		Expr         string
		RefID        string `json:"refId"`
		LegendFormat string `json:"legendFormat"`
	}
	Panels []panel // a collapsed row's
}

// unitOf returns the unit the panel draws its query refID in: an override
// of the query's frames, or the panel's default.
func (p *panel) unitOf(refID string) string {
	unit := p.FieldConfig.Defaults.Unit
	for _, o := range p.FieldConfig.Overrides {
		if o.Matcher.ID != "byFrameRefID" || o.Matcher.Options != refID {
			continue
		}
		for _, prop := range o.Properties {
			if u, ok := prop.Value.(string); ok && prop.ID == "unit" {
				unit = u
			}
		}
	}
	return unit
}

// readDashboard decodes deploy/grafana/sluice.json and returns it with
// its panels, those of rows included.
func readDashboard(t *testing.T) (*dashboard, []panel) {
	t.Helper()
	var d dashboard
	if err := json.Unmarshal([]byte(readFile(t, dashboardFile)), &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	var all []panel
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			all = append(all, p)
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return &d, all
}

// grafanaVariable matches a variable reference in a query.
var grafanaVariable = regexp.MustCompile(`\$\{?(\w+)\}?`)

// dashboardQueries returns every PromQL query of the dashboard — its
// panels' and, for a label_values(series, label) variable, the series —
// with the variables set as Grafana sets them when job is the scrape job,
// every plan is selected, and the time range is a minute.
func dashboardQueries(t *testing.T, job string) []string {
	t.Helper()
	d, panels := readDashboard(t)
	values := map[string]string{"job": job, "__rate_interval": "5s", "__range": "1m", "__interval": "1s"}
	for _, v := range d.Templating.List {
		if v.Name == "plan" {
			values["plan"] = v.AllValue
		}
	}
	substitute := func(q string) string {
		return grafanaVariable.ReplaceAllStringFunc(q, func(ref string) string {
			name := grafanaVariable.FindStringSubmatch(ref)[1]
			v, ok := values[name]
			if !ok {
				t.Errorf("%s: query %q uses variable $%s, which the dashboard does not define", dashboardFile, q, name)
			}
			return v
		})
	}
	var queries []string
	for _, p := range panels {
		for _, tg := range p.Targets {
			queries = append(queries, substitute(tg.Expr))
		}
	}
	labelValues := regexp.MustCompile(`^label_values\((.+),\s*(\w+)\)$`)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, _ := v.Query.(string)
		if m, ok := v.Query.(map[string]any); ok {
			q, _ = m["query"].(string)
		}
		sel := labelValues.FindStringSubmatch(q)
		if sel == nil {
			t.Errorf("%s: variable %s's query %q is not label_values(series, label)", dashboardFile, v.Name, q)
			continue
		}
		queries = append(queries, substitute(sel[1]))
	}
	return queries
}

// TestDashboardIsWellFormed checks the dashboard's layout and vocabulary:
// unique panel ids on a 24-column grid, every panel on the datasource
// variable, each query's variables defined, and the series an operator
// needs on it (the queries themselves are evaluated against a real
// Prometheus by TestPrometheusEvaluatesRulesAndDashboard).
func TestDashboardIsWellFormed(t *testing.T) {
	t.Parallel()
	d, panels := readDashboard(t)
	ids := map[int]bool{}
	var exprs []string
	for _, p := range panels {
		if ids[p.ID] {
			t.Errorf("panel id %d is used twice", p.ID)
		}
		ids[p.ID] = true
		if p.GridPos.W <= 0 || p.GridPos.X+p.GridPos.W > 24 || p.GridPos.H <= 0 {
			t.Errorf("panel %q: gridPos %+v is off the 24-column grid", p.Title, p.GridPos)
		}
		if p.Type == "row" {
			continue
		}
		if p.Title == "" || p.Datasource == nil || p.Datasource.UID != "${datasource}" {
			t.Errorf("panel %d %q: want a title and the datasource ${datasource}", p.ID, p.Title)
		}
		refs := map[string]bool{}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			if tg.Expr == "" || tg.RefID == "" || refs[tg.RefID] {
				t.Errorf("panel %q: a query without an expression or with a missing or repeated refId %q", p.Title, tg.RefID)
			}
			refs[tg.RefID] = true
			exprs = append(exprs, tg.Expr)
		}
	}
	if !slices.ContainsFunc(d.Templating.List, func(v variable) bool {
		return v.Name == "datasource" && v.Type == "datasource" && v.Query == "prometheus"
	}) {
		t.Error("the dashboard has no datasource variable of type prometheus")
	}
	dashboardQueries(t, "sluice") // every variable used is defined
	all := strings.Join(exprs, "\n")
	for _, want := range []string{
		"sluice_decisions_total", `result="limited"`, "by (policy, limit", "topk(", "sluice_decision_seconds_bucket",
		"sluice_store_errors_total", "sluice_fallback_decisions_total", "sluice_store_breaker_open",
		"sluice_degradation_level", "sluice_memory_evictions_total", "sluice_memory_limits{",
		"sluice_memory_limits_refused_total",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no query of the dashboard has %q", want)
		}
	}
	// Global limits are those sluice_global_remaining_ratio names: a
	// matcher on their names misses global limits named otherwise and
	// takes plan limits named global-something.
	if m := regexp.MustCompile(`limit\s*=~\s*"global`).FindString(all); m != "" {
		t.Errorf("a query of the dashboard picks global limits by name (%s); join on sluice_global_remaining_ratio instead", m)
	}
}

// notDrawn are the metrics sluice exports that neither the dashboard nor a
// rule reads, each with the reason an operator can do without it there.
var notDrawn = map[string]string{
	"sluice_config_reloads_total":                         "the Configuration row draws whether the last reload held",
	"sluice_config_last_reload_success_timestamp_seconds": "the Configuration row draws whether the last reload held",
	"sluice_degradation_transitions_total":                "the level drawn over time shows every transition",
	"sluice_memory_expirations_total":                     "states let go at full quota: routine, nothing to act on",
	"sluice_memory_clock_late_ticks_total":                "a diagnostic of the in-process store's clock, not of the service",
	"sluice_memory_clock_max_lag_seconds":                 "a diagnostic of the in-process store's clock, not of the service",
	"sluice_connections_shed_total":                       "its series exist only once a listener sheds a connection, so no query can be held to evaluate",
	"sluice_redis_unrefunded_total":                       "exported on a Redis Cluster only; SluiceStoreErrors' runbook names it",
	"sluice_lease_prefetches_total":                       "tuning detail of leases, described in docs/operations.md",
	"sluice_lease_round_trips_total":                      "tuning detail of leases, described in docs/operations.md",
	"sluice_lease_give_backs_total":                       "tuning detail of leases, described in docs/operations.md",
	"sluice_lease_units_held":                             "tuning detail of leases, described in docs/operations.md",
	"sluice_lease_keys":                                   "tuning detail of leases, described in docs/operations.md",
	"sluice_store_node_fallback_decisions_total":          "the Store row draws each node's breaker and errors",
	"sluice_store_node_breaker_opens_total":               "the Store row draws each node's breaker and errors",
}

// exportedMetric matches the name of a metric the server registers: a
// collector's Name option or a Desc's first argument.
var exportedMetric = regexp.MustCompile(`(?:Name:\s*|NewDesc\(\s*)"(sluice_[a-z0-9_]+)"`)

// TestEveryMetricIsDrawnOrAlertedOn: each metric package server exports
// is read by a query of the dashboard or an expression of the rules, or
// is in notDrawn with its reason — so that a metric an operator needs is
// not left where nobody looks.
func TestEveryMetricIsDrawnOrAlertedOn(t *testing.T) {
	t.Parallel()
	sources, err := filepath.Glob("../server/*.go")
	if err != nil || len(sources) == 0 {
		t.Fatalf("no source of package server: %v", err)
	}
	exported := map[string]bool{}
	for _, name := range sources {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		for _, m := range exportedMetric.FindAllStringSubmatch(readFile(t, name), -1) {
			exported[m[1]] = true
		}
	}
	if len(exported) < 20 {
		t.Fatalf("found %d metrics in package server's sources, want the twenty and more it exports", len(exported))
	}
	read := dashboardQueries(t, "sluice")
	for _, r := range readRules(t) {
		read = append(read, r.Expr)
	}
	all := strings.Join(read, "\n")
	for name := range exported {
		series := []string{name, name + "_bucket", name + "_count", name + "_sum"}
		drawn := slices.ContainsFunc(series, func(s string) bool { return containsSeries(all, s) })
		switch _, excused := notDrawn[name]; {
		case !drawn && !excused:
			t.Errorf("metric %s is read by no dashboard query and no rule: draw it, or say in notDrawn why not", name)
		case drawn && excused:
			t.Errorf("metric %s is drawn or alerted on: take it out of notDrawn", name)
		}
	}
	for name := range notDrawn {
		if !exported[name] {
			t.Errorf("notDrawn names %s, which package server does not export", name)
		}
	}
}

// perSecond are Grafana's units of a quantity per second.
var perSecond = map[string]bool{"reqps": true, "ops": true, "rps": true, "wps": true, "iops": true, "cps": true, "pps": true, "Bps": true, "bps": true, "binBps": true, "binbps": true}

// stepRange matches an increase or a count over a range Grafana sets from
// the panel's step, which changes with the time range and the panel's width.
var stepRange = regexp.MustCompile(`(increase|changes|resets|count_over_time|sum_over_time)\([^()]*\[\$\{?__(rate_)?interval\}?\]`)

// TestDashboardUnitsFitTheirQueries: each query is drawn in the unit of
// what it computes. A rate is per second (a per-second unit, or "/s" in its
// legend); a quotient of two rates (a share, a mean) is not; a quantile of
// sluice_decision_seconds is a time in seconds; a number of events is
// counted over a range that means the same at every zoom ($__range), never
// over Grafana's step, whose length the reader does not see.
func TestDashboardUnitsFitTheirQueries(t *testing.T) {
	t.Parallel()
	_, panels := readDashboard(t)
	for _, p := range panels {
		for _, tg := range p.Targets {
			unit, expr := p.unitOf(tg.RefID), tg.Expr
			what := fmt.Sprintf("panel %q, query %s (%s), unit %q", p.Title, tg.RefID, expr, unit)
			quotient := regexp.MustCompile(`\)\s*/\s*(sum|rate|avg|max|min)\b`).MatchString(expr)
			switch {
			case stepRange.MatchString(expr):
				t.Errorf("%s: counts events over Grafana's step, so its values change with the zoom: draw rate() per second, or count over $__range", what)
			case strings.HasPrefix(expr, "histogram_quantile("):
				if unit != "s" {
					t.Errorf("%s: a quantile of seconds, want unit s", what)
				}
			case quotient:
				if perSecond[unit] {
					t.Errorf("%s: a quotient of two rates is no longer per second", what)
				}
			case strings.Contains(expr, "rate("):
				if !perSecond[unit] && !strings.Contains(tg.LegendFormat, "/s") {
					t.Errorf("%s: a rate, want a per-second unit (or /s in its legend)", what)
				}
			case !strings.Contains(expr, "increase("):
				if perSecond[unit] {
					t.Errorf("%s: a gauge drawn in a per-second unit", what)
				}
			}
		}
	}
}

// filterOperand matches what follows `and on (…)` or `unless on (…)`: the
// series that only filters the expression's value, through the functions
// around it, up to its metric name.
var filterOperand = regexp.MustCompile(`\b(and|unless)\s+on\s*\([^)]*\)\s*(?:\w+\s*\(\s*)*[a-zA-Z_:][a-zA-Z0-9_:]*`)

// seriesName matches a metric or recorded series name.
var seriesName = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)

// valueMetrics returns the sluice metrics whose values expr computes with
// (not those that only filter it), through the recorded series of records.
func valueMetrics(expr string, records map[string]string) map[string]bool {
	metrics := map[string]bool{}
	for _, name := range seriesName.FindAllString(filterOperand.ReplaceAllString(expr, "$1"), -1) {
		if rec, ok := records[name]; ok {
			for m := range valueMetrics(rec, records) {
				metrics[m] = true
			}
			continue
		}
		if strings.HasPrefix(name, "sluice_") {
			for _, suffix := range []string{"_bucket", "_count", "_sum"} {
				name = strings.TrimSuffix(name, suffix)
			}
			metrics[name] = true
		}
	}
	return metrics
}

// TestDashboardDrawsWhatEachAlertWatches: the metric whose value an alert
// compares with its threshold is drawn by a panel of the dashboard, so
// that the operator it pages sees how it got there; a metric that only
// filters a query (`and on`) draws nothing.
func TestDashboardDrawsWhatEachAlertWatches(t *testing.T) {
	t.Parallel()
	rules := readRules(t)
	records := map[string]string{}
	for _, r := range rules {
		if r.Record != "" {
			records[r.Record] = r.Expr
		}
	}
	drawn := map[string]bool{}
	for _, q := range dashboardQueries(t, "sluice") {
		for m := range valueMetrics(q, records) {
			drawn[m] = true
		}
	}
	for _, r := range rules {
		if r.Alert == "" {
			continue
		}
		for m := range valueMetrics(alertSeries(t, r), records) {
			if !drawn[m] {
				t.Errorf("alert %s compares %s, which no panel of the dashboard draws", r.Alert, m)
			}
		}
	}
}
