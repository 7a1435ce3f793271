package sim

import (
	"bytes"
	"encoding/xml"
	"image/color"
	"image/png"
	"io"
	"strings"
	"testing"
)

func chartOf(t *testing.T, format string) (*Result, []byte) {
	t.Helper()
	resp, err := Simulate(t.Context(), Request{Pattern: &Pattern{Name: PatternBoundaryBurst, Keys: 3}, Limit: "100/1m", Chart: format})
	if err != nil {
		t.Fatal(err)
	}
	return resp.Result, resp.Chart
}

func TestChartPNGIsAPictureOfEverySeries(t *testing.T) {
	res, data := chartOf(t, "png")
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 960 || b.Dy() != 480 {
		t.Fatalf("size %v, want 960×480", b)
	}
	seen := map[color.RGBA]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			seen[color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8), 0xff}]++
		}
	}
	if len(seen) < 20 {
		t.Fatalf("%d distinct colours: the chart is blank", len(seen))
	}
	want := map[string]color.RGBA{"requests": requestsColour, "limit": limitColour}
	for i, a := range res.Algorithms {
		want[a.Label] = palette[i%len(palette)]
	}
	for name, c := range want {
		// Lines overlap and are antialiased; each still shows some
		// pixels of its exact colour (its legend thumbnail at least).
		if seen[c] < 8 {
			t.Errorf("series %s: its colour %v covers %d pixels", name, c, seen[c])
		}
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

func TestChartSVGHasALegendEntryPerSeriesAndTheLimit(t *testing.T) {
	res, data := chartOf(t, "svg")
	texts := svgTexts(t, data)
	has := map[string]bool{}
	for _, s := range texts {
		has[s] = true
	}
	want := []string{"requests", "limit 100/1m × 3 keys", "time since start (minutes)"}
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
