package sim

import (
	"bytes"
	"fmt"
	"image/color"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Default chart width: 10 inches, 960 pixels in PNG. The default height
// grows with the number of panels (see Chart).
const (
	DefaultChartWidth = 10 * vg.Inch
	offeredHeight     = 2.4 * vg.Inch // the offered-load panel
	panelHeight       = 2.1 * vg.Inch // each row of contender panels
	chartColumns      = 3
)

// DefaultChartHeight is the height Chart gives res when asked for none:
// the offered-load panel plus one row per three contenders.
func DefaultChartHeight(res *Result) vg.Length {
	n := 0
	if res.Chart != nil {
		for _, s := range res.Chart.Series {
			if s.Role == RoleAdmitted {
				n++
			}
		}
	}
	return offeredHeight + vg.Length((n+chartColumns-1)/chartColumns)*panelHeight
}

// palette holds one colour per contender (Tableau 10 without its red, which
// marks the limit), cycled when there are more.
var palette = []color.RGBA{
	{0x1f, 0x77, 0xb4, 0xff}, {0xff, 0x7f, 0x0e, 0xff}, {0x2c, 0xa0, 0x2c, 0xff},
	{0x94, 0x67, 0xbd, 0xff}, {0x8c, 0x56, 0x4b, 0xff}, {0xe3, 0x77, 0xc2, 0xff},
	{0xbc, 0xbd, 0x22, 0xff}, {0x17, 0xbe, 0xcf, 0xff},
}

var (
	requestsColour = color.RGBA{0x99, 0x99, 0x99, 0xff}
	attemptsColour = color.RGBA{0x44, 0x44, 0x44, 0xff}
	limitColour    = color.RGBA{0xd6, 0x27, 0x28, 0xff}
)

// Chart draws res.Chart as small multiples: on top, the offered load (the
// trace's requests and, with retries, the attempts of the contender whose
// refusals caused the most) on a scale of its own; below, one panel per
// contender, titled with its label, showing the units it admitted in the
// trailing window W (all keys together) over time, every panel on the same
// scale so that heights compare. The limit is drawn as a dashed line only
// where it means something — for one key, whose admissions it bounds; with
// several keys the limit applies to each key apart, and the panels say so
// instead. format is "png" or "svg"; width ≤ 0 means DefaultChartWidth,
// height ≤ 0 DefaultChartHeight(res). The same result always draws the same
// bytes.
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
		height = DefaultChartHeight(res)
	}
	cd := res.Chart
	unit, per := timeUnit(res.Duration.D())
	// The axis runs to the last admission a queue delayed past the end.
	last := res.Duration.D()
	for _, a := range res.Algorithms {
		last = max(last, res.Duration.D()+a.MaxDelay.D())
	}
	end := last.Seconds() / per
	xy := func(s Series) plotter.XYs {
		out := make(plotter.XYs, len(s.X))
		for k := range s.X {
			out[k].X, out[k].Y = s.X[k]/per, s.Y[k]
		}
		return out
	}
	span := "units in each trailing " + windowText(res)
	perW := "per " + windowText(res)
	if cd.Scaled {
		span = "mean units per " + windowText(res)
	}

	// The offered load, on its own scale.
	top := plot.New()
	top.Title.Text = fmt.Sprintf("%s — limit %s per key", res.Source, res.Limit)
	if res.Keys > 1 {
		top.Title.Text += fmt.Sprintf(", %d keys", res.Keys)
	}
	top.Title.Text += " — " + span
	top.Y.Label.Text = "offered " + perW
	top.X.Label.Text = "time since start (" + unit + ")"
	top.Add(plotter.NewGrid())
	top.Legend.Top, top.Legend.Left = true, true
	var admitted []Series
	offeredMax := 0.0
	for _, s := range cd.Series {
		if s.Role == RoleAdmitted {
			admitted = append(admitted, s)
			continue
		}
		for _, y := range s.Y {
			offeredMax = max(offeredMax, y)
		}
		line, err := plotter.NewLine(xy(s))
		if err != nil {
			return nil, fmt.Errorf("chart: series %s: %w", s.Name, err)
		}
		line.Color, line.Width = requestsColour, vg.Points(2)
		if s.Role == RoleAttempts {
			line.Color, line.Width, line.Dashes = attemptsColour, vg.Points(1.5), []vg.Length{vg.Points(2), vg.Points(2)}
		}
		top.Add(line)
		top.Legend.Add(s.Name, line)
	}
	// Headroom above the highest line keeps the legend off it.
	top.X.Min, top.X.Max, top.Y.Min, top.Y.Max = 0, end, 0, max(offeredMax*1.3, 1)
	top.Y.Tick.Marker = plainTicks{}

	panels, err := contenderPanels(res, admitted, xy, end, "time ("+unit+")", perW)
	if err != nil {
		return nil, err
	}

	c, err := draw.NewFormattedCanvas(width, height, format)
	if err != nil {
		return nil, fmt.Errorf("chart: %w", err)
	}
	dc := draw.New(c)
	split := dc.Max.Y - (dc.Max.Y-dc.Min.Y)*offeredHeight/DefaultChartHeight(res)
	top.Draw(draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{Min: vg.Point{X: dc.Min.X, Y: split}, Max: dc.Max}})
	if len(panels) > 0 {
		below := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{Min: dc.Min, Max: vg.Point{X: dc.Max.X, Y: split}}}
		tiles := draw.Tiles{Rows: len(panels), Cols: len(panels[0]), PadX: vg.Points(10), PadY: vg.Points(6),
			PadTop: vg.Points(6), PadBottom: vg.Points(2), PadLeft: vg.Points(2), PadRight: vg.Points(8)}
		canvases := plot.Align(panels, tiles, below)
		for r := range panels {
			for col, p := range panels[r] {
				if p != nil {
					p.Draw(canvases[r][col])
				}
			}
		}
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("chart: %w", err)
	}
	return buf.Bytes(), nil
}

