package server_test

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/server"
)

// dashboardLoadConfig has two plans whose refusals come from different
// limits, two named keys, and a degradation section (so that a level can be
// pinned). The browser's /favicon.ico is exempt: the counts are the test's
// requests only.
const dashboardLoadConfig = `
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 3, window: 1m}
  pro:
    limits:
      - {name: per-second, algorithm: fixed-window, quantity: 2, window: 1s}
      - {name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m}
default_plan: free
keys:
  - {name: k1, sha256: 9f8cfdb17116bf0e2a44e071454f25594cb9b8737bf331e6a2f0b30550572f29, plan: free} # demo-free-key
  - {name: acme, sha256: 1fbfd5e2a34698deb796eb78add256a067ec065519b8329b1eb85f5e2ef906d4, plan: pro} # demo-pro-key
exempt: ["GET /favicon.ico"]
degradation:
  levels:
    critical: {enter: {in_flight: 100000}, leave: {in_flight: 1}}
`

// dashboardView is what the dashboard shows, read from the page.
type dashboardView struct {
	Now, Rate, RefusedRate, Total, Undecided, Refused, Level, StoreKind, Breaker, StoreErrors, Fallback string
	LegendDecisions, LegendRefused, LegendUndecided, LegendStoreErrors, LegendFallback, Step            string
	Plans, Limits, Top                                                                                  [][]string
	// Axes: the y tick labels and the number of x (time) labels of each
	// chart, and the level chart's last point and the y of each of its
	// level labels.
	YTicks      map[string][]string
	XLabels     map[string]int
	LevelLastY  float64
	LevelLabelY map[string]float64
	Paths       map[string]int // chart id → lines drawn
}

const readDashboard = `(function () {
	const text = id => document.getElementById(id).textContent;
	const table = id => [...document.querySelectorAll("#" + id + " tbody tr")].map(tr => [...tr.cells].map(c => c.textContent));
	const v = {Now: text("now"), Rate: text("rate"), RefusedRate: text("refused-rate"), Total: text("total-decisions"),
		Undecided: text("total-undecided"), Refused: text("total-refused"), Level: text("level"),
		StoreKind: text("store-kind"), Breaker: text("store-breaker"), StoreErrors: text("store-errors"), Fallback: text("store-fallback"),
		LegendDecisions: text("legend-decisions"), LegendRefused: text("legend-refused"), LegendUndecided: text("legend-undecided"),
		LegendStoreErrors: text("legend-store-errors"), LegendFallback: text("legend-fallback"),
		Step: document.querySelector(".step").textContent,
		Plans: table("by-plan"), Limits: table("by-limit"), Top: table("top"),
		YTicks: {}, XLabels: {}, Paths: {}, LevelLabelY: {}, LevelLastY: -1};
	for (const id of ["chart-decisions", "chart-store", "chart-level"]) {
		const texts = [...document.querySelectorAll("#" + id + " text")];
		v.YTicks[id] = texts.filter(t => t.getAttribute("text-anchor") === "end" && Number(t.getAttribute("x")) < 60).map(t => t.textContent);
		v.XLabels[id] = texts.filter(t => Number(t.getAttribute("y")) > 150).length;
		v.Paths[id] = document.querySelectorAll("#" + id + " path").length;
	}
	for (const t of document.querySelectorAll("#chart-level text")) { v.LevelLabelY[t.textContent] = Number(t.getAttribute("y")) - 4; }
	const path = document.querySelector("#chart-level path"), ys = path && path.getAttribute("d").match(/-?[0-9.]+/g);
	if (ys) { v.LevelLastY = Number(ys[ys.length - 1]); }
	return v;
})()`

// TestBrowserDashboardShowsWhatMetricsCount sends a known load through
// sluice (refusals by two plans and two limits, named keys and an
// anonymous client; on Redis, then a Redis outage decided by the fallback),
// pins a degradation level, and reads the dashboard in headless Chromium:
// every count it shows — totals, the range's legends, refusals by plan and
// by limit, store errors and fallback decisions, the level — equals /metrics
// (and the known load), in each of its three ranges, and its charts have
// axes and legends.
func TestBrowserDashboardShowsWhatMetricsCount(t *testing.T) {
	for _, onRedis := range []bool{false, true} {
		name := "memory"
		if onRedis {
			name = "redis"
		}
		t.Run(name, func(t *testing.T) { testDashboardAgainstMetrics(t, onRedis) })
	}
}

