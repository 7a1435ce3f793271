package server_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/sluice-dev/sluice/examples"
)

// docsView is what a reader of /docs sees, read from the page.
type docsView struct {
	Current                           []string // the plan links marked current
	Rows                              [][]string
	Headers, Refusal, Overload        string
	Fields                            [][]string
	Curl, Go, JS, Python, OverloadSec string
	HTML                              string
	UnknownPlanShown                  bool
}

const readDocs = `(function () {
	const text = sel => { const e = document.querySelector(sel); return e ? e.innerText : ""; };
	const table = sel => [...document.querySelectorAll(sel + " tbody tr")].map(tr => [...tr.cells].map(c => c.innerText));
	const unknown = document.getElementById("unknown-plan");
	return {
		Current: [...document.querySelectorAll("nav a[aria-current=page]")].map(a => a.textContent),
		Rows: table("#plan-table"), Fields: table("#example-fields"),
		Headers: text("#example-headers"), Refusal: text("#example-refusal"), Overload: text("#example-overload"),
		Curl: text("#code-curl"), Go: text("#code-go"), JS: text("#code-js"), Python: text("#code-python"),
		OverloadSec: document.getElementById("overload").parentElement.innerText,
		HTML: document.documentElement.outerHTML,
		UnknownPlanShown: unknown !== null && unknown.getBoundingClientRect().height > 0,
	};
})()`

