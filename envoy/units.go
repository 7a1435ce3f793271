package envoy

import (
	"strings"
	"time"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
)

// Units are envoyproxy/ratelimit's, with its lengths: a month is 30 days and
// a year 365. A fixed window counts them from the Unix epoch, as
// envoyproxy/ratelimit does (see calendar.go: a week starts on a Thursday);
// other algorithms from sluice.Epoch (2020-01-01 UTC, a Wednesday). Either
// way a day starts at midnight UTC.
const (
	day   = 24 * time.Hour
	week  = 7 * day
	month = 30 * day
	year  = 365 * day
)

var units = []struct {
	name string
	d    time.Duration
	pb   rlsv3.RateLimitResponse_RateLimit_Unit
}{
	{"second", time.Second, rlsv3.RateLimitResponse_RateLimit_SECOND},
	{"minute", time.Minute, rlsv3.RateLimitResponse_RateLimit_MINUTE},
	{"hour", time.Hour, rlsv3.RateLimitResponse_RateLimit_HOUR},
	{"day", day, rlsv3.RateLimitResponse_RateLimit_DAY},
	{"week", week, rlsv3.RateLimitResponse_RateLimit_WEEK},
	{"month", month, rlsv3.RateLimitResponse_RateLimit_MONTH},
	{"year", year, rlsv3.RateLimitResponse_RateLimit_YEAR},
}

// parseUnit returns the unit named s as envoyproxy/ratelimit reads it: the
// unit whose name is strings.ToUpper(s), so that case differs and so may a
// letter that only upper-cases to one of the name's (ı is I, ſ is S), but
// not one that only lower-cases to one (the Kelvin sign K is not k).
func parseUnit(s string) (time.Duration, rlsv3.RateLimitResponse_RateLimit_Unit, bool) {
	upper := strings.ToUpper(s)
	for _, u := range units {
		if upper == u.pb.String() {
			return u.d, u.pb, true
		}
	}
	return 0, 0, false
}

// unitLength returns the length of the unit u, or 0 if u is UNKNOWN or not
// a unit. envoy.type.v3.RateLimitUnit (limit overrides) numbers its units
// as RateLimitResponse_RateLimit_Unit does.
func unitLength(u rlsv3.RateLimitResponse_RateLimit_Unit) time.Duration {
	for _, x := range units {
		if x.pb == u {
			return x.d
		}
	}
	return 0
}

func unitNames() string {
	names := make([]string, len(units))
	for i, u := range units {
		names[i] = u.name
	}
	return strings.Join(names, ", ")
}
