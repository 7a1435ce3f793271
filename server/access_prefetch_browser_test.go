package server_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// A real Chromium on the sluice host opens a page of another site
// (evil.example) that lists admin URLs in speculation rules. Chromium
// fetches each at once, without any gesture of its user, as a navigation
// whose Sec-Fetch-Site is "none" and whose Sec-Purpose is "prefetch", to
// http://127.0.0.1:PORT, a loopback Host: each is refused loopback's read
// scope (README, "Admin listener": withheld from a cross-site request, so
// no web page can use them). Served, they would spend the scrapes' and
// dashboard reads' slots on that page's behalf. Chromium discards a
// prefetch answered with a status other than 2xx, so refusing it breaks
// nothing.
func TestASpeculationRulesPrefetchGetsNoLoopbackScope(t *testing.T) {
	f := newFixture(t, testConfig) // admin.loopback_scopes left at its default, [read]
	paths := []string{"/metrics", "/dashboard/data?range=1h"}
	rules := `{"prefetch":[{"source":"list","eagerness":"immediate","urls":[`
	for _, p := range paths {
		rules += `"` + f.admin.URL + p + `",`
	}
	// A probe that needs the admin scope, which loopback lacks: its
	// refusal proves the prefetches reached the listener.
	rules += `"` + f.admin.URL + `/v1/keys"]}]}`
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<!doctype html><title>another site</title><script type="speculationrules">` + rules + `</script>`))
	}))
	t.Cleanup(evil.Close)
	page, err := url.Parse(evil.URL)
	if err != nil {
		t.Fatal(err)
	}
	ctx := reboundChromium(t, "evil.example")
	run(t, ctx, chromedp.Navigate("http://evil.example:"+page.Port()+"/"))
	deadline := time.Now().Add(10 * time.Second)
	var m map[string]float64
	for {
		m = scrape(t, f.admin.URL)
		if m[`sluice_caller_refusals_total{scope="admin"}`] >= 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if m[`sluice_caller_refusals_total{scope="admin"}`] < 1 {
		t.Fatal("Chromium sent no prefetch of the other site's speculation rules to the admin listener")
	}
	time.Sleep(500 * time.Millisecond) // the other prefetches, sent with the probe
	m = scrape(t, f.admin.URL)
	if refused := m[`sluice_caller_refusals_total{scope="read"}`]; refused < float64(len(paths)) {
		t.Errorf("a page of another site listed %v in speculation rules: Chromium prefetched them (Sec-Fetch-Site: none, Sec-Purpose: prefetch) and %v of them were refused loopback's read scope, want all %d",
			paths, refused, len(paths))
	}
}

// A prefetch or prerender that is not same-origin (Sec-Purpose, or the
// older Purpose, holding prefetch, in any case and with any parameters)
// gets no loopback scope; a same-origin prefetch, and the navigation a
// user makes by typing the URL (Sec-Fetch-Site none, no purpose), keep it.
func TestAPrefetchNotOfTheSameOriginGetsNoLoopbackScope(t *testing.T) {
	f := newFixture(t, testConfig) // admin.loopback_scopes left at its default, [read]
	typed := []string{"Sec-Fetch-Site", "none", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Dest", "document"}
	for _, c := range []struct {
		name   string
		header []string
		want   int
	}{
		{"a typed URL", typed, 200},
		{"a prefetch", append([]string{"Sec-Purpose", "prefetch"}, typed...), 403},
		{"a prerender", append([]string{"Sec-Purpose", "prefetch;prerender"}, typed...), 403},
		{"a prefetch through a proxy", append([]string{"Sec-Purpose", "Prefetch; anonymous-client-ip"}, typed...), 403},
		{"a cross-site prefetch", []string{"Sec-Purpose", "prefetch", "Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Dest", "document"}, 403},
		{"an older browser's prefetch", []string{"Purpose", "prefetch"}, 403},
		{"a same-origin prefetch", []string{"Sec-Purpose", "prefetch", "Sec-Fetch-Site", "same-origin", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Dest", "document"}, 200},
	} {
		req, _ := http.NewRequest("GET", f.admin.URL+"/metrics", nil)
		for i := 0; i+1 < len(c.header); i += 2 {
			req.Header.Set(c.header[i], c.header[i+1])
		}
		resp, err := f.admin.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s (%s): %d, want %d", c.name, strings.Join(c.header, " "), resp.StatusCode, c.want)
		}
	}
}
