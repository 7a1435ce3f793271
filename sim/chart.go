package sim

import (
	"bytes"
	"fmt"
	"image/color"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Default chart size: 10 × 5 inches, 960 × 480 pixels in PNG.
const (
	DefaultChartWidth  = 10 * vg.Inch
	DefaultChartHeight = 5 * vg.Inch
)

// palette holds one colour per contender (Tableau 10 without its red, which
// marks the limit), cycled when there are more.
var palette = []color.RGBA{
	{0x1f, 0x77, 0xb4, 0xff}, {0xff, 0x7f, 0x0e, 0xff}, {0x2c, 0xa0, 0x2c, 0xff},
	{0x94, 0x67, 0xbd, 0xff}, {0x8c, 0x56, 0x4b, 0xff}, {0xe3, 0x77, 0xc2, 0xff},
	{0xbc, 0xbd, 0x22, 0xff}, {0x17, 0xbe, 0xcf, 0xff},
}

// dashes cycles solid, dashed and dotted lines.
var dashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}}

var (
	requestsColour = color.RGBA{0x99, 0x99, 0x99, 0xff}
	attemptsColour = color.RGBA{0x44, 0x44, 0x44, 0xff}
	limitColour    = color.RGBA{0xd6, 0x27, 0x28, 0xff}
)

// Chart draws res.Chart: the offered requests and each contender's
// admissions, in units over the trailing window W (all keys together), over
// time, with the limit line at Quantity × Keys (and, with retries, the
// attempts of the contender whose refusals caused the most). Each line's
// legend entry is its series name ("requests", the contender labels) and the
// limit's is
// "limit <Q>/<W> × <keys> keys" (or "limit <Q>/<W>" for one key). format is
// "png" or "svg"; width and height ≤ 0 mean the defaults. The same result
// always draws the same bytes.
func Chart(res *Result, format string, width, height vg.Length) ([]byte, error) {
	if res.Chart == nil || len(res.Chart.Series) == 0 {
		return nil, fmt.Errorf("chart: the result carries no chart data")
	}
	if format != "png" && format != "svg" {
		return nil, fmt.Errorf("chart format %q: use png or svg", format)
	}
	if width <= 0 {
		width = DefaultChartWidth
	}
	if height <= 0 {
		height = DefaultChartHeight
	}
	cd := res.Chart
	unit, per := timeUnit(res.Duration.D())

	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s — limit %s per key", res.Source, res.Limit)
	p.X.Label.Text = "time since start (" + unit + ")"
	p.Y.Label.Text = fmt.Sprintf("units in the trailing %s, all keys", res.Window)
	if cd.Scaled {
		p.Y.Label.Text = fmt.Sprintf("units per %s (mean), all keys", res.Window)
	}
	p.Add(plotter.NewGrid())
	legend := plot.NewLegend()
	legend.TextStyle.Font.Size = vg.Points(10)
	legend.Left, legend.Top = true, true
	legend.Padding = vg.Points(2)
	legend.ThumbnailWidth = vg.Points(28)

	top := cd.LimitLine
	admitted := 0
	for _, s := range cd.Series {
		xy := make(plotter.XYs, len(s.X))
		for k := range s.X {
			xy[k].X, xy[k].Y = s.X[k]/per, s.Y[k]
			top = max(top, s.Y[k])
		}
		line, err := plotter.NewLine(xy)
		if err != nil {
			return nil, fmt.Errorf("chart: series %s: %w", s.Name, err)
		}
		switch s.Role {
		case RoleOffered: // the backdrop
			line.Color, line.Width = requestsColour, vg.Points(4)
		case RoleAttempts:
			line.Color, line.Width = attemptsColour, vg.Points(2)
			line.Dashes = []vg.Length{vg.Points(1), vg.Points(2)}
		default:
			// Lines that coincide stay visible: each is thinner than the
			// one before and drawn over it, and every other one is dashed.
			i := admitted
			admitted++
			line.Color = palette[i%len(palette)]
			line.Width = vg.Points(max(2.6-0.3*float64(i), 0.8))
			line.Dashes = dashes[i%len(dashes)]
		}
		p.Add(line)
		legend.Add(s.Name, line)
	}
	end := res.Duration.D().Seconds() / per
	limit, err := plotter.NewLine(plotter.XYs{{X: 0, Y: cd.LimitLine}, {X: end, Y: cd.LimitLine}})
	if err != nil {
		return nil, fmt.Errorf("chart: limit line: %w", err)
	}
	limit.Color, limit.Width = limitColour, vg.Points(1.5)
	limit.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
	p.Add(limit)
	legend.Add(limitLegend(res), limit)
	p.X.Min, p.X.Max = 0, end
	p.Y.Min, p.Y.Max = 0, top*1.08

	c, err := draw.NewFormattedCanvas(width, height, format)
	if err != nil {
		return nil, fmt.Errorf("chart: %w", err)
	}
	dc := draw.New(c)
	pad := vg.Points(8)
	lw := legend.Rectangle(dc).Size().X + 2*pad
	p.Draw(draw.Crop(dc, 0, -lw, 0, 0))
	legend.Draw(draw.Crop(dc, dc.Size().X-lw+pad, 0, 0, -3*pad))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("chart: %w", err)
	}
	return buf.Bytes(), nil
}

// limitLegend names the limit line.
func limitLegend(res *Result) string {
	if res.Keys == 1 {
		return "limit " + res.Limit
	}
	return fmt.Sprintf("limit %s × %d keys", res.Limit, res.Keys)
}

// timeUnit picks the x axis unit for a trace of length d: its name and its
// length in seconds.
func timeUnit(d time.Duration) (string, float64) {
	switch {
	case d > 48*time.Hour:
		return "days", 86400
	case d > 5*time.Hour:
		return "hours", 3600
	case d > 5*time.Minute:
		return "minutes", 60
	}
	return "seconds", 1
}

// ChartFormat returns the chart format a file name asks for by its
// extension: "png" or "svg".
func ChartFormat(name string) (string, error) {
	switch {
	case strings.HasSuffix(strings.ToLower(name), ".png"):
		return "png", nil
	case strings.HasSuffix(strings.ToLower(name), ".svg"):
		return "svg", nil
	}
	return "", fmt.Errorf("chart file %q: name it .png or .svg", name)
}
