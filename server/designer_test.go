package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

func TestDesignerRunEndpoint(t *testing.T) {
	f := newFixture(t, testConfig)
	r := f.do(t, "POST", "/designer/run", `{"pattern":{"name":"boundary-burst"},"limit":"100/1m","algorithms":["fixed-window","sliding-window-log"]}`, nil)
	var got struct {
		Result struct {
			Quantity   int64 `json:"quantity"`
			Algorithms []struct {
				Algorithm   string `json:"algorithm"`
				WorstWindow int64  `json:"worst_window"`
			} `json:"algorithms"`
		} `json:"result"`
		Chart string `json:"chart_svg"`
	}
	if err := json.NewDecoder(r.Body).Decode(&got); err != nil || r.StatusCode != 200 {
		t.Fatalf("%d %v", r.StatusCode, err)
	}
	if len(got.Result.Algorithms) != 2 || !strings.Contains(got.Chart, "<svg") {
		t.Fatalf("result %+v, chart %.100q", got.Result, got.Chart)
	}
	// The boundary burst: fixed window lets through twice the limit in one
	// window, the exact log never more than the limit.
	for _, a := range got.Result.Algorithms {
		switch a.Algorithm {
		case "fixed-window":
			if a.WorstWindow != 2*got.Result.Quantity {
				t.Errorf("fixed window's worst window %d, want %d", a.WorstWindow, 2*got.Result.Quantity)
			}
		case "sliding-window-log":
			if a.WorstWindow > got.Result.Quantity {
				t.Errorf("sliding log's worst window %d above the limit", a.WorstWindow)
			}
		}
	}
	for _, bad := range []string{`{"limit":"lots"}`, `{"limit":"100/1m","colour":1}`, `{`} {
		if r := f.do(t, "POST", "/designer/run", bad, nil); r.StatusCode != 400 {
			t.Errorf("%s: %d", bad, r.StatusCode)
		}
	}
}

// Headless Chromium loads /designer, changes a parameter, and sees the
// chart change.
func TestBrowserDesignerChartFollowsParameters(t *testing.T) {
	f := newFixture(t, testConfig)
	ctx := chromium.Tab(t)
	run(t, ctx, chromedp.Navigate(f.admin.URL+"/designer"))
	waitJS(t, ctx, `document.querySelector("#chart svg") !== null && document.getElementById("chart").dataset.runs === "1"`)
	before := eval[string](t, ctx, `document.querySelector("#chart svg").outerHTML`)
	rows := eval[int](t, ctx, `document.querySelectorAll("#results tbody tr").length`)
	if rows != 6 {
		t.Errorf("%d result rows, want one per algorithm (6)", rows)
	}
	eval[bool](t, ctx, `(() => { const l = document.getElementById("limit"); l.value = "10/1m"; l.dispatchEvent(new Event("change")); return true; })()`)
	waitJS(t, ctx, `document.getElementById("chart").dataset.runs === "2" || document.getElementById("error").textContent !== ""`)
	if e := eval[string](t, ctx, `document.getElementById("error").textContent`); e != "" {
		t.Fatalf("the page shows an error: %s", e)
	}
	after := eval[string](t, ctx, `document.querySelector("#chart svg").outerHTML`)
	if after == before {
		t.Error("the chart did not change with the limit")
	}
	summary := eval[string](t, ctx, `document.getElementById("summary").textContent`)
	if !strings.Contains(summary, "limit 10/1m") {
		t.Errorf("summary %q does not show the new limit", summary)
	}
}

// waitJS polls a JavaScript condition until it holds, for up to 10 s.
func waitJS(t *testing.T, ctx context.Context, cond string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !eval[bool](t, ctx, cond) {
		if time.Now().After(deadline) {
			t.Fatalf("never true: %s", cond)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
