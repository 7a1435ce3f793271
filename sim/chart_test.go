package sim

import (
	"bytes"
	"encoding/xml"
	"image/color"
	"image/png"
	"io"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot/plotter"
)

func chartOf(t *testing.T, format string) (*Result, []byte) {
	t.Helper()
	resp, err := Simulate(t.Context(), Request{Pattern: &Pattern{Name: PatternBoundaryBurst, Keys: 3}, Limit: "100/1m", Chart: format})
	if err != nil {
		t.Fatal(err)
	}
	return resp.Result, resp.Chart
}

// colours counts the pixels of each colour of a PNG, after checking its
// size.
func colours(t *testing.T, res *Result, data []byte) map[color.RGBA]int {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if b, h := img.Bounds(), int(DefaultChartHeight(res).Dots(96)+0.5); b.Dx() != 960 || b.Dy() != h {
		t.Fatalf("size %v, want 960×%d", b, h)
	}
	seen := map[color.RGBA]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			seen[color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8), 0xff}]++
		}
	}
	return seen
}

// Every contender has a panel of its own, so none hides another: each
// one's colour covers a whole line's worth of pixels, not a legend swatch.
// With one key the limit is drawn; the offered load is drawn.
func TestChartPNGShowsEveryContenderApart(t *testing.T) {
	resp, err := Simulate(t.Context(), Request{Pattern: &Pattern{Name: PatternBoundaryBurst}, Limit: "100/1m", Chart: "png"})
	if err != nil {
		t.Fatal(err)
	}
	seen := colours(t, resp.Result, resp.Chart)
	if len(resp.Result.Algorithms) != 6 {
		t.Fatalf("%d algorithms", len(resp.Result.Algorithms))
	}
	for i, a := range resp.Result.Algorithms {
		if c := palette[i%len(palette)]; seen[c] < 300 {
			t.Errorf("%s: its colour %v covers %d pixels, want a visible line", a.Label, c, seen[c])
		}
	}
	if seen[requestsColour] < 300 || seen[limitColour] < 100 {
		t.Errorf("requests %d pixels, limit %d pixels", seen[requestsColour], seen[limitColour])
	}
}

// With several keys the per-key limit is not a line on a chart of all keys
// together: no limit is drawn.
func TestChartDrawsNoLimitLineForManyKeys(t *testing.T) {
	res, data := chartOf(t, "png")
	if seen := colours(t, res, data); seen[limitColour] != 0 {
		t.Errorf("the limit's colour covers %d pixels of a chart of 3 keys", seen[limitColour])
	}
}

// The offered load has a scale of its own: a retry storm's peak of
// attempts does not flatten the contenders' panels, whose shared scale is
// set by what they admitted.
func TestChartOfferedLoadHasItsOwnScale(t *testing.T) {
	resp, err := Simulate(t.Context(), Request{Pattern: &Pattern{Name: PatternRetryStorm}, Limit: "100/1m"})
	if err != nil {
		t.Fatal(err)
	}
	res := resp.Result
	var admitted []Series
	offered, most := 0.0, 0.0
	for _, s := range res.Chart.Series {
		if s.Role == RoleAdmitted {
			admitted = append(admitted, s)
			most = max(most, slicesMax(s.Y))
		} else {
			offered = max(offered, slicesMax(s.Y))
		}
	}
	panels, err := contenderPanels(res, admitted, func(s Series) plotter.XYs { return plotter.XYs{{X: 0, Y: 0}} }, 1, "x", "y")
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range panels {
		for _, p := range row {
			if p.Title.Text != "" && (p.Y.Max > most*1.2 || p.Y.Max < most) {
				t.Errorf("panel %s: y up to %v; admitted peak %v, offered peak %v", p.Title.Text, p.Y.Max, most, offered)
			}
		}
	}
	if offered < 3*most {
		t.Fatalf("the retry storm's attempts (%v) are not far above the admissions (%v): the test shows nothing", offered, most)
	}
}

