package server_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// A real Chromium on the sluice host opens a page of another site
// (evil.example, served from this host) whose script sends no-cors GETs to
// the admin listener at http://127.0.0.1:PORT, a loopback Host: each is
// refused loopback's read scope (README, "Admin listener": withheld from a
// cross-site request, so no web page can use them), as the page's POSTs
// are, though it could not read the answers: served, they would spend the
// scrapes' and dashboard reads' slots on its behalf.
func TestACrossSitePagesReadsGetNoLoopbackScope(t *testing.T) {
	f := newFixture(t, testConfig) // admin.loopback_scopes left at its default, [read]
	page, err := url.Parse(otherSite(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx := reboundChromium(t, "evil.example")
	run(t, ctx, chromedp.Navigate("http://evil.example:"+page.Port()+"/"))
	paths := []string{"/metrics", "/dashboard/data?range=1h", "/v1/degradation"}
	for _, path := range paths {
		got := awaitEval(t, ctx, `fetch("`+f.admin.URL+path+`", {mode: "no-cors", credentials: "include"}).then(r => "sent " + r.type, e => String(e))`)
		if !strings.HasPrefix(got, "sent") {
			t.Fatalf("the other site's GET %s was not sent: %s", path, got)
		}
	}
	// The page's requests do reach the listener: one it needs the admin
	// scope for (which loopback lacks) is refused and counted.
	awaitEval(t, ctx, `fetch("`+f.admin.URL+`/v1/keys", {mode: "no-cors"}).then(r => "sent", e => String(e))`)
	m := scrape(t, f.admin.URL)
	if m[`sluice_caller_refusals_total{scope="admin"}`] != 1 {
		t.Fatalf("the page's requests did not reach the admin listener: %v admin refusals", m[`sluice_caller_refusals_total{scope="admin"}`])
	}
	refused := m[`sluice_caller_refusals_total{scope="read"}`]
	if refused != float64(len(paths)) {
		t.Errorf("a page of another site (evil.example) had %d GETs served with loopback's read scope: %v of them refused, want all %d (README: withheld from a cross-site request, so no web page can use them)",
			len(paths), refused, len(paths))
	}
}
