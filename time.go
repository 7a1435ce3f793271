package sluice

import (
	"math"
	"time"
)

// Epoch is the origin of sluice's integer time: algorithm state holds
// microseconds since 2020-01-01T00:00:00Z. Windows are aligned to Epoch, so a
// one-minute window starts on a whole minute and a one-day window at midnight
// UTC. Microseconds since Epoch stay below 2^53 until the year 2305, so the
// same values are exact in Redis's Lua (whose numbers are doubles) and in Go.
// Epoch is a variable because Go has no constants of type time.Time: sluice
// never reads it, so assigning to it changes nothing sluice computes.
var Epoch = time.Unix(epochUnix, 0).UTC()

// epochUnix is Epoch in seconds since 1970-01-01T00:00:00Z.
const epochUnix = 1577836800

// Never is the RetryAfter of a check that no wait can admit: its cost is
// larger than the limit's capacity.
const Never = time.Duration(math.MaxInt64)

// MicrosSinceEpoch converts t to microseconds since Epoch, rounding down.
// Times more than about 292 years from Epoch (before 1728, after 2312)
// saturate: time.Duration holds no more.
func MicrosSinceEpoch(t time.Time) int64 {
	d := t.Sub(time.Unix(epochUnix, 0)) // saturates at ±292 years
	us := d / time.Microsecond
	if d%time.Microsecond < 0 {
		us--
	}
	return int64(us)
}

// TimeFromMicros converts microseconds since Epoch back to a time.Time in
// UTC, exactly for any us (also beyond the ±292 years a time.Duration
// spans, where MicrosSinceEpoch saturates).
func TimeFromMicros(us int64) time.Time {
	return time.Unix(epochUnix+us/1e6, us%1e6*1e3).UTC()
}

// durationFromMicros converts µs to a time.Duration, saturating at Never.
func durationFromMicros(us int64) time.Duration {
	if us <= 0 {
		return 0
	}
	if us > math.MaxInt64/int64(time.Microsecond) {
		return Never
	}
	return time.Duration(us) * time.Microsecond
}
