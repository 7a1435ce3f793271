package client

import (
	"net/http"
	"testing"
	"time"
)

func header(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func TestParseRateLimit(t *testing.T) {
	cases := []struct {
		name string
		h    http.Header
		want RateLimit
		ok   bool
	}{
		{"ietf draft-11 with its policy", header(
			"RateLimit-Policy", `"per-minute";q=100;w=60`,
			"RateLimit", `"per-minute";r=42;t=18`),
			RateLimit{Format: FormatIETF, Policy: "per-minute", Limit: 100, Remaining: 42, Reset: 18 * time.Second}, true},
		{"ietf: the binding policy is the one with the least remaining", header(
			"RateLimit-Policy", `"per-second";q=10;w=1, "per-day";q=1000;w=86400`,
			"RateLimit", `"per-second";r=7;t=1, "per-day";r=3;t=40000`),
			RateLimit{Format: FormatIETF, Policy: "per-day", Limit: 1000, Remaining: 3, Reset: 40000 * time.Second}, true},
		{"ietf: ties go to the longest reset", header(
			"RateLimit", `"a";r=0;t=1, "b";r=0;t=60`),
			RateLimit{Format: FormatIETF, Policy: "b", Remaining: 0, Reset: time.Minute}, true},
		{"ietf: a token name and no reset", header("RateLimit", `default;r=5`),
			RateLimit{Format: FormatIETF, Policy: "default", Remaining: 5}, true},
		{"ietf: split over two header lines", header("RateLimit", `"a";r=9;t=1`, "RateLimit", `"b";r=2;t=5`),
			RateLimit{Format: FormatIETF, Policy: "b", Remaining: 2, Reset: 5 * time.Second}, true},
		{"ietf: a decimal reset is rounded up", header("RateLimit", `"a";r=1;t=1.2`),
			RateLimit{Format: FormatIETF, Policy: "a", Remaining: 1, Reset: 2 * time.Second}, true},
		{"ietf: a policy without r says nothing", header("RateLimit", `"a";t=5`), RateLimit{}, false},
		{"ietf: a negative remaining is ignored", header("RateLimit", `"a";r=-1;t=5`), RateLimit{}, false},
		{"draft 7", header("RateLimit", "limit=100, remaining=42, reset=18", "RateLimit-Policy", "100;w=60"),
			RateLimit{Format: FormatDraft7, Limit: 100, Remaining: 42, Reset: 18 * time.Second}, true},
		{"draft 7 without a reset", header("RateLimit", "remaining=0"),
			RateLimit{Format: FormatDraft7, Remaining: 0}, true},
		{"draft 6", header("RateLimit-Limit", "100", "RateLimit-Remaining", "0", "RateLimit-Reset", "18"),
			RateLimit{Format: FormatDraft6, Limit: 100, Remaining: 0, Reset: 18 * time.Second}, true},
		{"draft 6 with quota policies in the limit", header("RateLimit-Limit", "10, 10;w=1, 50;w=60", "RateLimit-Remaining", "4"),
			RateLimit{Format: FormatDraft6, Limit: 10, Remaining: 4}, true},
		{"legacy: reset is Unix time, taken from the Date header", header(
			"Date", "Mon, 30 Nov 2026 11:59:00 GMT", // the server's clock is a minute behind
			"X-RateLimit-Limit", "5000", "X-RateLimit-Remaining", "4999",
			"X-RateLimit-Reset", "1796039970"), // 2026-11-30T11:59:30Z
			RateLimit{Format: FormatLegacy, Limit: 5000, Remaining: 4999, Reset: 30 * time.Second}, true},
		{"legacy without a Date header: relative to now", header(
			"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "1796040010"), // 12:00:10
			RateLimit{Format: FormatLegacy, Remaining: 0, Reset: 10 * time.Second}, true},
		{"legacy: a reset in the past is zero", header(
			"X-RateLimit-Remaining", "3", "X-RateLimit-Reset", "1700000000"),
			RateLimit{Format: FormatLegacy, Remaining: 3}, true},
		{"legacy: a small reset is a delta", header("X-RateLimit-Remaining", "3", "X-RateLimit-Reset", "60"),
			RateLimit{Format: FormatLegacy, Remaining: 3, Reset: time.Minute}, true},
		{"several formats: the binding one wins", header(
			"RateLimit", `"per-minute";r=42;t=18`,
			"X-RateLimit-Remaining", "41", "X-RateLimit-Reset", "1796040018"),
			RateLimit{Format: FormatLegacy, Remaining: 41, Reset: 18 * time.Second}, true},
		{"draft 7: a reset above 10^9 is Unix time too", header(
			"Date", "Mon, 30 Nov 2026 11:59:00 GMT",
			"RateLimit", "limit=100, remaining=0, reset=1796039970"), // 11:59:30
			RateLimit{Format: FormatDraft7, Limit: 100, Remaining: 0, Reset: 30 * time.Second}, true},
		{"ietf: a reset above 10^9 is Unix time too", header(
			"RateLimit", `"a";r=0;t=1796040018`), // 12:00:18, no Date: now
			RateLimit{Format: FormatIETF, Policy: "a", Remaining: 0, Reset: 18 * time.Second}, true},
		{"ietf: a decimal Unix-time reset is rounded up", header(
			"RateLimit", `"a";r=0;t=1796040017.5`),
			RateLimit{Format: FormatIETF, Policy: "a", Remaining: 0, Reset: 18 * time.Second}, true},
		{"legacy: a decimal Unix-time reset (Discord's) is rounded up", header(
			"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "1796040017.123"),
			RateLimit{Format: FormatLegacy, Remaining: 0, Reset: 18 * time.Second}, true},
		{"draft 6: a decimal reset is rounded up", header("RateLimit-Remaining", "0", "RateLimit-Reset", "2.5"),
			RateLimit{Format: FormatDraft6, Remaining: 0, Reset: 3 * time.Second}, true},
		{"draft 6: a reset with a unit is not a number", header("RateLimit-Remaining", "0", "RateLimit-Reset", "2.5s"),
			RateLimit{Format: FormatDraft6, Remaining: 0}, true},
		{"a huge reset saturates", header("RateLimit", `"a";r=0;t=999999999999999`),
			RateLimit{Format: FormatIETF, Policy: "a", Reset: maxHint}, true},
		{"a huge remaining saturates", header("RateLimit-Remaining", "99999999999999999999999"),
			RateLimit{Format: FormatDraft6, Remaining: 1 << 40}, true},
		{"garbage is ignored", header("RateLimit", `;;;"`, "RateLimit-Remaining", "lots", "X-RateLimit-Remaining", "-3"),
			RateLimit{}, false},
		{"no headers", header(), RateLimit{}, false},
		{"ietf: a quota of content bytes binds only without a quota of requests",
			header("RateLimit-Policy", `"upload";q=1000000;w=60;qu="content-bytes", "per-minute";q=100;w=60`,
				"RateLimit", `"upload";r=5;t=30, "per-minute";r=42;t=18`),
			RateLimit{Format: FormatIETF, Policy: "per-minute", Limit: 100, Remaining: 42, Reset: 18 * time.Second}, true},
		{"ietf: a quota of content bytes alone binds, in bytes",
			header("RateLimit-Policy", `"upload";q=1000000;w=60;qu="content-bytes"`, "RateLimit", `"upload";r=5;t=30`),
			RateLimit{Format: FormatIETF, Policy: "upload", Unit: UnitContentBytes, Limit: 1000000, Remaining: 5, Reset: 30 * time.Second}, true},
		{"ietf: a quota in a unit not registered is ignored",
			header("RateLimit-Policy", `"tokens";q=10000;w=60;qu="tokens", "per-minute";q=100;w=60`,
				"RateLimit", `"tokens";r=0;t=30, "per-minute";r=42;t=18`),
			RateLimit{Format: FormatIETF, Policy: "per-minute", Limit: 100, Remaining: 42, Reset: 18 * time.Second}, true},
		{"ietf: the registry's \"request\" is requests",
			header("RateLimit-Policy", `"per-minute";q=100;w=60;qu="request"`, "RateLimit", `"per-minute";r=42;t=18`),
			RateLimit{Format: FormatIETF, Policy: "per-minute", Limit: 100, Remaining: 42, Reset: 18 * time.Second}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.ok && c.want.Unit == "" {
				c.want.Unit = UnitRequests // what every policy counts unless it says
			}
			got, ok := ParseRateLimit(c.h, now)
			if got != c.want || ok != c.ok {
				t.Errorf("got %+v, %v\nwant %+v, %v", got, ok, c.want, c.ok)
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	cases := []struct {
		name string
		h    http.Header
		want time.Duration
		ok   bool
	}{
		{"delay-seconds", header("Retry-After", "120"), 2 * time.Minute, true},
		{"zero means now", header("Retry-After", "0"), 0, true},
		{"HTTP-date, relative to Date", header("Retry-After", "Mon, 30 Nov 2026 12:00:30 GMT",
			"Date", "Mon, 30 Nov 2026 12:00:20 GMT"), 10 * time.Second, true},
		{"HTTP-date of a response a cache served 8 s after its Date", header("Retry-After", "Mon, 30 Nov 2026 12:00:30 GMT",
			"Date", "Mon, 30 Nov 2026 12:00:20 GMT", "Age", "8"), 2 * time.Second, true},
		{"HTTP-date without Date: relative to now", header("Retry-After", "Mon, 30 Nov 2026 12:01:00 GMT"), time.Minute, true},
		{"a date in the past means now", header("Retry-After", "Mon, 30 Nov 2026 11:00:00 GMT"), 0, true},
		{"a decimal is rounded up to a millisecond", header("Retry-After", "1.0005"), 1001 * time.Millisecond, true},
		{"a huge delay saturates", header("Retry-After", "99999999999999999999"), maxHint, true},
		{"negative is malformed", header("Retry-After", "-5"), 0, false},
		{"garbage is malformed", header("Retry-After", "soon"), 0, false},
		{"absent", header(), 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := ParseRetryAfter(c.h, now)
			if got != c.want || ok != c.ok {
				t.Errorf("got %v, %v; want %v, %v", got, ok, c.want, c.ok)
			}
		})
	}
}

func TestADateResetIsATimeNotADelta(t *testing.T) {
	cases := []struct {
		name  string
		reset string
		want  time.Duration
	}{
		{"RFC 3339", "2026-11-30T12:00:30Z", 30 * time.Second},
		{"RFC 3339 with an offset", "2026-11-30T13:01:00+01:00", time.Minute},
		{"RFC 3339 with fractions, rounded up", "2026-11-30T12:00:29.2Z", 30 * time.Second},
		{"HTTP-date", "Mon, 30 Nov 2026 12:00:30 GMT", 30 * time.Second},
		{"a date in the past", "2026-11-30T11:00:00Z", 0},
		{"a date alone is not a reset", "2026-12-01", 0},
		{"a time alone is not a reset", "12:00:30", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, names := range [][2]string{{"X-RateLimit-Remaining", "X-RateLimit-Reset"}, {"RateLimit-Remaining", "RateLimit-Reset"}} {
				got, ok := ParseRateLimit(header(names[0], "0", names[1], c.reset), now)
				if !ok || got.Reset != c.want {
					t.Errorf("%s: %q: got %+v, %v; want a reset of %v", names[1], c.reset, got, ok, c.want)
				}
			}
		})
	}
}

func TestAResetInUnixMillisecondsIsThatTime(t *testing.T) {
	// now is 2026-11-30T12:00:00Z, Unix 1796040000.
	cases := []struct {
		name string
		h    http.Header
		want time.Duration
	}{
		{"legacy", header("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "1796040030000"), 30 * time.Second},
		{"legacy, relative to Date", header("Date", "Mon, 30 Nov 2026 11:59:00 GMT",
			"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "1796039970500"), 30500 * time.Millisecond},
		{"draft 6", header("RateLimit-Remaining", "0", "RateLimit-Reset", "1796040001250"), 1250 * time.Millisecond},
		{"draft 7", header("RateLimit", "remaining=0, reset=1796040010000"), 10 * time.Second},
		{"ietf", header("RateLimit", `"a";r=0;t=1796040018000`), 18 * time.Second},
		{"in the past", header("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "1796039000000"), 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := ParseRateLimit(c.h, now)
			if !ok || got.Reset != c.want {
				t.Errorf("got %+v, %v; want a reset of %v", got, ok, c.want)
			}
		})
	}
}
