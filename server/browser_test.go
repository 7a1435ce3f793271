package server_test

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sluice-dev/sluice/examples"
	"github.com/sluice-dev/sluice/internal/realtest"
)

// TestBrowserDocsPage loads /docs, generated from examples/sluice.yaml, in
// headless Chromium and reads what a client reads: one table row per limit
// of every plan (each inside its plan's spanning cell) and the global
// limits, and an example refusal whose body is a real 429 of the default
// plan.
func TestBrowserDocsPage(t *testing.T) {
	f := newFixture(t, string(examples.Config))
	cfg := f.srv.Config()
	ctx := realtest.Browser(t)

	type row struct {
		Plan, Limit, Rule   string
		Visible, InPlanCell bool
	}
	run(t, ctx, chromedp.Navigate(f.http.URL+"/docs"), chromedp.WaitVisible(chromedp.CSS("#plan-table")))
	rows := eval[[]row](t, ctx, `[...document.querySelectorAll("#plan-table tr")].slice(1).map(function (tr) {
		const cells = [...tr.cells];
		if (cells.length === 4) { window.planCell = cells[0]; }
		const r = tr.getBoundingClientRect(), p = window.planCell.getBoundingClientRect();
		return {
			Plan: window.planCell.querySelector("strong").textContent,
			Limit: cells[cells.length - 3].textContent,
			Rule: cells[cells.length - 2].textContent,
			Visible: r.height > 0 && r.width > 0,
			InPlanCell: r.top >= p.top - 0.5 && r.bottom <= p.bottom + 0.5,
		};
	})`)
	refusal := eval[string](t, ctx, `document.getElementById("example-refusal").innerText`)
	refusalHeight := eval[float64](t, ctx, `document.getElementById("example-refusal").getBoundingClientRect().height`)
	allowed := eval[string](t, ctx, `document.getElementById("example-headers").innerText`)

	var want []row
	counted := func(units bool) string { // a plan with costs above 1 counts units
		if units {
			return " units per "
		}
		return " requests per "
	}
	anyUnits := false
	for _, p := range cfg.Policy.Plans {
		units := false
		for _, c := range p.Costs {
			units = units || c > 1
		}
		anyUnits = anyUnits || units
		for _, l := range p.Limits {
			want = append(want, row{Plan: p.Name, Limit: l.Name(), Rule: strconv.FormatInt(l.Quantity(), 10) + counted(units)})
		}
	}
	for _, l := range cfg.Policy.Global {
		want = append(want, row{Plan: "all clients together", Limit: l.Name(), Rule: strconv.FormatInt(l.Quantity(), 10) + counted(anyUnits)})
	}
	if len(rows) != len(want) {
		t.Fatalf("plan table has %d rows, want %d (one per limit): %+v", len(rows), len(want), rows)
	}
	for i, w := range want {
		r := rows[i]
		if r.Plan != w.Plan || r.Limit != w.Limit || !strings.HasPrefix(r.Rule, w.Rule) {
			t.Errorf("row %d: %s / %s / %q, want %s / %s / %q…", i+1, r.Plan, r.Limit, r.Rule, w.Plan, w.Limit, w.Rule)
		}
		if !r.Visible || !r.InPlanCell {
			t.Errorf("row %d (%s %s): visible %v, within its plan's cell %v", i+1, r.Plan, r.Limit, r.Visible, r.InPlanCell)
		}
	}

	// The admitted example shows the policy of the default plan.
	if !strings.Contains(allowed, "Ratelimit-Policy: ") || !strings.Contains(allowed, "Ratelimit: ") {
		t.Errorf("example headers:\n%s", allowed)
	}
	// The refusal: headers, a blank line, the problem body.
	if refusalHeight <= 0 {
		t.Error("the example refusal is not displayed")
	}
	headers, body, ok := strings.Cut(refusal, "\n\n")
	if !ok {
		t.Fatalf("example refusal has no blank line between headers and body:\n%s", refusal)
	}
	for _, h := range []string{"Content-Type: application/problem+json", "Cache-Control: no-store", "Retry-After: ", "Ratelimit: "} {
		if !strings.Contains(headers, h) {
			t.Errorf("example refusal lacks %q:\n%s", h, headers)
		}
	}
	var problem struct {
		Type       string   `json:"type"`
		Status     int      `json:"status"`
		Plan       string   `json:"plan"`
		Violated   []string `json:"violated-policies"`
		RetryAfter int      `json:"retryAfter"`
		Upgrade    struct {
			Plan string `json:"plan"`
		} `json:"upgrade"`
	}
	if err := json.Unmarshal([]byte(body), &problem); err != nil {
		t.Fatalf("example refusal body is not JSON (%v):\n%s", err, body)
	}
	plan := cfg.Policy.Plan(cfg.Policy.DefaultPlan)
	var names []string
	for _, l := range append(plan.Limits, cfg.Policy.Global...) {
		names = append(names, l.Name())
	}
	if problem.Type != "https://iana.org/assignments/http-problem-types#quota-exceeded" || problem.Status != 429 ||
		problem.Plan != plan.Name || problem.RetryAfter < 1 || len(problem.Violated) == 0 ||
		plan.Upgrade == nil || problem.Upgrade.Plan != plan.Upgrade.Plan {
		t.Errorf("example refusal body: %+v", problem)
	}
	for _, v := range problem.Violated {
		if !slices.Contains(names, v) {
			t.Errorf("example refusal names %q, not a limit of the %s plan (%v)", v, plan.Name, names)
		}
	}
}

