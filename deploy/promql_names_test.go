package deploy_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// promqlToken is one token of a PromQL expression: an identifier (a metric,
// label, function or keyword), a string, a number or duration, or a single
// punctuation or operator character.
type promqlToken struct {
	kind byte // 'i' identifier, 's' string, 'n' number or duration, else the character itself
	text string
}

// promqlIdentifier, promqlString and promqlNumber match the tokens of those
// kinds at the start of the rest of an expression.
var (
	promqlIdentifier = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*`)
	promqlString     = regexp.MustCompile("^(\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'|`[^`]*`)")
	promqlNumber     = regexp.MustCompile(`^[0-9][0-9a-zA-Z.+]*`)
)

// lexPromQL splits expr into tokens, or fails on a character it does not know.
func lexPromQL(expr string) ([]promqlToken, error) {
	var toks []promqlToken
	for rest := expr; rest != ""; {
		switch c := rest[0]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			rest = rest[1:]
		case c == '#':
			_, rest, _ = strings.Cut(rest, "\n")
		default:
			if m := promqlString.FindString(rest); m != "" {
				s := m[1 : len(m)-1]
				if m[0] != '`' {
					s = strings.ReplaceAll(s, `\\`, `\`)
				}
				toks, rest = append(toks, promqlToken{'s', s}), rest[len(m):]
			} else if m := promqlIdentifier.FindString(rest); m != "" {
				toks, rest = append(toks, promqlToken{'i', m}), rest[len(m):]
			} else if m := promqlNumber.FindString(rest); m != "" {
				toks, rest = append(toks, promqlToken{'n', m}), rest[len(m):]
			} else if strings.IndexByte("(){}[],=!~<>+-*/%^@", c) >= 0 {
				toks, rest = append(toks, promqlToken{c, string(c)}), rest[1:]
			} else {
				return nil, fmt.Errorf("unexpected %q at %q", c, rest)
			}
		}
	}
	return toks, nil
}

// promqlMatcher is a label matcher of a selector: label op "value".
type promqlMatcher struct{ label, op, value string }

// promqlSelector is a series selector: a metric name and its matchers.
type promqlSelector struct {
	metric   string
	matchers []promqlMatcher
}

// promqlGrouping is a list of labels an expression groups or matches by
// (by, without, on, ignoring, group_left, group_right) and the selectors of
// the operand it applies to (for by and without) or of the whole
// expression (for the others).
type promqlGrouping struct {
	clause  string
	labels  []string
	operand []promqlSelector
}

// promqlNames is what an expression names: its selectors and its groupings.
type promqlNames struct {
	selectors []promqlSelector
	groupings []promqlGrouping
}

// promqlGroupings are the clauses that list labels in parentheses.
var promqlGroupings = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
}

// promqlKeywords are the identifiers that are no series: keywords, and the
// aggregation operators.
var promqlKeywords = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
	"and": true, "or": true, "unless": true, "bool": true, "offset": true,
	"inf": true, "nan": true, "Inf": true, "NaN": true,
	// Aggregations, which may be followed by their grouping clause rather than (.
	"sum": true, "min": true, "max": true, "avg": true, "count": true, "group": true, "stddev": true,
	"stdvar": true, "topk": true, "bottomk": true, "quantile": true, "count_values": true,
}

// parsePromQL returns the selectors and groupings of expr. It reads the
// PromQL written in deploy/'s files (it is no full parser): a metric name
// with or without matchers, a bare {…} selector, and the grouping clauses
// before or after their aggregation's operand.
func parsePromQL(expr string) (promqlNames, error) {
	toks, err := lexPromQL(expr)
	if err != nil {
		return promqlNames{}, err
	}
	// close[i] is the index of the bracket closing the one at i.
	close := map[int]int{}
	var open []int
	for i, tk := range toks {
		switch tk.kind {
		case '(', '{', '[':
			open = append(open, i)
		case ')', '}', ']':
			if len(open) == 0 {
				return promqlNames{}, fmt.Errorf("unbalanced %q", tk.text)
			}
			close[open[len(open)-1]] = i
			open = open[:len(open)-1]
		}
	}
	if len(open) > 0 {
		return promqlNames{}, fmt.Errorf("unclosed %q", toks[open[len(open)-1]].text)
	}

	var names promqlNames
	selectorsIn := func(from, to int) []promqlSelector { // the selectors within toks[from:to]
		sels, _ := parseSelectors(toks[from:to])
		return sels
	}
	names.selectors, err = parseSelectors(toks)
	if err != nil {
		return promqlNames{}, err
	}
	for i := 0; i < len(toks); i++ {
		tk := toks[i]
		if tk.kind != 'i' || !promqlGroupings[tk.text] || i+1 >= len(toks) || toks[i+1].kind != '(' {
			continue
		}
		end := close[i+1]
		g := promqlGrouping{clause: tk.text}
		for _, l := range toks[i+2 : end] {
			if l.kind == 'i' {
				g.labels = append(g.labels, l.text)
			}
		}
		switch tk.text {
		case "by", "without":
			// sum by (labels) (operand), or sum (operand) by (labels).
			if end+1 < len(toks) && toks[end+1].kind == '(' {
				g.operand = selectorsIn(end+2, close[end+1])
			} else if i > 0 && toks[i-1].kind == ')' {
				start := -1
				for o, c := range close {
					if c == i-1 {
						start = o
					}
				}
				g.operand = selectorsIn(start+1, i-1)
			}
		default:
			g.operand = names.selectors
		}
		names.groupings = append(names.groupings, g)
		i = end
	}
	return names, nil
}

// parseSelectors returns the series selectors of toks.
func parseSelectors(toks []promqlToken) ([]promqlSelector, error) {
	var sels []promqlSelector
	for i := 0; i < len(toks); i++ {
		tk := toks[i]
		switch {
		case tk.kind == 'i' && !promqlKeywords[tk.text] && (i+1 >= len(toks) || toks[i+1].kind != '('):
			// A metric name, unless it is a grouping clause's label.
			if i > 0 && (toks[i-1].kind == '(' || toks[i-1].kind == ',') && inGrouping(toks, i) {
				continue
			}
			sel := promqlSelector{metric: tk.text}
			if i+1 < len(toks) && toks[i+1].kind == '{' {
				var err error
				sel.matchers, i, err = parseMatchers(toks, i+1)
				if err != nil {
					return nil, err
				}
			}
			sels = append(sels, sel)
		case tk.kind == '{':
			var sel promqlSelector
			var err error
			sel.matchers, i, err = parseMatchers(toks, i)
			if err != nil {
				return nil, err
			}
			for _, m := range sel.matchers {
				if m.label == "__name__" && m.op == "=" {
					sel.metric = m.value
				}
			}
			sels = append(sels, sel)
		}
	}
	return sels, nil
}

// inGrouping reports whether toks[i] is within the parentheses of a
// grouping clause (by, on, …).
func inGrouping(toks []promqlToken, i int) bool {
	for j := i - 1; j >= 0; j-- {
		switch toks[j].kind {
		case 'i', ',':
			continue
		case '(':
			return j > 0 && toks[j-1].kind == 'i' && promqlGroupings[toks[j-1].text]
		}
		return false
	}
	return false
}

// parseMatchers reads the matchers of the {…} at toks[open] and returns
// them with the index of its closing brace.
func parseMatchers(toks []promqlToken, open int) ([]promqlMatcher, int, error) {
	var ms []promqlMatcher
	i := open + 1
	for i < len(toks) && toks[i].kind != '}' {
		if toks[i].kind == ',' {
			i++
			continue
		}
		if toks[i].kind != 'i' || i+2 >= len(toks) {
			return nil, 0, fmt.Errorf("a matcher starting at %q", toks[i].text)
		}
		label, op := toks[i].text, toks[i+1].text
		j := i + 2
		if toks[j].kind == '=' || toks[j].kind == '~' {
			op += toks[j].text
			j++
		}
		if j >= len(toks) || toks[j].kind != 's' {
			return nil, 0, fmt.Errorf("matcher %s%s has no string value", label, op)
		}
		ms = append(ms, promqlMatcher{label, op, toks[j].text})
		i = j + 1
	}
	return ms, i, nil
}

// seriesLabels is what Prometheus holds: for each series name, each label's
// values.
type seriesLabels map[string]map[string]map[string]bool

// promSeries returns the names and labels of every series Prometheus holds
// from the last hour: those it scraped and those its rules recorded.
func promSeries(t *testing.T, prom string) seriesLabels {
	t.Helper()
	q := url.Values{"match[]": {`{__name__=~".+"}`}, "start": {fmt.Sprint(time.Now().Add(-time.Hour).Unix())}}
	resp, err := http.Get(prom + "/api/v1/series?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Status string
		Data   []map[string]string
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.Status != "success" {
		t.Fatalf("/api/v1/series: %s %v", r.Status, err)
	}
	all := seriesLabels{}
	for _, s := range r.Data {
		name := s["__name__"]
		if all[name] == nil {
			all[name] = map[string]map[string]bool{}
		}
		for l, v := range s {
			if all[name][l] == nil {
				all[name][l] = map[string]bool{}
			}
			all[name][l][v] = true
		}
	}
	return all
}

// literalAlternatives returns the values a matcher's regular expression
// can match when it is a plain list of them (a|b|c), or nil when it is any
// other expression.
func literalAlternatives(re string) []string {
	alts := strings.Split(re, "|")
	for _, a := range alts {
		if a == "" || regexp.QuoteMeta(a) != a {
			return nil
		}
	}
	return alts
}

// unknownNames returns what expr names that the series of held do not
// have: a series name none has, a label its series lack, a value of an
// equality matcher (or of a regular expression listing values) none of its
// series takes, a label grouped or matched on that the series it applies
// to lack.
func unknownNames(expr string, held seriesLabels) ([]string, error) {
	names, err := parsePromQL(expr)
	if err != nil {
		return nil, err
	}
	var bad []string
	for _, sel := range names.selectors {
		labels, ok := held[sel.metric]
		if !ok {
			bad = append(bad, fmt.Sprintf("series %s does not exist", sel.metric))
			continue
		}
		for _, m := range sel.matchers {
			values, ok := labels[m.label]
			if !ok {
				bad = append(bad, fmt.Sprintf("%s has no label %s", sel.metric, m.label))
				continue
			}
			var want []string
			switch m.op {
			case "=":
				want = []string{m.value}
			case "=~":
				want = literalAlternatives(m.value)
			}
			for _, v := range want {
				if !values[v] {
					bad = append(bad, fmt.Sprintf("%s has no series with %s=%q", sel.metric, m.label, v))
				}
			}
		}
	}
	for _, g := range names.groupings {
		for _, l := range g.labels {
			var lacking []string
			for _, sel := range g.operand {
				if _, ok := held[sel.metric][l]; !ok && held[sel.metric] != nil && !slices.Contains(lacking, sel.metric) {
					lacking = append(lacking, sel.metric)
				}
			}
			if len(lacking) == 0 {
				continue
			}
			if g.clause == "by" || g.clause == "without" || len(lacking) == len(g.operand) {
				bad = append(bad, fmt.Sprintf("%s (%s): %s lacks label %s", g.clause, strings.Join(g.labels, ", "), strings.Join(lacking, ", "), l))
			}
		}
	}
	return bad, nil
}

// templateLabel matches a label a legend ({{label}}) or an alert's
// annotation ({{ $labels.label }}) shows.
var (
	legendLabel     = regexp.MustCompile(`\{\{\s*(\w+)\s*\}\}`)
	annotationLabel = regexp.MustCompile(`\$labels\.(\w+)`)
)

// promResultLabels evaluates query now and returns the label names of its
// result's series.
func promResultLabels(prom, query string) (map[string]bool, error) {
	resp, err := http.Get(prom + "/api/v1/query?query=" + url.QueryEscape(query))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var r struct {
		Status, Error string
		Data          struct {
			Result []struct{ Metric map[string]string }
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return nil, err
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("%s", r.Error)
	}
	labels := map[string]bool{}
	for _, s := range r.Data.Result {
		for l := range s.Metric {
			labels[l] = true
		}
	}
	return labels, nil
}

// checkNamesAndLabels fails t for every series, label and label value the
// rules and the dashboard name that Prometheus, having scraped a real
// sluice serve and evaluated the rules, does not hold; and for every label
// a legend or an alert's annotation shows that its query's result lacks.
func checkNamesAndLabels(t *testing.T, prom string) {
	t.Helper()
	held := promSeries(t, prom)
	type named struct{ where, expr string }
	var exprs []named
	rules := readRules(t)
	for _, r := range rules {
		exprs = append(exprs, named{"rule " + r.Alert + r.Record, r.Expr})
	}
	for _, q := range dashboardQueries(t, "sluice") {
		exprs = append(exprs, named{"dashboard", q})
	}
	var bad []string
	for _, e := range exprs {
		unknown, err := unknownNames(e.expr, held)
		if err != nil {
			t.Fatalf("%s: %q: %v", e.where, e.expr, err)
		}
		for _, u := range unknown {
			bad = append(bad, fmt.Sprintf("%s %q: %s", e.where, e.expr, u))
		}
	}

	shows := func(where, query string, labels []string) {
		if len(labels) == 0 {
			return
		}
		got, err := promResultLabels(prom, query)
		if err != nil {
			t.Fatalf("%s %q: %v", where, query, err)
		}
		for _, l := range labels {
			if !got[l] {
				bad = append(bad, fmt.Sprintf("%s shows label %s, which the series of %q lack", where, l, query))
			}
		}
	}
	for _, r := range rules {
		if r.Alert == "" {
			continue
		}
		var labels []string
		for _, a := range r.Annotations {
			for _, m := range annotationLabel.FindAllStringSubmatch(a, -1) {
				labels = append(labels, m[1])
			}
		}
		shows("alert "+r.Alert+"'s annotations", alertSeries(t, r), labels)
	}
	_, panels := readDashboard(t)
	queries := dashboardQueries(t, "sluice")
	n := 0
	for _, p := range panels {
		for _, tg := range p.Targets {
			var labels []string
			for _, m := range legendLabel.FindAllStringSubmatch(tg.LegendFormat, -1) {
				labels = append(labels, m[1])
			}
			shows(fmt.Sprintf("panel %q's legend %q", p.Title, tg.LegendFormat), queries[n], labels)
			n++
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}

// TestPromQLNamesAreRead holds the reading of checkNamesAndLabels to what
// each expression names, so that a name it missed is not taken as checked.
func TestPromQLNamesAreRead(t *testing.T) {
	t.Parallel()
	held := seriesLabels{
		"up":    {"job": {"sluice": true}, "instance": {"a": true}},
		"m":     {"job": {"sluice": true}, "result": {"ok": true, "error": true}, "policy": {"free": true}},
		"r:m:x": {"job": {"sluice": true}, "policy": {"free": true}},
	}
	for _, tc := range []struct {
		expr string
		want []string
	}{
		{`sum by (job, policy) (rate(m{job="sluice", result=~"ok|error"}[5m])) / r:m:x`, nil},
		{`(count(up{job="sluice"}) or vector(0)) < 1`, nil},
		{`sum(rate(m[5m])) by (policy) > 0 and on (job) up`, nil},
		{`rate(n[5m])`, []string{"series n does not exist"}},
		{`m{jobs="sluice"}`, []string{"m has no label jobs"}},
		{`m{result="failed"}`, []string{`m has no series with result="failed"`}},
		{`m{result=~"ok|failed"}`, []string{`m has no series with result="failed"`}},
		{`m{result=~"o.*"}`, nil},
		{`sum by (job, plan) (m)`, []string{"by (job, plan): m lacks label plan"}},
		{`sum(m) by (instance)`, []string{"by (instance): m lacks label instance"}},
		{`sum by (policy) (m) + sum by (instance) (up)`, nil},
		{`m and on (job, limit) r:m:x`, []string{"on (job, limit): m, r:m:x lacks label limit"}},
		{`m and on (policy) up`, nil},
		{"{__name__=\"gone\"}", []string{"series gone does not exist"}},
	} {
		got, err := unknownNames(tc.expr, held)
		if err != nil {
			t.Errorf("%q: %v", tc.expr, err)
			continue
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q: got %q, want %q", tc.expr, got, tc.want)
		}
	}
}

// TestEveryExpressionIsRead: each rule's expression and each dashboard
// query is read by parsePromQL and names a series, so that
// checkNamesAndLabels checks them all.
func TestEveryExpressionIsRead(t *testing.T) {
	t.Parallel()
	exprs := dashboardQueries(t, "sluice")
	for _, r := range readRules(t) {
		exprs = append(exprs, r.Expr)
	}
	for _, e := range exprs {
		names, err := parsePromQL(e)
		if err != nil {
			t.Errorf("%q: %v", e, err)
		} else if len(names.selectors) == 0 || slices.ContainsFunc(names.selectors, func(s promqlSelector) bool { return s.metric == "" }) {
			t.Errorf("%q: read selectors %+v, want each with its series name", e, names.selectors)
		}
	}
}
