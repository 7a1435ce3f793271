package envoy

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

// For every Unix week, 30-day month and 365-day year of the next 280 years
// that starts at least calendarMargin after sluice.Epoch (the first year
// starts on 2020-12-19), alignedLength finds a sluice window length of at
// most sluice.MaxFixedWindow that holds the whole Unix window and
// calendarMargin either side: the sluice window of that length (aligned to
// sluice.Epoch) that holds the Unix window's first second also holds its
// last.
func TestAlignedLengthCoversEveryUnixWindow(t *testing.T) {
	epoch := sluice.Epoch.Unix()
	margin := int64(calendarMargin / time.Second)
	until := epoch + 280*365*86400
	for _, unit := range []int64{7 * 86400, 30 * 86400, 365 * 86400} {
		checked := 0
		for n := (epoch+margin)/unit + 1; n*unit < until; n++ {
			start := n * unit
			l, ok := alignedLength(start, unit)
			if !ok {
				t.Fatalf("unit %ds: no length for the Unix window starting %v", unit, time.Unix(start, 0).UTC())
			}
			ls := int64(l / time.Second)
			if ls > int64(sluice.MaxFixedWindow/time.Second) {
				t.Fatalf("unit %ds: length %ds above sluice.MaxFixedWindow", unit, ls)
			}
			first, last := start-margin-epoch, start+unit+margin-epoch
			if first/ls != last/ls {
				t.Fatalf("unit %ds, window starting %v: length %ds splits it", unit, time.Unix(start, 0).UTC(), ls)
			}
			if err := sluice.FixedWindow(1, l).Err(); err != nil {
				t.Fatalf("unit %ds, window starting %v: %v", unit, time.Unix(start, 0).UTC(), err)
			}
			checked++
		}
		if unit == 365*86400 && checked != 280 {
			t.Errorf("%d years checked, want the 280 that start from 2020-12-19 on", checked)
		}
	}
	// The Unix year that holds sluice.Epoch starts before it: it falls
	// back to sluice's own years.
	if _, ok := alignedLength(epoch/(365*86400)*(365*86400), 365*86400); ok {
		t.Errorf("the Unix year holding sluice.Epoch is covered; it starts before it")
	}
}

func TestWindowReset(t *testing.T) {
	for _, c := range []struct {
		unix, unit int64
		want       time.Duration
	}{
		{120, 60, 60 * time.Second},
		{179, 60, time.Second},
		{-1, 60, time.Second},
		{0, 7 * 86400, 7 * 24 * time.Hour},
	} {
		if got := windowReset(c.unix, c.unit); got != c.want {
			t.Errorf("windowReset(%d, %d) = %v, want %v", c.unix, c.unit, got, c.want)
		}
	}
}
