package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sluice-dev/sluice/internal/realtest"
)

// TestBrowserDashboardIsLive opens /dashboard in headless Chromium, sends
// requests through the server, and watches the page update itself (it polls
// every second) without a reload: totals, refusals by limit, the most
// limited client, and — once the clock has moved on a second — the rate.
func TestBrowserDashboardIsLive(t *testing.T) {
	// The browser asks for /favicon.ico, which the server proxies like any
	// request and would count: it is exempt here so that the counts are
	// the test's own requests.
	f := newFixture(t, realtest.Replace(t, "testConfig", testConfig, `exempt: ["GET /api/health"]`, `exempt: ["GET /api/health", "GET /favicon.ico"]`))
	ctx := chromium.Tab(t)
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

// awaitEval evaluates a JavaScript expression whose value is a promise of
// a string in the page of ctx, bounded to 10 s, and returns that string.
func awaitEval(t *testing.T, ctx context.Context, expr string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("chromedp: evaluating %.60q: %v", expr, err)
	}
	return v
}

// otherSite serves an empty page on a loopback port of its own until the
// test ends, and returns its URL: an origin that is none of the server's.
func otherSite(t *testing.T) string {
	t.Helper()
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("<!doctype html><title>another site</title>"))
	}))
	t.Cleanup(page.Close)
	return page.URL
}
