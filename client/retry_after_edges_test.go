package client

import (
	"net/http"
	"testing"
	"time"
)

// Pins ParseRetryAfter's contract (its doc comment: "ok is false when the
// header is absent or malformed"; RFC 9110 §10.2.3: Retry-After =
// HTTP-date / delay-seconds, delay-seconds = 1*DIGIT, one value): digits
// followed by anything but digits are no delay-seconds, so a list ("120,
// 60", two fields a proxy joined) or a unit ("12 s", "12;q=1") is
// malformed, not the delay its leading digits spell.
func TestARetryAfterOfDigitsAndMoreIsMalformed(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, v := range []string{"120, 60", "12 s", "12;q=1", "30 30"} {
		h := http.Header{}
		h.Set("Retry-After", v)
		if wait, ok := ParseRetryAfter(h, now); ok {
			t.Errorf("Retry-After: %q read as %v; want malformed (ok false)", v, wait)
		}
	}
	// Surrounding spaces are no part of the value (RFC 9110 §5.5).
	h := http.Header{}
	h.Set("Retry-After", " 120 ")
	if wait, ok := ParseRetryAfter(h, now); !ok || wait != 2*time.Minute {
		t.Errorf("Retry-After: \" 120 \": %v, %v; want 2m0s, true", wait, ok)
	}
}
