package sim

import "testing"

// TestFormatPctNeverRoundsToTheEnds: a share that is neither nothing nor
// everything is never written as 0% or 100%, which a reader takes as exact.
func TestFormatPctNeverRoundsToTheEnds(t *testing.T) {
	for _, tc := range []struct {
		p    float64
		want string
	}{
		{0, "0%"},
		{0.00004, "<0.0001%"},
		{0.0031, "0.0031%"},
		{0.42, "0.42%"},
		{12.5, "12.5%"},
		{99.94, "99.9%"},
		{99.96, ">99.9%"},
		{99.9999, ">99.9%"},
		{100, "100%"},
		{250, "250%"},
	} {
		if got := formatPct(tc.p); got != tc.want {
			t.Errorf("formatPct(%v) = %q, want %q", tc.p, got, tc.want)
		}
	}
}
