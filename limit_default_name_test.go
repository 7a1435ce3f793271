package sluice_test

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

// A limit's default name is "per-" and its window, whole components only
// dropped when zero: 90 s is per-1m30s (it was per-1m3, read as 1m3s), 70
// minutes per-1h10m, 2 minutes per-2m, 2 hours per-2h.
func TestDefaultNameSpellsTheWholeWindow(t *testing.T) {
	for _, c := range []struct {
		w    time.Duration
		want string
	}{
		{90 * time.Second, "per-1m30s"},
		{150 * time.Second, "per-2m30s"},
		{70 * time.Minute, "per-1h10m"},
		{time.Hour + 20*time.Minute, "per-1h20m"},
		{2 * time.Minute, "per-2m"},   // control: passes
		{2 * time.Hour, "per-2h"},     // control: passes
		{10 * time.Second, "per-10s"}, // control: passes
	} {
		if got := sluice.SlidingLog(10, c.w).Name(); got != c.want {
			t.Errorf("window %v: default name %q, want %q", c.w, got, c.want)
		}
	}
}
