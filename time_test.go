package sluice_test

import (
	"math"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

func TestTimeFromMicros(t *testing.T) {
	epoch := sluice.Epoch.Unix()
	for _, c := range []struct {
		name string
		us   int64
		want time.Time
	}{
		{"Epoch is 2020-01-01", 0, sluice.Epoch},
		{"a microsecond before Epoch rounds nothing away", -1, sluice.Epoch.Add(-time.Microsecond)},
		{"the largest time MicrosSinceEpoch returns comes back",
			math.MaxInt64 / 1000, sluice.Epoch.Add(math.MaxInt64 / 1000 * time.Microsecond)},
		{"a time past 2312, beyond a Duration from Epoch, is not wrapped around",
			1 << 61, time.Unix(epoch+(1<<61)/1_000_000, (1<<61)%1_000_000*1000).UTC()},
		{"nor one long before 1728",
			-1 << 61, time.Unix(epoch-(1<<61)/1_000_000-1, (1_000_000-(1<<61)%1_000_000)*1000).UTC()},
		{"the extremes of int64 are not wrapped either",
			math.MaxInt64, time.Unix(epoch+math.MaxInt64/1_000_000, math.MaxInt64%1_000_000*1000).UTC()},
	} {
		if got := sluice.TimeFromMicros(c.us); !got.Equal(c.want) || got.Location() != time.UTC {
			t.Errorf("%s: TimeFromMicros(%d) = %v, want %v", c.name, c.us, got, c.want)
		}
	}
}

// Assigning to the variable Epoch changes nothing sluice computes: times
// and their conversions stay those of 2020-01-01T00:00:00Z.
func TestAssigningEpochChangesNothing(t *testing.T) {
	saved := sluice.Epoch
	defer func() { sluice.Epoch = saved }()
	at := time.Date(2026, time.March, 1, 12, 0, 0, 0, time.UTC)
	want := at.Sub(time.Date(2020, time.January, 1, 0, 0, 0, 0, time.UTC)).Microseconds()
	sluice.Epoch = time.Date(2000, time.January, 1, 0, 0, 0, 0, time.UTC)
	if got := sluice.MicrosSinceEpoch(at); got != want {
		t.Errorf("MicrosSinceEpoch with Epoch assigned: %d, want %d", got, want)
	}
	if got := sluice.TimeFromMicros(want); !got.Equal(at) {
		t.Errorf("TimeFromMicros with Epoch assigned: %v, want %v", got, at)
	}
}
