package deploy_test

import (
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/internal/realtest"
)

const (
	rulesFile     = "prometheus/sluice-rules.yaml"
	rulesTestFile = "prometheus/sluice-rules_test.yaml"
)

// rule is one rule of a Prometheus rule file.
type rule struct {
	Record, Alert, Expr string
	Annotations         map[string]string
}

// readRules returns the rules of deploy/prometheus/sluice-rules.yaml.
func readRules(t *testing.T) []rule {
	t.Helper()
	var file struct {
		Groups []struct {
			Name  string
			Rules []rule
		}
	}
	if err := yaml.Unmarshal([]byte(readFile(t, rulesFile)), &file); err != nil {
		t.Fatalf("%s: %v", rulesFile, err)
	}
	var rules []rule
	for _, g := range file.Groups {
		rules = append(rules, g.Rules...)
	}
	if len(rules) == 0 {
		t.Fatalf("%s has no rules", rulesFile)
	}
	return rules
}

// alertComparison is the form of every alert's expression: a series, a
// comparison, a number.
var alertComparison = regexp.MustCompile(`(?s)^(.*\S)\s*(==|!=|>=|<=|>|<)\s*(-?[0-9][0-9.eE+-]*)\s*$`)

// alertSeries returns the series an alert compares with its threshold.
func alertSeries(t *testing.T, r rule) string {
	t.Helper()
	m := alertComparison.FindStringSubmatch(strings.TrimSpace(r.Expr))
	if m == nil {
		t.Fatalf("%s: alert %s's expression %q is not `series <comparison> number`", rulesFile, r.Alert, r.Expr)
	}
	return m[1]
}

// TestRulesPassPromtool runs promtool on the rules (check rules) and on
// their unit tests (test rules), and checks that those tests cover every
// rule: each recorded series is evaluated, each alert is shown firing and
// shown not firing.
func TestRulesPassPromtool(t *testing.T) {
	t.Parallel()
	promtool := realtest.Promtool(t)
	for _, args := range [][]string{{"check", "rules", rulesFile}, {"test", "rules", rulesTestFile}} {
		if out, err := exec.Command(promtool, args...).CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}

	var tests struct {
		Tests []struct {
			AlertRuleTest []struct {
				Alertname string
				ExpAlerts []any `yaml:"exp_alerts"`
			} `yaml:"alert_rule_test"`
			PromqlExprTest []struct{ Expr string } `yaml:"promql_expr_test"`
		}
	}
	if err := yaml.Unmarshal([]byte(readFile(t, rulesTestFile)), &tests); err != nil {
		t.Fatalf("%s: %v", rulesTestFile, err)
	}
	fires, quiet := map[string]bool{}, map[string]bool{}
	var exprs []string
	for _, tc := range tests.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
			} else {
				quiet[a.Alertname] = true
			}
		}
		for _, e := range tc.PromqlExprTest {
			exprs = append(exprs, e.Expr)
		}
	}
	for _, r := range readRules(t) {
		switch {
		case r.Alert != "":
			alertSeries(t, r)
			if !fires[r.Alert] || !quiet[r.Alert] {
				t.Errorf("%s: alert %s is shown firing: %v, not firing: %v; want both", rulesTestFile, r.Alert, fires[r.Alert], quiet[r.Alert])
			}
		case !slices.ContainsFunc(exprs, func(e string) bool { return containsSeries(e, r.Record) }):
			t.Errorf("%s: no promql_expr_test evaluates recorded series %s", rulesTestFile, r.Record)
		}
	}
}

// containsSeries reports whether expr names the series name (not as part
// of a longer name).
func containsSeries(expr, name string) bool {
	return regexp.MustCompile(`(^|[^a-zA-Z0-9_:])` + regexp.QuoteMeta(name) + `($|[^a-zA-Z0-9_:])`).MatchString(expr)
}

// TestAlertsLinkTheirRunbook: each alert's runbook_url is a section of
// docs/operations.md, the section of that alert.
func TestAlertsLinkTheirRunbook(t *testing.T) {
	t.Parallel()
	const doc = "https://github.com/sluice-dev/sluice/blob/main/docs/operations.md#"
	headings := map[string]bool{}
	for _, line := range strings.Split(readFile(t, "../docs/operations.md"), "\n") {
		if h, ok := strings.CutPrefix(line, "#### "); ok {
			headings[strings.ToLower(h)] = true
		}
	}
	for _, r := range readRules(t) {
		if r.Alert == "" {
			continue
		}
		anchor, ok := strings.CutPrefix(r.Annotations["runbook_url"], doc)
		if !ok || anchor != strings.ToLower(r.Alert) || !headings[anchor] {
			t.Errorf("alert %s: runbook_url %q, want %s%s and a section #### %s in docs/operations.md",
				r.Alert, r.Annotations["runbook_url"], doc, strings.ToLower(r.Alert), r.Alert)
		}
	}
}

// TestRulesNameTheScrapeJob: a rule that picks series by their job (as
// SluiceDown picks the up series of sluice's targets) names the job of
// deploy/prometheus/prometheus.yml's scrape config, and no other.
func TestRulesNameTheScrapeJob(t *testing.T) {
	t.Parallel()
	var c struct {
		ScrapeConfigs []struct {
			JobName string `yaml:"job_name"`
		} `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal([]byte(readFile(t, "prometheus/prometheus.yml")), &c); err != nil || len(c.ScrapeConfigs) != 1 {
		t.Fatalf("prometheus/prometheus.yml: %v (want one scrape config)", err)
	}
	job := c.ScrapeConfigs[0].JobName
	matcher := regexp.MustCompile(`\bjob\s*(=~|!=|!~|=)\s*"([^"]*)"`)
	named := 0
	for _, r := range readRules(t) {
		for _, m := range matcher.FindAllStringSubmatch(r.Expr, -1) {
			named++
			if m[1] != "=" || m[2] != job {
				t.Errorf("%s: rule %s%s picks job%s%q, the scrape config's job is %q", rulesFile, r.Alert, r.Record, m[1], m[2], job)
			}
		}
	}
	if named == 0 {
		t.Errorf("%s: no rule picks the scrape job's up series: nothing alerts when sluice cannot be scraped", rulesFile)
	}
}