// svgTexts returns the text of every <text> element.
func svgTexts(t *testing.T, data []byte) []string {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(data))
	var texts []string
	in := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return texts
		}
		if err != nil {
			t.Fatalf("not XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			in = tok.Name.Local == "text"
			if tok.Name.Local == "svg" && tok.Name.Space != "http://www.w3.org/2000/svg" {
				t.Fatalf("root element in namespace %q", tok.Name.Space)
			}
		case xml.CharData:
			if in {
				texts = append(texts, strings.TrimSpace(string(tok)))
			}
		case xml.EndElement:
			in = false
		}
	}
}

func TestChartSVGNamesEveryPanel(t *testing.T) {
	res, data := chartOf(t, "svg")
	texts := svgTexts(t, data)
	has := map[string]bool{}
	for _, s := range texts {
		has[s] = true
	}
	want := []string{"requests", "time since start (minutes)", "time (minutes)", "admitted per 1m"}
	for _, a := range res.Algorithms {
		want = append(want, a.Label)
	}
	if len(res.Algorithms) != 6 {
		t.Fatalf("%d algorithms charted, want 6", len(res.Algorithms))
	}
	for _, w := range want {
		if !has[w] {
			t.Errorf("no text %q in the SVG (texts: %q)", w, texts)
		}
	}
	for _, s := range texts {
		if strings.HasPrefix(s, "limit") {
			t.Errorf("a limit legend %q on a chart of 3 keys", s)
		}
	}
}

func TestChartSeriesCountTrailingWindows(t *testing.T) {
	res, _ := chartOf(t, "")
	cd := res.Chart
	if cd.Span.D() != res.Window.D() || cd.Scaled || cd.LimitLine != 300 {
		t.Fatalf("chart data %+v", cd)
	}
	peak := func(name string) float64 {
		for _, s := range cd.Series {
			if s.Name == name {
				return slicesMax(s.Y)
			}
		}
		t.Fatalf("no series %s", name)
		return 0
	}
	// Three keys, each 2 × 100 around a boundary: the fixed window's trailing
	// minute reaches 600, the log's stays at the limit line.
	if p := peak("fixed-window"); p != 600 {
		t.Errorf("fixed window peaks at %v, want 600", p)
	}
	if p := peak("sliding-window-log"); p != 300 {
		t.Errorf("sliding log peaks at %v, want 300", p)
	}
}

func slicesMax(v []float64) float64 {
	m := v[0]
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

func TestChartBinsLongTracesCoarsely(t *testing.T) {
	b := newBinning(0, int64(1000*24*3600*1e6), int64(60e6)) // 1000 days, 1-minute window
	if b.n > maxBins || b.scale == 1 {
		t.Fatalf("binning %+v: want at most %d bins, scaled", b, maxBins)
	}
}

// A point of the chart counts what was admitted in a trailing window, so
// with one key it never passes the worst window: a queue's admissions that
// proceed after the trace's end are drawn when they proceed, not piled
// into the last point (which drew 30 per 1s where no 1s held more than 19).
func TestChartPointsNeverPassTheWorstWindow(t *testing.T) {
	mw := Duration(2 * time.Second)
	for _, req := range []Request{
		{Pattern: &Pattern{Name: PatternSteady, Rate: 100, Duration: Duration(10 * time.Second)}, Limit: "10/1s", MaxWait: &mw},
		{Pattern: &Pattern{Name: PatternSpike, Duration: Duration(20 * time.Second)}, Limit: "10/1s"},
		{Pattern: &Pattern{Name: PatternRetryStorm}, Limit: "100/1m"},
	} {
		res := simulate(t, req)
		for _, s := range res.Chart.Series {
			if s.Role != RoleAdmitted {
				continue
			}
			worst := row(t, res, s.Name).WorstWindow
			if peak := slicesMax(s.Y); peak > float64(worst) {
				t.Errorf("%s, %s: the chart peaks at %v, the worst window is %d", res.Source, s.Name, peak, worst)
			}
		}
	}
}
