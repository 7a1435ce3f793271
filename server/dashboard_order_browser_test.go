package server_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The dashboard shows the range it is set to: polls of the minute still
// unanswered when the hour is chosen (a slow server, held here) answer
// after the hour's, and are not drawn over it.
func TestBrowserDashboardShowsTheRangeChosen(t *testing.T) {
	f := newFixture(t, testConfig)
	admin := f.srv.AdminHandler()
	var hold atomic.Bool
	held, release := make(chan struct{}, 64), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/dashboard/data" && r.URL.Query().Get("range") == "1m" && hold.Load() {
			held <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		admin.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	ctx := chromium.Tab(t)
	run(t, ctx, chromedp.Navigate(srv.URL+"/dashboard"))
	waitJS(t, ctx, `document.getElementById("total-decisions").textContent === "0"`)
	hold.Store(true)
	<-held // a poll of the minute waits
	// Every text the step takes from now on is kept.
	eval[bool](t, ctx, `(() => {
		const step = document.querySelector(".step");
		window.stepTexts = [];
		new MutationObserver(() => window.stepTexts.push(step.textContent)).observe(step, {childList: true, characterData: true, subtree: true});
		return true;
	})()`)
	run(t, ctx, chromedp.Click(chromedp.ID("range-1h")))
	waitJS(t, ctx, `window.stepTexts.includes("30 seconds")`)
	hold.Store(false)
	close(release)
	time.Sleep(500 * time.Millisecond)
	texts := eval[[]string](t, ctx, `window.stepTexts`)
	first := slices.Index(texts, "30 seconds")
	for _, s := range texts[first:] {
		if s != "30 seconds" {
			t.Errorf("the range is the hour; the page went back to steps of %q: %q", s, texts)
			break
		}
	}
}
