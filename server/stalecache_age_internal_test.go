package server

import (
	"net/http"
	"testing"
)

// A copy's Age starts from the Age its response came with (RFC 9111, 5.1):
// a number of seconds, at most 2^31 (1.2.2: a larger one is sent as
// 2^31); a field that is not one, negative or empty, counts as 0.
func TestUpstreamAgeReadsDeltaSeconds(t *testing.T) {
	for _, tc := range []struct {
		age  []string
		want int64
	}{
		{nil, 0},
		{[]string{"100"}, 100},
		{[]string{" 7 "}, 7},
		{[]string{"100", "5"}, 100},
		{[]string{"-5"}, 0},
		{[]string{"1.5"}, 0},
		{[]string{"soon"}, 0},
		{[]string{"2147483649"}, 1 << 31},
		{[]string{"99999999999999999999999"}, 1 << 31},
	} {
		if got := upstreamAge(http.Header{"Age": tc.age}); got != tc.want {
			t.Errorf("Age %q: %d, want %d", tc.age, got, tc.want)
		}
	}
}
