package deploy_test

import (
	"encoding/json"
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
	ID         int
	Type       string
	Title      string
	Datasource *struct{ Type, UID string }
	GridPos    struct{ X, Y, W, H int } `json:"gridPos"`
	Targets    []struct {
		Expr  string
		RefID string `json:"refId"`
	}
	Panels []panel // a collapsed row's
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
