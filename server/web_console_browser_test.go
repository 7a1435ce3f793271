package server_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// consoleErrors collects, until the test ends, what the page of the tab
// ctx reports as going wrong in its console: uncaught exceptions, unhandled
// promise rejections and console.error calls. The browser's own network
// log (a request refused, a server gone) is left out: a page answers those
// in its own text.
type consoleErrors struct {
	mu  sync.Mutex
	got []string
}

func watchConsole(t *testing.T, ctx context.Context) *consoleErrors {
	t.Helper()
	c := &consoleErrors{}
	ctx, cancel := context.WithCancel(ctx)
	messages := chromedp.Console(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.IsException() || m.Type == chromedp.ConsoleError && m.Source == "" {
				text := m.String()
				if m.Exception != nil && m.Exception.Exception != nil && m.Exception.Exception.Description != "" {
					text += " (" + m.Exception.Exception.Description + ")"
				}
				c.mu.Lock()
				c.got = append(c.got, text+" at "+m.URL)
				c.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return c
}

// take returns what was collected since the last take.
func (c *consoleErrors) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	got := c.got
	c.got = nil
	return got
}

// waitUntil evaluates the JavaScript condition cond in the page of ctx
// until it is true, for at most 10 s.
func waitUntil(t *testing.T, ctx context.Context, what, cond string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !eval[bool](t, ctx, cond) {
		if time.Now().After(deadline) {
			t.Fatalf("the page never showed %s (%s)", what, cond)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestBrowserPagesThrowNothing does on each page what its users do —
// choose a dashboard range while requests are refused, run the designer
// with every pattern, a calendar quota, a limit it cannot read and each
// selection of algorithms, translate imports of every format and of none,
// read /docs of every plan and of one that does not exist — and fails on
// any exception the page did not catch or error it wrote to the console.
func TestBrowserPagesThrowNothing(t *testing.T) {
	// The key's name, as its operator wrote it, has a slash, an accent and
	// markup: the dashboard shows it as text.
	const keyName = "acmé/partner <img src=x onerror=alert(1)>"
	cfg := strings.Replace(testConfig, "{name: k1,", "{name: \""+keyName+"\",", 1)
	// The pages are under test, not the simulator: runs of at most 20,000
	// requests (the default bound is 200,000) keep each change of the form
	// a small run, which the designer's thread, at a lower priority than
	// the other tests, may still wait long for on a busy machine (hence
	// the timeout).
	f := newFixture(t, cfg+"designer:\n  timeout: 2m\n  max_arrivals: 20000\n")
	ctx := chromium.Tab(t)
	console := watchConsole(t, ctx)
	check := func(page string) {
		t.Helper()
		time.Sleep(300 * time.Millisecond) // an answer's handler runs after the condition that awaited it
		for _, e := range console.take() {
			t.Errorf("%s: %s", page, e)
		}
	}

	run(t, ctx, chromedp.Navigate(f.admin.URL+"/dashboard"))
	waitUntil(t, ctx, "its data", `document.getElementById("total-decisions").textContent === "0"`)
	for range 5 {
		f.do(t, "GET", "/api/search", "", map[string]string{"X-API-Key": "demo-free-key"})
	}
	f.do(t, "GET", "/api/search", "", nil)
	for _, rg := range []string{"15m", "1h", "1m"} {
		eval[bool](t, ctx, `(document.getElementById("range-`+rg+`").click(), true)`)
		waitUntil(t, ctx, "the refusals", `document.getElementById("total-refused").textContent === "2"`)
	}
	f.clock.Advance(time.Second)
	waitUntil(t, ctx, "the rate", `document.getElementById("rate").textContent === "6"`)
	if got := eval[string](t, ctx, `document.querySelector("#top tbody td").textContent`); got != "api-key:"+keyName {
		t.Errorf("the most limited client shows as %q", got)
	}
	if eval[bool](t, ctx, `document.querySelector("img") !== null`) {
		t.Error("a key's name became markup on the dashboard")
	}
	run(t, ctx, chromedp.EmulateViewport(360, 640))
	run(t, ctx, chromedp.EmulateViewport(1280, 800))
	check("the dashboard")

	run(t, ctx, chromedp.Navigate(f.admin.URL+"/designer"))
	runs := func() int { return eval[int](t, ctx, `Number(document.getElementById("chart").dataset.runs || 0)`) }
	settled := func(what string, wantRun bool, before int) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Minute)
		for {
			errText := eval[string](t, ctx, `document.getElementById("error").textContent`)
			if n := runs(); wantRun && n > before || !wantRun && errText != "" {
				return
			}
			if wantRun && errText != "" {
				t.Fatalf("the designer answered %s with an error: %q", what, errText)
			}
			if time.Now().After(deadline) {
				t.Fatalf("the designer never answered %s (runs %d, error %q)", what, runs(), errText)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	settled("its first run", true, 0)
	change := func(id, value string) {
		eval[bool](t, ctx, `(function () {
			const e = document.getElementById(`+jsString(id)+`);
			e.value = `+jsString(value)+`;
			e.dispatchEvent(new Event("change"));
			return true;
		})()`)
	}
	for _, p := range []string{"steady", "spike", "diurnal", "retry-storm", "many-keys", "boundary-burst"} {
		n := runs()
		change("pattern", p)
		settled("the pattern "+p, true, n)
		if p == "many-keys" {
			if s := eval[string](t, ctx, `document.getElementById("summary").textContent`); !strings.Contains(s, "keys (not 1000)") {
				t.Errorf("the designer's summary of many-keys does not say it was fitted: %q", s)
			}
		}
	}
	for _, limit := range []string{"10000/month", "1/1s", "5/1h"} {
		n := runs()
		change("limit", limit)
		settled("the limit "+limit, true, n)
	}
	change("limit", "a hundred a minute")
	settled("a limit it cannot read", false, 0)
	n := runs()
	change("limit", "100/1m")
	settled("the limit 100/1m again", true, n)
	n = runs()
	change("burst", "")
	settled("an empty burst", true, n)
	// Each algorithm alone, then none.
	boxes := eval[[]string](t, ctx, `[...document.querySelectorAll("#algorithms input")].map(i => i.value)`)
	for _, only := range append(boxes, "") {
		n := runs()
		eval[bool](t, ctx, `(function () {
			for (const i of document.querySelectorAll("#algorithms input")) i.checked = i.value === `+jsString(only)+`;
			document.getElementById("run").click();
			return true;
		})()`)
		settled("the algorithms "+only, true, n)
	}
	formats := eval[[]string](t, ctx, `[...document.querySelectorAll("#import-format option")].map(o => o.value)`)
	translate := func(format, source string) {
		t.Helper()
		eval[bool](t, ctx, `(function () {
			document.getElementById("import-error").textContent = "";
			document.getElementById("import-config").textContent = "";
			document.getElementById("import-format").value = `+jsString(format)+`;
			document.getElementById("import-source").value = `+jsString(source)+`;
			document.getElementById("import-run").click();
			return true;
		})()`)
		waitUntil(t, ctx, "the import of "+format, `document.getElementById("import-error").textContent !== "" || document.getElementById("import-config").textContent !== ""`)
	}
	source := eval[string](t, ctx, `document.getElementById("import-source").value`)
	translate("", source)
	for _, format := range formats {
		translate(format, "")
		translate(format, "<script>alert(1)</script>\n{{ not: [a config")
	}
	check("the designer")

	for _, q := range []string{"", "?plan=free", "?plan=pro", "?plan=nonexistent", "?plan=%3Cscript%3E"} {
		run(t, ctx, chromedp.Navigate(f.http.URL+"/docs"+q))
		waitUntil(t, ctx, "its examples addressed", `document.querySelector(".api-base").textContent === location.origin`)
	}
	check("/docs")
}

// jsString writes s as a JavaScript string literal.
func jsString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`, "<", `\x3c`)
	return `"` + r.Replace(s) + `"`
}
