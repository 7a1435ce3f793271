package server_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/sluice-dev/sluice/server"
)

// TestBrowserPageOfANameReboundToLoopbackReadsNothing has a real Chromium,
// on the sluice host, open the admin listener as http://rebound.example:PORT,
// a name an attacker's DNS answers with 127.0.0.1 once its page has
// loaded: the page is then same-origin with the listener, and its fetches
// carry neither Sec-Fetch-Site (sent only to https and localhost) nor
// Origin (not sent on a same-origin GET). Loopback's scopes (the default
// [read]) are granted only to a Host that is a loopback name or address,
// so the page reads none of /metrics, /dashboard/data or the degradation
// level: each is a stranger's 401. The same browser at
// http://127.0.0.1:PORT, the listener's own loopback origin, reads them.
func TestBrowserPageOfANameReboundToLoopbackReadsNothing(t *testing.T) {
	f := newFixture(t, testConfig) // loopback_scopes left at its default, [read]
	admin := f.admin
	u, err := url.Parse(admin.URL)
	if err != nil {
		t.Fatal(err)
	}
	ctx := reboundChromium(t, "rebound.example")
	read := func(origin, path string) string {
		t.Helper()
		run(t, ctx, chromedp.Navigate(origin+"/healthz"))
		return awaitEval(t, ctx, `fetch("`+path+`").then(r => r.text().then(b => r.status + " " + b.slice(0, 60)), e => String(e))`)
	}
	paths := []string{"/metrics", "/dashboard/data?range=1m", "/v1/degradation"}
	for _, path := range paths {
		if got := read("http://rebound.example:"+u.Port(), path); !strings.HasPrefix(got, "401 ") {
			t.Errorf("a page of rebound.example (a name rebound to 127.0.0.1) read %s: %.60q, want a stranger's 401", path, got)
		}
	}
	for _, path := range paths {
		if got := read(admin.URL, path); !strings.HasPrefix(got, "200 ") {
			t.Errorf("the listener's own page at %s could not read %s: %.60q", admin.URL, path, got)
		}
	}
}

// reboundChromium starts a Chromium of the test's own, ended when the test
// ends, in which name resolves to 127.0.0.1, as an attacker's DNS answers
// after rebinding (the package's shared browser resolves names as the
// system does), and returns a tab of it.
func reboundChromium(t *testing.T, name string) context.Context {
	t.Helper()
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath("chromium"), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("host-resolver-rules", "MAP "+name+" 127.0.0.1"),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	// The first Do starts the browser, which lives as long as the context
	// it is given: its start is bounded by a watchdog, not a deadline.
	watchdog := time.AfterFunc(60*time.Second, cancelTab)
	err := chromedp.Do(ctx)
	if !watchdog.Stop() {
		t.Fatal("chromium did not start within 60s")
	}
	if err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

// Loopback's scopes go only with a Host that is a loopback name or
// address, whatever the request's other headers: localhost and names under
// .localhost (never resolved by DNS), 127.0.0.0/8 and ::1, with or without
// a port. Any other Host, the host's own name included, is a stranger's
// (401, no scope), unless the request carries a token.
func TestLoopbackScopesGoOnlyWithALoopbackHost(t *testing.T) {
	f := newFixture(t, testConfig) // loopback_scopes left at its default, [read]
	for _, c := range []struct {
		host  string
		token bool
		want  int
	}{
		{"localhost", false, 200},
		{"LOCALHOST.:9090", false, 200},
		{"dashboard.localhost:9090", false, 200},
		{"127.0.0.1:9090", false, 200},
		{"127.0.0.2", false, 200},
		{"[::1]:9090", false, 200},
		{"rebound.example:9090", false, 401},
		{"127.0.0.1.nip.io", false, 401},
		{"localhost.example", false, 401},
		{"sluice-host", false, 401},
		{"10.0.0.1:9090", false, 401},
		{"sluice-host", true, 200},
	} {
		req, _ := http.NewRequest("GET", f.admin.URL+"/metrics", nil)
		req.Host = c.host
		if c.token {
			req.Header.Set(server.TokenHeader, testToken)
		}
		resp, err := f.admin.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("Host %s (token %v): %d, want %d", c.host, c.token, resp.StatusCode, c.want)
		}
	}
}
