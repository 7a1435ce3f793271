package sim

import "math"

// Chart sampling: counts are kept per bin of w/binsPerWindow; each point is
// the sum of the bins of the trailing window. Traces longer than maxBins
// such bins use fewer bins per window, then bins longer than the window.
const (
	binsPerWindow = 50
	maxBins       = 20_000
	maxPoints     = 1_000
)

// binning maps times to chart bins.
type binning struct {
	start, width int64 // µs
	n            int   // bins
	k            int   // bins per trailing window; 1 when scaled
	scale        float64
}

func newBinning(start, end, w int64) binning {
	span := end - start
	k := int64(binsPerWindow)
	if span/max(w/k, 1) > maxBins {
		k = maxBins * w / span
	}
	b := binning{start: start, k: 1, scale: 1}
	if k >= 1 {
		b.width = max(w/k, 1)
		b.k = int(max(w/b.width, 1))
	} else { // bins longer than the window: report their mean per window
		b.width = (span + maxBins - 1) / maxBins
		b.scale = float64(w) / float64(b.width)
	}
	b.n = int((span + b.width - 1) / b.width)
	return b
}

// index returns the bin of time t µs, clamped to the range.
func (b *binning) index(t int64) int {
	i := (t - b.start) / b.width
	return int(min(max(i, 0), int64(b.n-1)))
}

// series turns per-bin counts into a chart series of trailing-window sums,
// thinned to at most maxPoints by keeping each group's highest point.
func (b *binning) series(name, role string, bins []int64) Series {
	s := Series{Name: name, Role: role}
	group := (b.n + maxPoints - 1) / maxPoints
	var run int64
	bestX, bestY := 0.0, math.Inf(-1)
	for i, v := range bins {
		run += v
		if i >= b.k {
			run -= bins[i-b.k]
		}
		y := float64(run) * b.scale
		if y > bestY {
			bestX, bestY = float64(int64(i+1)*b.width)/1e6, y
		}
		if (i+1)%group == 0 || i == len(bins)-1 {
			s.X = append(s.X, bestX)
			s.Y = append(s.Y, bestY)
			bestY = math.Inf(-1)
		}
	}
	return s
}
