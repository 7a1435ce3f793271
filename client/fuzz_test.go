package client

import (
	"net/http"
	"testing"
	"time"
)

// FuzzParseRateLimitHeaders: whatever a server sends, reading its headers
// never panics, and never yields a negative or unbounded wait or a negative
// quota.
func FuzzParseRateLimitHeaders(f *testing.F) {
	f.Add(`"per-minute";r=42;t=18, "per-day";r=958;t=40000`, `"per-minute";q=100;w=60`, "", "", "", "", "")
	f.Add("limit=100, remaining=42, reset=18", "100;w=60", "", "", "", "", "")
	f.Add("", "", "0", "18", "", "", "120")
	f.Add("", "", "", "", "4999", "1796039970", "Mon, 30 Nov 2026 12:00:30 GMT")
	f.Add(`a;r=1.5;t=-3.7`, `a;q=?1`, "-1", "99999999999999999999999", "1e9", "-1796039970", "-1")
	f.Add(`(1 2);r=1`, `"x";q=1.0`, " 7, 8", "1.5", "00", "9223372036854775807", "1e400")
	f.Fuzz(func(t *testing.T, rl, policy, remaining, reset, legacyRemaining, legacyReset, retryAfter string) {
		h := http.Header{}
		set := func(k, v string) {
			if v != "" {
				h.Set(k, v)
			}
		}
		set("RateLimit", rl)
		set("RateLimit-Policy", policy)
		set("RateLimit-Remaining", remaining)
		set("RateLimit-Reset", reset)
		set("X-RateLimit-Remaining", legacyRemaining)
		set("X-RateLimit-Reset", legacyReset)
		set("Retry-After", retryAfter)
		set("Date", retryAfter)
		now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

		got, ok := ParseRateLimit(h, now)
		if got.Remaining < 0 || got.Limit < 0 || got.Reset < 0 || got.Reset > maxHint {
			t.Fatalf("ParseRateLimit = %+v", got)
		}
		switch got.Format {
		case FormatIETF, FormatDraft7, FormatDraft6, FormatLegacy:
			if !ok {
				t.Fatalf("a format without ok: %+v", got)
			}
		case "":
			if ok {
				t.Fatal("ok without a format")
			}
		default:
			t.Fatalf("format %q", got.Format)
		}
		ra, hasRA := ParseRetryAfter(h, now)
		if ra < 0 || ra > maxHint || !hasRA && ra != 0 {
			t.Fatalf("ParseRetryAfter = %v, %v", ra, hasRA)
		}
		if w, _ := serverWait(ra, hasRA, got, ok, 1); w < 0 || w > maxHint {
			t.Fatalf("serverWait = %v", w)
		}
	})
}
