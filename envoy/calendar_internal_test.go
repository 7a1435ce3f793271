package envoy

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

// For every Unix week and 30-day month of the next 280 years, and every
// 365-day year from December 2028 on, alignedLength finds a sluice window
// length that holds the whole Unix window and calendarMargin either side:
// the sluice window of that length (aligned to sluice.Epoch) that holds
// the Unix window's first second also holds its last.
func TestAlignedLengthCoversEveryUnixWindow(t *testing.T) {
	epoch := sluice.Epoch.Unix()
	margin := int64(calendarMargin / time.Second)
	until := epoch + 280*365*86400
	for _, c := range []struct {
		unit int64
		from int64
	}{
		{7 * 86400, epoch + 86400},
		{30 * 86400, epoch + 86400},
		{365 * 86400, time.Date(2028, time.December, 1, 0, 0, 0, 0, time.UTC).Unix()},
	} {
		for n := c.from/c.unit + 1; n*c.unit < until; n++ {
			start := n * c.unit
			l, ok := alignedLength(start, c.unit)
			if !ok {
				t.Fatalf("unit %ds: no length for the Unix window starting %v", c.unit, time.Unix(start, 0).UTC())
			}
			ls := int64(l / time.Second)
			if ls > int64(sluice.MaxWindow/time.Second) {
				t.Fatalf("unit %ds: length %ds above sluice.MaxWindow", c.unit, ls)
			}
			first, last := start-margin-epoch, start+c.unit+margin-epoch
			if first/ls != last/ls {
				t.Fatalf("unit %ds, window starting %v: length %ds splits it", c.unit, time.Unix(start, 0).UTC(), ls)
			}
		}
	}
}

// The years whose Unix window no sluice window covers, within
// sluice.MaxWindow, are those that start before December 2028: for them a
// year rule falls back to sluice's own years.
func TestAlignedLengthYearsBeforeDecember2028(t *testing.T) {
	year := int64(365 * 86400)
	for n := sluice.Epoch.Unix()/year + 1; n*year < time.Date(2028, time.December, 1, 0, 0, 0, 0, time.UTC).Unix(); n++ {
		if _, ok := alignedLength(n*year, year); ok {
			t.Errorf("the Unix year starting %v is covered; the docs say it is not", time.Unix(n*year, 0).UTC())
		}
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