func testDashboardAgainstMetrics(t *testing.T, onRedis bool) {
	clock := &fakeClock{}
	clock.us.Store(sluice.MicrosSinceEpoch(noon))
	d := newPageServer(t, dashboardLoadConfig, clock.Now, onRedis)
	ctx := chromium.Tab(t)
	run(t, ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(d.admin.URL+"/dashboard"))

	// load counts each plan's requests and refusals.
	type planLoad struct{ decided, refused int }
	load := map[string]*planLoad{"free": {}, "pro": {}}
	send := func(plan string, n int, header map[string]string) {
		for range n {
			code, body := get(t, "GET", d.pub.URL+"/api/items", "", header)
			load[plan].decided++
			switch code {
			case http.StatusOK:
			case http.StatusTooManyRequests:
				load[plan].refused++
			default:
				t.Fatalf("%s: %d %s", plan, code, body)
			}
		}
	}
	send("free", 5, map[string]string{"X-API-Key": "demo-free-key"}) // 3 admitted, 2 refused by per-minute
	send("pro", 4, map[string]string{"X-API-Key": "demo-pro-key"})   // 2 admitted, 2 refused by per-second
	send("free", 4, nil)                                             // anonymous: 3 admitted, 1 refused
	if load["free"].refused != 3 || load["pro"].refused != 2 {
		m := scrape(t, d.admin.URL)
		t.Fatalf("refused: free %d, pro %d; want 3 and 2 (store errors %v, fallback decisions %v)", load["free"].refused, load["pro"].refused,
			m[`sluice_store_errors_total{store="redis"}`], m["sluice_fallback_decisions_total"])
	}
	lastSecond := "13" // decisions in the last complete second
	if onRedis {
		// Redis goes away: the next requests are decided by the fallback
		// (on_store_error: local), whatever it decides.
		d.redisServer.Kill()
		clock.Advance(2 * time.Second)
		send("pro", 2, map[string]string{"X-API-Key": "demo-pro-key"})
		lastSecond = "2"
	}
	decisions := load["free"].decided + load["pro"].decided
	refused := load["free"].refused + load["pro"].refused
	code, body := get(t, "PUT", d.admin.URL+"/v1/degradation", `{"level":"elevated"}`, map[string]string{server.TokenHeader: testToken})
	if code != 200 {
		t.Fatalf("pinning a level: %d %s", code, body)
	}
	clock.Advance(time.Second)
	m := scrape(t, d.admin.URL)

	want := func(series string) string { return strconv.FormatFloat(m[series], 'f', -1, 64) }
	// The page polls every second: wait for a poll after the load.
	var v dashboardView
	deadline := time.Now().Add(5 * time.Second)
	for {
		v = eval[dashboardView](t, ctx, readDashboard)
		if v.Total == strconv.Itoa(decisions) && strings.HasPrefix(v.Level, "1") && v.Fallback == want("sluice_fallback_decisions_total") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the dashboard never showed the load: %+v", v)
		}
		time.Sleep(100 * time.Millisecond)
	}

	checks := []struct{ what, shown, want string }{
		{"decisions and undecided = sluice_decision_seconds_count", strconv.Itoa(atoi(t, v.Total) + atoi(t, v.Undecided)), want("sluice_decision_seconds_count")},
		{"undecided = sluice_undecided_total", v.Undecided, want("sluice_undecided_total")},
		{"refused", v.Refused, strconv.Itoa(refused)},
		{"level = sluice_degradation_level", v.Level, want("sluice_degradation_level") + " elevated"},
		{"store errors = sluice_store_errors_total", v.StoreErrors, want(`sluice_store_errors_total{store="` + v.StoreKind + `"}`)},
		{"fallback decisions = sluice_fallback_decisions_total", v.Fallback, want("sluice_fallback_decisions_total")},
		// Everything happened within the minute shown.
		{"decisions in range", v.LegendDecisions, v.Total},
		{"refused in range", v.LegendRefused, v.Refused},
		{"undecided in range", v.LegendUndecided, v.Undecided},
		{"store errors in range", v.LegendStoreErrors, v.StoreErrors},
		{"fallback in range", v.LegendFallback, v.Fallback},
		{"step", v.Step, "second"},
	}
	// The last complete second: the whole load on memory, the fallback's
	// requests on Redis.
	if onRedis {
		checks = append(checks, struct{ what, shown, want string }{"store kind", v.StoreKind, "redis"})
		if m["sluice_fallback_decisions_total"] < 2 || m[`sluice_store_errors_total{store="redis"}`] < 1 {
			t.Errorf("after Redis went away: %v fallback decisions, %v store errors; want at least 2 (one per request) and 1",
				m["sluice_fallback_decisions_total"], m[`sluice_store_errors_total{store="redis"}`])
		}
	} else {
		checks = append(checks, struct{ what, shown, want string }{"store kind", v.StoreKind, "memory"},
			struct{ what, shown, want string }{"fallback on memory", v.Fallback, "0"})
	}
	checks = append(checks, struct{ what, shown, want string }{"decisions in the last complete second", v.Rate, lastSecond})
	for _, c := range checks {
		if c.shown != c.want {
			t.Errorf("%s: the dashboard shows %q, want %q", c.what, c.shown, c.want)
		}
	}

	// Refusals by limit: one row per series of /metrics with a refusal,
	// the same count since start and in range.
	limited := regexp.MustCompile(`^sluice_decisions_total\{limit="([^"]+)",policy="([^"]+)",result="limited"\}$`)
	wantLimits := map[[2]string]string{}
	for series, n := range m {
		if g := limited.FindStringSubmatch(series); g != nil && n > 0 {
			wantLimits[[2]string{g[2], g[1]}] = strconv.FormatFloat(n, 'f', -1, 64)
		}
	}
	if len(wantLimits) != 2 || wantLimits[[2]string{"free", "per-minute"}] != "3" ||
		wantLimits[[2]string{"pro", "per-second"}] != strconv.Itoa(load["pro"].refused) {
		t.Errorf("/metrics counts refusals %v, want free/per-minute 3 and pro/per-second %d", wantLimits, load["pro"].refused)
	}
	if len(v.Limits) != len(wantLimits) {
		t.Errorf("refusals by limit: %q, want %d rows", v.Limits, len(wantLimits))
	}
	for _, row := range v.Limits {
		if n, ok := wantLimits[[2]string{row[0], row[1]}]; !ok || row[2] != n || row[3] != n {
			t.Errorf("refusals by limit: row %q, /metrics counts %q", row, n)
		}
	}
	// Refusals by plan: requests (each refused by one limit here, so the
	// sum of the plan's limited series), with the plan's decisions.
	wantPlans := map[string][]string{}
	for plan, l := range load {
		n := strconv.Itoa(l.refused)
		wantPlans[plan] = []string{plan, n, n, strconv.Itoa(l.decided), strconv.FormatFloat(100*float64(l.refused)/float64(l.decided), 'f', 1, 64)}
	}
	if len(v.Plans) != 2 {
		t.Errorf("refusals by plan: %q", v.Plans)
	}
	for _, row := range v.Plans {
		if w := wantPlans[row[0]]; strings.Join(row, "|") != strings.Join(w, "|") {
			t.Errorf("refusals by plan: row %q, want %q", row, w)
		}
	}
	// The most limited clients by their configured names; the anonymous
	// one by a pseudonym.
	top := map[string]string{}
	for _, row := range v.Top {
		top[row[0]] = row[1] + " " + row[2]
	}
	if top["api-key:k1"] != "free 2" || top["api-key:acme"] != "pro "+strconv.Itoa(load["pro"].refused) || len(v.Top) != 3 {
		t.Errorf("most limited clients: %q", v.Top)
	}
	for _, row := range v.Top {
		if !strings.HasPrefix(row[0], "api-key:") && !regexp.MustCompile(`^ip:[0-9a-f]{12}$`).MatchString(row[0]) {
			t.Errorf("client %q: neither a key's name nor a pseudonym", row[0])
		}
	}

	// Axes and legends: y ticks 0, half and the top, time labels, a line
	// per legend entry; the level chart names the levels and its line ends
	// at "elevated".
	for id, lines := range map[string]int{"chart-decisions": 3, "chart-store": 2, "chart-level": 1} {
		if len(v.YTicks[id]) < 3 || v.XLabels[id] < 2 || v.Paths[id] != lines {
			t.Errorf("%s: y ticks %q, %d time labels, %d lines (want %d)", id, v.YTicks[id], v.XLabels[id], v.Paths[id], lines)
		}
	}
	if got := strings.Join(v.YTicks["chart-level"], ","); got != "normal,elevated,high,critical" {
		t.Errorf("level axis: %s", got)
	}
	if y := v.LevelLabelY["elevated"]; v.LevelLastY < y-0.5 || v.LevelLastY > y+0.5 {
		t.Errorf("the level line ends at y=%v, the elevated tick is at y=%v", v.LevelLastY, y)
	}

	if bad := eval[[]string](t, ctx, lowContrast); len(bad) > 0 {
		t.Errorf("text of too low a contrast: %q", bad)
	}
	for _, width := range []int64{1280, 390} { // charts redraw to the width
		run(t, ctx, chromedp.EmulateViewport(width, 900), chromedp.Sleep(200*time.Millisecond))
		if bad := eval[[]string](t, ctx, overflow); len(bad) > 0 {
			t.Errorf("at %d px, wider than the window: %q", width, bad)
		}
	}
	run(t, ctx, chromedp.EmulateViewport(1280, 900))

	// The longer ranges show the same counts, in wider steps.
	for _, rg := range []struct{ id, step string }{{"range-15m", "10 seconds"}, {"range-1h", "30 seconds"}} {
		run(t, ctx, chromedp.Click(chromedp.ID(rg.id)))
		deadline := time.Now().Add(5 * time.Second)
		for {
			w := eval[dashboardView](t, ctx, readDashboard)
			if w.Step == rg.step {
				if w.LegendDecisions != v.Total || w.LegendRefused != v.Refused || w.LegendFallback != v.Fallback ||
					len(w.Limits) != len(v.Limits) || w.Limits[0][2] != v.Limits[0][2] {
					t.Errorf("%s: legends %s/%s/%s, limits %q; want %s/%s/%s and %q", rg.id,
						w.LegendDecisions, w.LegendRefused, w.LegendFallback, w.Limits, v.Total, v.Refused, v.Fallback, v.Limits)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the dashboard still shows steps of %q", rg.id, w.Step)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}
