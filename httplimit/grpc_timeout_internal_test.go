package httplimit

import (
	"testing"
	"time"
)

// A grpc-timeout is 1 to 8 digits and one unit; anything else states no
// deadline, and eight digits of hours saturate.
func TestParseGRPCTimeout(t *testing.T) {
	for v, want := range map[string]time.Duration{
		"2S": 2 * time.Second, "100m": 100 * time.Millisecond, "1H": time.Hour, "3M": 3 * time.Minute,
		"250u": 250 * time.Microsecond, "99999999n": 99999999, "0S": 0,
		"99999999H": time.Duration(1<<63 - 1),
	} {
		if got, ok := parseGRPCTimeout(v); !ok || got != want {
			t.Errorf("%q: %v %v, want %v", v, got, ok, want)
		}
	}
	for _, v := range []string{"", "S", "5", "5s", "5 S", "-5S", "123456789S", "1.5S", "５S"} {
		if got, ok := parseGRPCTimeout(v); ok {
			t.Errorf("%q: %v, want no deadline", v, got)
		}
	}
}