// contenderPanels lays out one panel per admitted series, chartColumns to
// a row, on one shared scale; empty cells are nil.
func contenderPanels(res *Result, admitted []Series, xy func(Series) plotter.XYs, end float64, xLabel, perW string) ([][]*plot.Plot, error) {
	if len(admitted) == 0 {
		return nil, nil
	}
	cd := res.Chart
	oneKey := res.Keys == 1
	ymax := 0.0
	if oneKey {
		ymax = cd.LimitLine
	}
	for _, s := range admitted {
		for _, y := range s.Y {
			ymax = max(ymax, y)
		}
	}
	ymax = max(ymax*1.1, 1)
	cols := min(chartColumns, len(admitted))
	rows := (len(admitted) + cols - 1) / cols
	panels := make([][]*plot.Plot, rows)
	for r := range panels {
		panels[r] = make([]*plot.Plot, cols)
	}
	for i, s := range admitted {
		p := plot.New()
		p.Title.Text = s.Name
		p.Title.TextStyle.Color = palette[i%len(palette)]
		p.Add(plotter.NewGrid())
		line, err := plotter.NewLine(xy(s))
		if err != nil {
			return nil, fmt.Errorf("chart: series %s: %w", s.Name, err)
		}
		line.Color, line.Width = palette[i%len(palette)], vg.Points(1.8)
		p.Add(line)
		if oneKey {
			limit, err := plotter.NewLine(plotter.XYs{{X: 0, Y: cd.LimitLine}, {X: end, Y: cd.LimitLine}})
			if err != nil {
				return nil, fmt.Errorf("chart: limit line: %w", err)
			}
			limit.Color, limit.Width = limitColour, vg.Points(1.2)
			limit.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
			p.Add(limit)
			p.Legend.Add("limit "+res.Limit, limit)
			p.Legend.Top, p.Legend.Left = true, true
			p.Legend.TextStyle.Font.Size = vg.Points(8)
		}
		r, col := i/cols, i%cols
		if col == 0 {
			p.Y.Label.Text = "admitted " + perW
		}
		if i+cols >= len(admitted) {
			p.X.Label.Text = xLabel
		}
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, end, 0, ymax
		p.Y.Tick.Marker = plainTicks{}
		panels[r][col] = p
	}
	// plot.Align needs every cell: an empty cell gets an empty plot.
	for r := range panels {
		for col := range panels[r] {
			if panels[r][col] == nil {
				p := plot.New()
				p.HideAxes()
				panels[r][col] = p
			}
		}
	}
	return panels, nil
}

// plainTicks are gonum's default ticks labelled without trailing zeros
// ("25000", not "25000.00").
type plainTicks struct{}

func (plainTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = strconv.FormatFloat(ticks[i].Value, 'f', -1, 64)
		}
	}
	return ticks
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