// TestBrowserDocsPage reads /docs, generated from examples/sluice.yaml, in
// headless Chromium, plan by plan (?plan=): the plan's limits and the
// global ones; header examples that are what a fresh client of the plan
// really gets from the public listener, with their q, w, r and t read back
// (r ≤ q, t ≤ w); a real 429 and a real 503 of the configuration; code in
// curl, Go, JavaScript and Python that backs off; nothing about the
// server's files; and no element wider than the window at 1280 and at 390
// CSS pixels.
func TestBrowserDocsPage(t *testing.T) {
	f := newFixture(t, string(examples.Config))
	cfg := f.srv.Config()
	ctx := chromium.Tab(t)

	// How a fresh client of each plan is sent to the public listener
	// (enterprise's listed key has limits of its own: a user on the plan
	// header of the trusted proxy is the plan's).
	clients := map[string]map[string]string{
		"anonymous":  nil,
		"free":       {"X-API-Key": "demo-free-key"},
		"pro":        {"X-API-Key": "demo-pro-key"},
		"enterprise": {"X-User-ID": "docs-reader", "X-Plan": "enterprise"},
	}
	for _, p := range cfg.Policy.Plans {
		t.Run(p.Name, func(t *testing.T) {
			run(t, ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(f.http.URL+"/docs?plan="+p.Name))
			v := eval[docsView](t, ctx, readDocs)
			if !slices.Equal(v.Current, []string{p.Name}) || v.UnknownPlanShown {
				t.Errorf("plan links marked current: %q; unknown plan shown: %v", v.Current, v.UnknownPlanShown)
			}

			// One row per limit of the plan, then the global limits.
			units := " requests per "
			for _, c := range p.Costs {
				if c > 1 {
					units = " units per "
				}
			}
			var want [][2]string
			for _, l := range p.Limits {
				want = append(want, [2]string{l.Name(), strconv.FormatInt(l.Quantity(), 10)})
			}
			for _, l := range cfg.Policy.Global {
				want = append(want, [2]string{l.Name() + " (all clients together)", strconv.FormatInt(l.Quantity(), 10)})
			}
			if len(v.Rows) != len(want) {
				t.Fatalf("limits table: %q, want %d rows", v.Rows, len(want))
			}
			for i, w := range want {
				if v.Rows[i][0] != w[0] || (!strings.HasPrefix(v.Rows[i][1], w[1]+units) && !strings.HasPrefix(v.Rows[i][1], w[1]+" units per ")) {
					t.Errorf("limits row %d: %q, want %s, %s…", i+1, v.Rows[i], w[0], w[1]+units)
				}
			}

			// The example is what a fresh client of the plan gets: the same
			// policy, and the same state of each of the plan's limits (the
			// global limit's r counts the test's earlier requests too).
			resp := f.do(t, "GET", "/api/items", "", clients[p.Name])
			page := headerMap(v.Headers)
			if got := resp.Header.Get("RateLimit-Policy"); page["Ratelimit-Policy"] != got {
				t.Errorf("example RateLimit-Policy:\n page %s\n real %s", page["Ratelimit-Policy"], got)
			}
			real := strings.Split(resp.Header.Get("RateLimit"), ", ")
			shown := strings.Split(page["Ratelimit"], ", ")
			if len(real) != len(shown) {
				t.Errorf("example RateLimit: page %q, real %q", shown, real)
			}
			for i := range min(len(real), len(shown), len(p.Limits)) {
				if p.Limits[i].Period() != 0 {
					// A calendar period's t is the time to its end, which
					// depends on the date: the example's is of its own.
					realR, _, _ := strings.Cut(real[i], ";t=")
					shownR, shownT, _ := strings.Cut(shown[i], ";t=")
					if realR != shownR || atoi(t, shownT) < 1 {
						t.Errorf("example RateLimit item %d: page %s, real %s", i, shown[i], real[i])
					}
					continue
				}
				if real[i] != shown[i] {
					t.Errorf("example RateLimit item %d: page %s, real %s", i, shown[i], real[i])
				}
			}
			// Its fields read back, limit by limit (those the headers
			// show), hold r ≤ q and t ≤ w.
			shownLimits := 0
			for _, w := range want {
				if !slices.Contains(cfg.Response.Hide, strings.TrimSuffix(w[0], " (all clients together)")) {
					shownLimits++
				}
			}
			if len(v.Fields) != shownLimits {
				t.Errorf("fields table: %q, want a row per limit", v.Fields)
			}
			for _, row := range v.Fields {
				q, r, tt := atoi(t, row[1]), atoi(t, row[3]), atoi(t, row[4])
				if row[2] == "—" { // a calendar period: no w
					if r > q || !strings.Contains(page["Ratelimit-Policy"], `"`+row[0]+`";q=`+row[1]) ||
						strings.Contains(page["Ratelimit-Policy"], `"`+row[0]+`";q=`+row[1]+`;w=`) {
						t.Errorf("fields of %s: q=%d w=— r=%d t=%d (policy %s)", row[0], q, r, tt, page["Ratelimit-Policy"])
					}
					continue
				}
				w := atoi(t, row[2])
				if r > q || tt > w || !strings.Contains(page["Ratelimit-Policy"], `"`+row[0]+`";q=`+row[1]+`;w=`+row[2]) {
					t.Errorf("fields of %s: q=%d w=%d r=%d t=%d (policy %s)", row[0], q, w, r, tt, page["Ratelimit-Policy"])
				}
			}

			// A real refusal: headers, a blank line, the problem body.
			headers, body, ok := strings.Cut(v.Refusal, "\n\n")
			if !ok || !strings.HasPrefix(headers, "HTTP/1.1 429 Too Many Requests\n") {
				t.Fatalf("example refusal:\n%s", v.Refusal)
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
			}
			if err := json.Unmarshal([]byte(body), &problem); err != nil {
				t.Fatalf("example refusal body is not JSON (%v):\n%s", err, body)
			}
			if problem.Type != "https://iana.org/assignments/http-problem-types#quota-exceeded" || problem.Status != 429 ||
				problem.Plan != p.Name || problem.RetryAfter < 1 || len(problem.Violated) == 0 {
				t.Errorf("example refusal body: %+v", problem)
			}

			// Code that backs off, addressed to this API.
			for lang, c := range map[string]struct{ code, want string }{
				"curl": {v.Curl, " --retry "}, "Go": {v.Go, "&client.Transport{}"},
				"JavaScript": {v.JS, "await fetch("}, "Python": {v.Python, "respect_retry_after_header=True"},
			} {
				if !strings.Contains(c.code, c.want) || !strings.Contains(c.code, f.http.URL+"/v1/items") || !strings.Contains(c.code, "Authorization") {
					t.Errorf("%s example lacks %q, this API's address or its key header:\n%s", lang, c.want, c.code)
				}
			}
			// What a 503 of an overloaded service means, and a real one.
			retryAfter := "Retry-After: " + strconv.Itoa(int(cfg.Degradation.RetryAfter.Seconds()))
			if !strings.HasPrefix(v.Overload, "HTTP/1.1 503 Service Unavailable\n") || !strings.Contains(v.Overload, retryAfter) ||
				!strings.Contains(v.Overload, "#temporary-reduced-capacity") || !strings.Contains(v.OverloadSec, "not about your quota") {
				t.Errorf("the overload section:\n%s\nexample:\n%s", v.OverloadSec, v.Overload)
			}
			// Nothing about the server's files.
			for _, secret := range []string{f.file, filepath.Dir(f.file), ".yaml"} {
				if strings.Contains(v.HTML, secret) {
					t.Errorf("the page names %q", secret)
				}
			}
			for _, width := range []int64{1280, 390} {
				run(t, ctx, chromedp.EmulateViewport(width, 900))
				if bad := eval[[]string](t, ctx, overflow); len(bad) > 0 {
					t.Errorf("at %d px, wider than the window: %q", width, bad)
				}
				if bad := eval[[]string](t, ctx, lowContrast); len(bad) > 0 {
					t.Errorf("at %d px, text of too low a contrast: %q", width, bad)
				}
			}
		})
	}

	// A plan that does not exist: 404, and the default plan's page says so.
	if resp := f.do(t, "GET", "/docs?plan=platinum", "", nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("/docs?plan=platinum: %d", resp.StatusCode)
	}
	run(t, ctx, chromedp.Navigate(f.http.URL+"/docs?plan=platinum"))
	if v := eval[docsView](t, ctx, readDocs); !v.UnknownPlanShown || !slices.Equal(v.Current, []string{cfg.Policy.DefaultPlan}) {
		t.Errorf("an unknown plan: notice shown %v, current %q", v.UnknownPlanShown, v.Current)
	}
}

// headerMap reads "Name: value" lines.
func headerMap(lines string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(lines, "\n") {
		if k, v, ok := strings.Cut(l, ": "); ok {
			m[k] = v
		}
	}
	return m
}

// TestBrowserDocsRulesFit: /docs of examples/rules.yaml, whose rules table
// holds long request patterns, has no element wider than the window at
// 1280 and 390 px.
func TestBrowserDocsRulesFit(t *testing.T) {
	rules, err := os.ReadFile("../examples/rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, string(rules))
	ctx := chromium.Tab(t)
	for _, width := range []int64{1280, 390} {
		run(t, ctx, chromedp.EmulateViewport(width, 900), chromedp.Navigate(f.http.URL+"/docs"))
		if rows := eval[int](t, ctx, `document.querySelectorAll("#rule-table tbody tr").length`); rows != 7 {
			t.Errorf("at %d px: %d rule rows, want 7 (a row per limit)", width, rows)
		}
		if bad := eval[[]string](t, ctx, overflow); len(bad) > 0 {
			t.Errorf("at %d px, wider than the window: %q", width, bad)
		}
	}
}
