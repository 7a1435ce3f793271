package server_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// designerLayout measures the designer's form in the page: each labelled
// control with its label, each checkbox with its text, the form's height
// against the controls it holds, and the results table's rows.
type designerLayout struct {
	Fields []struct {
		ID                           string
		LabelRight, ControlLeft      float64
		LabelMiddle, ControlMiddle   float64
		ControlHeight                float64
		LabelVisible, ControlVisible bool
	}
	Checks []struct {
		Text                  string
		BoxRight, TextLeft    float64
		BoxMiddle, TextMiddle float64
		TextHeight            float64
	}
	FormHeight, ControlsHeight float64
	Rows                       int
}

const measureDesigner = `(function () {
	const box = e => e.getBoundingClientRect(), mid = r => (r.top + r.bottom) / 2;
	const out = {Fields: [], Checks: [], Rows: document.querySelectorAll("#results tbody tr").length};
	for (const c of document.querySelectorAll("#form input:not([type=checkbox]), #form select")) {
		const l = document.querySelector("label[for='" + c.id + "']"), lr = l ? box(l) : {right: 0, top: 0, bottom: 0, width: 0}, cr = box(c);
		out.Fields.push({ID: c.id, LabelRight: lr.right, ControlLeft: cr.left, LabelMiddle: mid(lr), ControlMiddle: mid(cr),
			ControlHeight: cr.height, LabelVisible: l !== null && lr.width > 0, ControlVisible: cr.width > 0});
	}
	for (const c of document.querySelectorAll("#form input[type=checkbox]")) {
		const t = c.parentElement.querySelector("span") || c.parentElement, tr = box(t), cr = box(c);
		out.Checks.push({Text: t.textContent, BoxRight: cr.right, TextLeft: tr.left, BoxMiddle: mid(cr), TextMiddle: mid(tr), TextHeight: tr.height});
	}
	const f = box(document.getElementById("form")), controls = [...document.querySelectorAll("#form input, #form select, #form button")].map(box);
	out.FormHeight = f.height;
	out.ControlsHeight = Math.max(...controls.map(r => r.bottom)) - Math.min(...controls.map(r => r.top));
	return out;
})()`

// TestBrowserDesignerLayout loads /designer in headless Chromium at 1280 and
// at 390 CSS pixels: every input and select has its label beside it (to its
// left, on the same line), every checkbox its text beside it (to its right,
// on the same line), the form is no taller than its controls and their
// padding, the results show a row per algorithm, and no element is wider
// than the window.
func TestBrowserDesignerLayout(t *testing.T) {
	f := newFixture(t, testConfig)
	ctx := chromium.Tab(t)
	for _, width := range []int64{1280, 390} {
		run(t, ctx, chromedp.EmulateViewport(width, 900), chromedp.Navigate(f.admin.URL+"/designer"))
		waitJS(t, ctx, `document.getElementById("chart").dataset.runs === "1"`)
		m := eval[designerLayout](t, ctx, measureDesigner)
		if len(m.Fields) != 4 || len(m.Checks) != 6 || m.Rows != 6 {
			t.Fatalf("at %d px: %d fields, %d checkboxes, %d result rows; want 4, 6, 6", width, len(m.Fields), len(m.Checks), m.Rows)
		}
		for _, c := range m.Fields {
			if !c.LabelVisible || !c.ControlVisible || c.LabelRight > c.ControlLeft || abs(c.LabelMiddle-c.ControlMiddle) > c.ControlHeight/2 {
				t.Errorf("at %d px, %s: label visible %v ends at x=%.1f, middle y=%.1f; control starts at x=%.1f, middle y=%.1f",
					width, c.ID, c.LabelVisible, c.LabelRight, c.LabelMiddle, c.ControlLeft, c.ControlMiddle)
			}
		}
		for _, c := range m.Checks {
			if c.BoxRight > c.TextLeft || abs(c.BoxMiddle-c.TextMiddle) > c.TextHeight/2 {
				t.Errorf("at %d px, checkbox %q ends at x=%.1f, middle y=%.1f; its text starts at x=%.1f, middle y=%.1f",
					width, c.Text, c.BoxRight, c.BoxMiddle, c.TextLeft, c.TextMiddle)
			}
		}
		// The form's padding and borders, and the fieldset's, are under
		// 80 px together: more is an empty block.
		if m.FormHeight > m.ControlsHeight+80 {
			t.Errorf("at %d px the form is %.0f px tall for %.0f px of controls", width, m.FormHeight, m.ControlsHeight)
		}
		if bad := eval[[]string](t, ctx, overflow); len(bad) > 0 {
			t.Errorf("at %d px, wider than the window: %q", width, bad)
		}
		if bad := eval[[]string](t, ctx, lowContrast); len(bad) > 0 {
			t.Errorf("at %d px, text of too low a contrast: %q", width, bad)
		}
	}
}

