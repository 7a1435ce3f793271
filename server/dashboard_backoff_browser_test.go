package server_test

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// An open dashboard whose server stops answering (a restart, a crash)
// polls less and less often, doubling its wait after each failed poll, and
// says when it tries next; once the server answers again it shows the data
// and polls every second again. Before, it asked every second forever.
func TestBrowserDashboardBacksOffWhileTheServerIsDown(t *testing.T) {
	t.Parallel() // most of its 20 s is the outage it waits out
	f := newFixture(t, testConfig)
	var down atomic.Bool
	admin := f.srv.AdminHandler()
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			// A server gone: the connection closes without an answer.
			if c, _, err := http.NewResponseController(w).Hijack(); err == nil {
				c.Close()
			}
			return
		}
		admin.ServeHTTP(w, r)
	}))
	t.Cleanup(page.Close)
	ctx := chromium.Tab(t)
	run(t, ctx, chromedp.Navigate(page.URL+"/dashboard"))
	waitUntil(t, ctx, "its data", `document.getElementById("total-decisions").textContent === "0"`)
	eval[bool](t, ctx, `(function () {
		window.polls = 0;
		const f = window.fetch;
		window.fetch = (...args) => (window.polls++, f(...args));
		return true;
	})()`)

	down.Store(true)
	const outage = 8 * time.Second
	time.Sleep(outage)
	polls := eval[int](t, ctx, `window.polls`)
	msg := eval[string](t, ctx, `document.getElementById("error").textContent`)
	t.Logf("%d polls in the %v the server was down; the page says %q", polls, outage, msg)
	// Every second: 8; doubling from 1 s: at 1, 3 and 7 s.
	if polls > 4 {
		t.Errorf("%d polls in the %v the server was down, want at most 4 (backing off)", polls, outage)
	}
	if !regexp.MustCompile(`^No data: .* \(retrying in (4|8) s\)\.$`).MatchString(msg) {
		t.Errorf("the page says %q while the server is down", msg)
	}

	down.Store(false)
	f.do(t, "GET", "/api/search", "", map[string]string{"X-API-Key": "demo-free-key"})
	deadline := time.Now().Add(12 * time.Second)
	for eval[string](t, ctx, `document.getElementById("total-decisions").textContent`) != "1" {
		if time.Now().After(deadline) {
			t.Fatalf("the dashboard did not show the server's data again within 12 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if msg := eval[string](t, ctx, `document.getElementById("error").textContent`); msg != "" {
		t.Errorf("the error stays shown once the server answers: %q", msg)
	}
	// Back to a poll a second.
	before := eval[int](t, ctx, `window.polls`)
	time.Sleep(3500 * time.Millisecond)
	if n := eval[int](t, ctx, `window.polls`) - before; n < 3 {
		t.Errorf("%d polls in 3.5 s once the server answers again, want a poll a second", n)
	}
}
