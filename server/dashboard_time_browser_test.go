package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// The dashboard's times are one clock: its charts' time axis reads in UTC,
// as the time it shows at the top and the level's "since" do, whatever the
// browser's time zone (here New York's, five hours behind in November).
func TestBrowserDashboardTimesAreUTC(t *testing.T) {
	f := newFixture(t, testConfig) // its clock: 2026-11-30T12:00:00Z
	ctx := chromium.Tab(t)
	run(t, ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "America/New_York"})
		return err
	}), chromedp.EmulateViewport(1280, 900), chromedp.Navigate(f.admin.URL+"/dashboard"))
	waitJS(t, ctx, `document.getElementById("now").textContent === "2026-11-30T12:00:00Z"`)
	labels := eval[[]string](t, ctx, `[...document.querySelectorAll("#chart-decisions text")].filter(t => Number(t.getAttribute("y")) > 160).map(t => t.textContent)`)
	if len(labels) < 2 || labels[0] != "11:59:01" || labels[len(labels)-1] != "12:00:00" {
		t.Errorf("the minute to 12:00:00 UTC is labelled %q", labels)
	}
}

// The charts of counts mark whole requests on their y axis: 0, 1 and 2
// with no traffic, never half a request.
func TestBrowserDashboardCountsAxesAreWhole(t *testing.T) {
	f := newFixture(t, testConfig)
	ctx := chromium.Tab(t)
	run(t, ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(f.admin.URL+"/dashboard"))
	waitJS(t, ctx, `document.getElementById("total-decisions").textContent === "0"`)
	for _, id := range []string{"chart-decisions", "chart-store"} {
		ticks := eval[[]string](t, ctx, `[...document.querySelectorAll("#`+id+` text")].filter(t => t.getAttribute("text-anchor") === "end" && Number(t.getAttribute("x")) < 60).map(t => t.textContent)`)
		if strings.Join(ticks, ",") != "0,1,2" {
			t.Errorf("%s with no traffic: y ticks %q, want 0, 1, 2", id, ticks)
		}
	}
}
