package server_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserPageOfAnotherSiteCannotUseLoopbackScopes has Chromium, on the
// sluice host, open a page of another origin that posts a decision to the
// admin listener (a no-cors request, which any page may send): the
// listener grants loopback callers the check scope, yet the page spends
// nothing of the victim's quota. The admin listener's own page (its
// origin) still can.
func TestBrowserPageOfAnotherSiteCannotUseLoopbackScopes(t *testing.T) {
	f := newFixture(t, loopbackChecksConfig)
	page := otherSite(t)
	remaining := func() string {
		t.Helper()
		body := readAll(t, f.do(t, "POST", "/v1/check", `{"subject":"victim","cost":0}`, nil))
		_, after, _ := strings.Cut(body, `"remaining":`)
		n, _, _ := strings.Cut(after, ",")
		return n
	}
	before := remaining()
	post := `fetch("` + f.admin.URL + `/v1/check", {method: "POST", mode: "no-cors", body: '{"subject":"victim","cost":1}'}).then(() => "sent", e => String(e))`
	ctx := chromium.Tab(t)
	send := func(from string) string {
		t.Helper()
		run(t, ctx, chromedp.Navigate(from))
		return awaitEval(t, ctx, post)
	}
	if out := send(page); out != "sent" {
		t.Fatalf("the other site's request: %s", out)
	}
	if after := remaining(); after != before {
		t.Errorf("a page of another site spent the victim's quota: remaining %s, then %s", before, after)
	}
	// The listener's own origin: a page of it may (here /healthz, as good
	// as the dashboard's).
	if out := send(f.admin.URL + "/healthz"); out != "sent" {
		t.Fatalf("the listener's own page: %s", out)
	}
	if after := remaining(); after == before {
		t.Errorf("the listener's own page could not decide: remaining %s, then %s", before, after)
	}
}