// TestBrowserDesignerOmits runs the designer, all algorithms checked, on a
// limit the buckets cannot keep exact (869 per year): the other three are
// simulated and the page says why the buckets are not.
func TestBrowserDesignerOmits(t *testing.T) {
	f := newFixture(t, testConfig)
	ctx := chromium.Tab(t)
	run(t, ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(f.admin.URL+"/designer"))
	waitJS(t, ctx, `document.getElementById("chart").dataset.runs === "1"`)
	eval[bool](t, ctx, `(() => {
		const l = document.getElementById("limit");
		l.value = "869/year";
		return l.dispatchEvent(new Event("change"));
	})()`)
	waitJS(t, ctx, `document.getElementById("chart").dataset.runs === "2" || document.getElementById("error").textContent !== ""`)
	if e := eval[string](t, ctx, `document.getElementById("error").textContent`); e != "" {
		t.Fatalf("the page shows an error: %s", e)
	}
	rows := eval[int](t, ctx, `document.querySelectorAll("#results tbody tr").length`)
	summary := eval[string](t, ctx, `document.getElementById("summary").textContent`)
	if rows != 3 || !strings.Contains(summary, "gcra not simulated: ") || !strings.Contains(summary, "cannot be kept exact") {
		t.Errorf("%d result rows, summary %q; want 3 and the buckets named", rows, summary)
	}
}

// TestBrowserDesignerImport translates the nginx file the designer's import
// form holds, in headless Chromium at 1280 and 390 CSS pixels: the
// configuration with its rules and the report appear, and nothing is wider
// than the window.
func TestBrowserDesignerImport(t *testing.T) {
	f := newFixture(t, testConfig)
	ctx := chromium.Tab(t)
	for _, width := range []int64{1280, 390} {
		run(t, ctx, chromedp.EmulateViewport(width, 900), chromedp.Navigate(f.admin.URL+"/designer"))
		waitJS(t, ctx, `document.getElementById("chart").dataset.runs === "1"`) // the page's own first simulation
		run(t, ctx, chromedp.Click(chromedp.ID("import-run")))
		waitJS(t, ctx, `document.getElementById("import-config").textContent !== "" || document.getElementById("import-error").textContent !== ""`)
		if e := eval[string](t, ctx, `document.getElementById("import-error").textContent`); e != "" {
			t.Fatalf("at %d px the import shows an error: %s", width, e)
		}
		config := eval[string](t, ctx, `document.getElementById("import-config").textContent`)
		report := eval[string](t, ctx, `document.getElementById("import-report").textContent`)
		if !strings.Contains(config, "# sluice.yaml") || !strings.Contains(config, `key: ["header:X-Api-Key"]`) || !strings.Contains(report, "## Trade-offs and Considerations") {
			t.Errorf("at %d px: configuration %.400q, report %.200q", width, config, report)
		}
		if bad := eval[[]string](t, ctx, overflow); len(bad) > 0 {
			t.Errorf("at %d px, wider than the window: %q", width, bad)
		}
		if bad := eval[[]string](t, ctx, lowContrast); len(bad) > 0 {
			t.Errorf("at %d px, text of too low a contrast: %q", width, bad)
		}
	}
}

// TestBrowserDesignerPercentages: the results table writes percentages as
// sluice simulate does, so a small share keeps its digits (Cloudflare's
// 0.003% for the sliding counter is not 0.00).
func TestBrowserDesignerPercentages(t *testing.T) {
	f := newFixture(t, testConfig)
	ctx := chromium.Tab(t)
	run(t, ctx, chromedp.Navigate(f.admin.URL+"/designer"))
	waitJS(t, ctx, `document.getElementById("chart").dataset.runs === "1"`)
	got := eval[[]string](t, ctx, `[0, 0.003, 0.0004, 0.5, 12.34, 100, 250].map(pct)`)
	want := []string{"0", "0.0030", "0.0004", "0.50", "12.3", "100", "250"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("percentages %q, want %q", got, want)
	}
}
