package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// cspDirectives parses a Content-Security-Policy into its directives.
func cspDirectives(policy string) map[string][]string {
	out := map[string][]string{}
	for _, d := range strings.Split(policy, ";") {
		if f := strings.Fields(d); len(f) > 0 {
			out[f[0]] = f[1:]
		}
	}
	return out
}

// Every page sluice serves runs its own script and no other: a value of
// the configuration or of a request that ever reached the page as markup
// could not run script there. Its Content-Security-Policy allows scripts
// by hash only, loads nothing from elsewhere, and it is never read as
// another type.
func TestPagesAllowOnlyTheirOwnScripts(t *testing.T) {
	f := newFixture(t, testConfig)
	for _, c := range []struct {
		name, path string
		admin      bool
	}{
		{"the dashboard", "/dashboard", true},
		{"the designer", "/designer", true},
		{"/docs on the admin listener", "/docs", true},
		{"/docs on the public listener", "/docs", false},
	} {
		to := f.http
		if c.admin {
			to = f.admin
		}
		r := f.send(t, to, "GET", c.path, "", map[string]string{"Sluice-Token": testToken})
		r.Body.Close()
		csp := cspDirectives(r.Header.Get("Content-Security-Policy"))
		if r.StatusCode != 200 || strings.Join(csp["default-src"], " ") != "'none'" || strings.Join(csp["base-uri"], " ") != "'none'" {
			t.Errorf("%s: %d, Content-Security-Policy %q", c.name, r.StatusCode, r.Header.Get("Content-Security-Policy"))
		}
		scripts := csp["script-src"]
		if len(scripts) == 0 {
			t.Errorf("%s: no script-src", c.name)
		}
		for _, s := range scripts {
			if !strings.HasPrefix(s, "'sha256-") {
				t.Errorf("%s: script-src allows %s", c.name, s)
			}
		}
		if r.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: X-Content-Type-Options %q", c.name, r.Header.Get("X-Content-Type-Options"))
		}
	}
}

// Markup injected into a page (as a value that reached innerHTML would be)
// runs no script in Chromium, while the page's own script runs.
func TestBrowserPagesRunNoInjectedScript(t *testing.T) {
	f := newFixture(t, testConfig)
	ctx := chromium.Tab(t)
	for _, c := range []struct{ name, url, ready string }{
		{"the dashboard", f.admin.URL + "/dashboard", `document.getElementById("total-decisions").textContent !== "–"`},
		{"the designer", f.admin.URL + "/designer", `document.getElementById("chart").dataset.runs === "1"`},
		{"/docs", f.http.URL + "/docs", `document.querySelector(".api-base").textContent === location.origin`},
	} {
		run(t, ctx, chromedp.Navigate(c.url))
		deadline := time.Now().Add(5 * time.Second)
		for !eval[bool](t, ctx, c.ready) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: its own script did not run", c.name)
			}
			time.Sleep(50 * time.Millisecond)
		}
		eval[bool](t, ctx, `(function () {
			const d = document.createElement("div");
			d.innerHTML = '<img src="data:," onerror="window.injected = 1"><svg><image href="x" onerror="window.injected = 2"/></svg>';
			document.body.appendChild(d);
			const s = document.createElement("script");
			s.textContent = "window.injected = 3";
			document.body.appendChild(s);
			return true;
		})()`)
		time.Sleep(200 * time.Millisecond)
		if got := eval[string](t, ctx, `String(window.injected)`); got != "undefined" {
			t.Errorf("%s: injected markup ran script (window.injected = %s)", c.name, got)
		}
	}
}
