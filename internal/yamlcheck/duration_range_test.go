package yamlcheck

import (
	"errors"
	"testing"
)

// A well-formed duration past what time.Duration holds (about 106751
// days) is an error wrapping ErrDurationRange, however it is written: in
// hours, in more days than an int32 holds, or in days and hours (it was a
// syntax error, and Decoder.Duration said "3000000h" is not a duration),
// while a malformed one is not.
func TestEveryDurationTooLongWrapsErrDurationRange(t *testing.T) {
	for _, s := range []string{"3000000h", "200000d", "9999999999d", "1d3000000h"} {
		if _, err := ParseDuration(s); !errors.Is(err, ErrDurationRange) {
			t.Errorf("ParseDuration(%q): %v; want an error wrapping ErrDurationRange", s, err)
		}
	}
	for _, s := range []string{"3000000", "1dh", "5x", "1..5s", "", "-", "1d1d"} {
		if _, err := ParseDuration(s); err == nil || errors.Is(err, ErrDurationRange) {
			t.Errorf("ParseDuration(%q): %v; want a syntax error", s, err)
		}
	}
}