// TestBrowserDashboardIsLive opens /dashboard in headless Chromium, sends
// requests through the server, and watches the page update itself (it polls
// every second) without a reload: totals, refusals by limit, the most
// limited client, and — once the clock has moved on a second — the rate.
func TestBrowserDashboardIsLive(t *testing.T) {
	// The browser asks for /favicon.ico, which the server proxies like any
	// request and would count: it is exempt here so that the counts are
	// the test's own requests.
	f := newFixture(t, realtest.Replace(t, "testConfig", testConfig, `exempt: ["GET /api/health"]`, `exempt: ["GET /api/health", "GET /favicon.ico"]`))
	ctx := realtest.Browser(t)
	run(t, ctx, chromedp.Navigate(f.admin.URL+"/dashboard"))
	type view struct {
		Now, Total, Refused, Rate, RefusedRate string
		ByLimit, Top                           [][]string
		SameDocument                           bool
	}
	read := func() view {
		return eval[view](t, ctx, `(function () {
			const text = id => document.getElementById(id).textContent;
			const table = id => [...document.querySelectorAll("#" + id + " tbody tr")].map(tr => [...tr.cells].map(c => c.textContent));
			return {Now: text("now"), Total: text("total-decisions"), Refused: text("total-refused"), Rate: text("rate"),
				RefusedRate: text("refused-rate"), ByLimit: table("by-limit"), Top: table("top"),
				SameDocument: window.sluiceTestMark === true};
		})()`)
	}
	// waitFor reads the page until ok holds, for at most 5 s (five polls).
	waitFor := func(what string, ok func(view) bool) view {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			v := read()
			if ok(v) {
				return v
			}
			if time.Now().After(deadline) {
				t.Fatalf("dashboard never showed %s; it shows %+v", what, v)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	first := waitFor("its first data", func(v view) bool { return v.Total == "0" && v.Now == "2026-11-30T12:00:00Z" })
	eval[bool](t, ctx, `window.sluiceTestMark = true`) // lost if the page reloads
	if first.Rate != "0" || first.Refused != "0" || len(first.ByLimit) != 0 {
		t.Errorf("before any request: %+v", first)
	}

	key := map[string]string{"X-API-Key": "demo-free-key"}
	for range 5 { // 3 admitted, 2 refused
		f.do(t, "GET", "/api/search", "", key)
	}
	v := waitFor("5 decisions, 2 refused", func(v view) bool { return v.Total == "5" && v.Refused == "2" })
	if len(v.ByLimit) != 1 || !slices.Equal(v.ByLimit[0], []string{"free", "per-minute", "2", "2"}) {
		t.Errorf("refusals by limit: %q", v.ByLimit)
	}
	if len(v.Top) != 1 || !strings.HasPrefix(v.Top[0][0], "api-key:") || v.Top[0][1] != "free" || v.Top[0][2] != "2" {
		t.Errorf("most limited clients: %q", v.Top)
	}
	if strings.Contains(strings.Join(v.Top[0], " "), "demo-free-key") {
		t.Error("the dashboard shows a raw API key")
	}

	// The second those requests were made is complete once the clock moves
	// on: the page then shows it as the current rate.
	f.clock.Advance(time.Second)
	v = waitFor("a rate of 5 decisions and 2 refusals per second", func(v view) bool { return v.Rate == "5" && v.RefusedRate == "2" })
	if v.Now != "2026-11-30T12:00:01Z" || !v.SameDocument {
		t.Errorf("clock %s, same document (no reload) %v", v.Now, v.SameDocument)
	}
}

// run runs actions in the browser tab of ctx, bounded to 10 s.
func run(t *testing.T, ctx context.Context, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("chromedp: %v", err)
	}
}

// eval evaluates a JavaScript expression in the page of ctx, bounded to 10
// s, and decodes its value.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("chromedp: evaluating %.60q: %v", expr, err)
	}
	return v
}
