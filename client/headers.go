package client

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/dunglas/httpsfv"

	"github.com/sluice-dev/sluice"
)

// Header formats, named as in httplimit and in sluice's configuration.
const (
	// FormatIETF is draft-ietf-httpapi-ratelimit-headers-11:
	//	RateLimit-Policy: "per-minute";q=100;w=60
	//	RateLimit: "per-minute";r=42;t=18
	FormatIETF = "ietf"
	// FormatDraft7 is draft 7: RateLimit: limit=100, remaining=42, reset=18.
	FormatDraft7 = "draft-7"
	// FormatDraft6 is draft 6: RateLimit-Limit, RateLimit-Remaining and
	// RateLimit-Reset (delta seconds).
	FormatDraft6 = "draft-6"
	// FormatLegacy is X-RateLimit-Limit, X-RateLimit-Remaining and
	// X-RateLimit-Reset (Unix seconds), as GitHub sends them.
	FormatLegacy = "legacy"
)

// maxHint bounds every duration read from a header: a server that asks for
// more than sluice's longest window is saturated to it, never overflowed.
const maxHint = sluice.MaxWindow

// epochThreshold tells a Unix time from a delta in a Reset header: no one
// sends a delta of more than 31 years, and no reset lies before 2001.
const epochThreshold = 1_000_000_000

// RateLimit is what one response's rate-limit headers say about the
// client's quota. When a response describes several quota policies (the
// ietf format lists each, e.g. per-second and per-day), RateLimit describes
// the binding one: the least Remaining, and among those the longest Reset.
type RateLimit struct {
	// Format is the header format it was read from: FormatIETF,
	// FormatDraft7, FormatDraft6 or FormatLegacy.
	Format string
	// Policy names the binding policy when the ietf format names it
	// ("per-minute"); empty otherwise.
	Policy string
	// Limit is the policy's quota in units when the headers say it (the
	// draft-7 limit, RateLimit-Limit, X-RateLimit-Limit, or the q of the
	// ietf RateLimit-Policy of the same name); 0 when they do not.
	Limit int64
	// Remaining is the units still available at once; never negative.
	Remaining int64
	// Reset is how long until the quota is restored, measured from the
	// response (from its Date header for Unix-time resets, which cancels
	// clock skew). Zero when the headers do not say or the reset has
	// passed; never negative; at most sluice.MaxWindow. sluice sends whole
	// seconds rounded up, so waiting Reset is never too early.
	Reset time.Duration
}

// ParseRateLimit reads the rate-limit headers of a response in all four
// formats and reports the binding policy; ok is false when none gives a
// remaining quota. now is when the response arrived; it is used only for
// Unix-time resets of a response without a Date header. Malformed values
// are ignored, never an error: a header that cannot be read says nothing.
func ParseRateLimit(h http.Header, now time.Time) (rl RateLimit, ok bool) {
	consider := func(c RateLimit) {
		if c.Remaining < 0 {
			return
		}
		if !ok || c.Remaining < rl.Remaining || c.Remaining == rl.Remaining && c.Reset > rl.Reset {
			rl, ok = c, true
		}
	}
	if vs := h.Values("Ratelimit"); len(vs) > 0 {
		if list, err := httpsfv.UnmarshalList(vs); err == nil {
			parseIETF(list, h, consider)
		} else if dict, err := httpsfv.UnmarshalDictionary(vs); err == nil {
			parseDraft7(dict, consider)
		}
	}
	base := serverTime(h, now)
	if c, found := parseTriple(h, "Ratelimit-Limit", "Ratelimit-Remaining", "Ratelimit-Reset", base); found {
		c.Format = FormatDraft6
		consider(c)
	}
	if c, found := parseTriple(h, "X-Ratelimit-Limit", "X-Ratelimit-Remaining", "X-Ratelimit-Reset", base); found {
		c.Format = FormatLegacy
		consider(c)
	}
	return rl, ok
}

// parseIETF reads draft-11's list of policies: "name";r=42;t=18.
func parseIETF(list httpsfv.List, h http.Header, consider func(RateLimit)) {
	var quotas map[string]int64
	for _, m := range list {
		it, isItem := m.(httpsfv.Item)
		if !isItem {
			continue
		}
		r, found := intParam(it.Params, "r", math.Floor)
		if !found || r < 0 {
			continue
		}
		c := RateLimit{Format: FormatIETF, Policy: itemName(it), Remaining: r}
		if t, found := intParam(it.Params, "t", math.Ceil); found {
			c.Reset = seconds(t)
		}
		if quotas == nil {
			quotas = policyQuotas(h)
		}
		c.Limit = quotas[c.Policy]
		consider(c)
	}
}

// policyQuotas maps the names of the ietf RateLimit-Policy to their q.
func policyQuotas(h http.Header) map[string]int64 {
	out := map[string]int64{}
	list, err := httpsfv.UnmarshalList(h.Values("Ratelimit-Policy"))
	if err != nil {
		return out
	}
	for _, m := range list {
		if it, isItem := m.(httpsfv.Item); isItem {
			if q, found := intParam(it.Params, "q", math.Floor); found && q > 0 {
				out[itemName(it)] = q
			}
		}
	}
	return out
}

// parseDraft7 reads RateLimit: limit=100, remaining=42, reset=18.
func parseDraft7(d *httpsfv.Dictionary, consider func(RateLimit)) {
	get := func(k string, round func(float64) float64) (int64, bool) {
		m, found := d.Get(k)
		if !found {
			return 0, false
		}
		it, isItem := m.(httpsfv.Item)
		if !isItem {
			return 0, false
		}
		return number(it.Value, round)
	}
	r, found := get("remaining", math.Floor)
	if !found || r < 0 {
		return
	}
	c := RateLimit{Format: FormatDraft7, Remaining: r}
	if l, found := get("limit", math.Floor); found && l > 0 {
		c.Limit = l
	}
	if t, found := get("reset", math.Ceil); found {
		c.Reset = seconds(t)
	}
	consider(c)
}

// parseTriple reads the draft-6 or legacy headers: a Limit, a Remaining and
// a Reset header, each an integer (the first of a comma-separated list).
// A Reset above epochThreshold is a Unix time, taken relative to base.
func parseTriple(h http.Header, limitH, remainingH, resetH string, base time.Time) (RateLimit, bool) {
	r, found := leadingInt(h.Get(remainingH))
	if !found {
		return RateLimit{}, false
	}
	c := RateLimit{Remaining: r}
	if l, found := leadingInt(h.Get(limitH)); found {
		c.Limit = l
	}
	if t, found := leadingInt(h.Get(resetH)); found {
		if t > epochThreshold {
			c.Reset = clampHint(time.Unix(t, 0).Sub(base))
		} else {
			c.Reset = seconds(t)
		}
	}
	return c, true
}

// ParseRetryAfter reads a Retry-After header: delay-seconds ("120") or an
// HTTP-date, which is taken relative to the response's Date header when it
// has one (so that clock skew cancels) and to now otherwise. ok is false
// when the header is absent or malformed. The wait is never negative (a
// date in the past means "now") and at most sluice.MaxWindow.
func ParseRetryAfter(h http.Header, now time.Time) (wait time.Duration, ok bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if n, found := leadingInt(v); found && len(strings.TrimLeft(v, "0123456789")) == 0 {
		return seconds(n), true
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 && !math.IsInf(f, 0) && !math.IsNaN(f) &&
		strings.Trim(v, "0123456789.") == "" {
		// Not RFC 9110, but some servers send "1.5": honour it, rounded up
		// to a millisecond.
		if f >= maxHint.Seconds() {
			return maxHint, true
		}
		return time.Duration(math.Ceil(f*1000)) * time.Millisecond, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return clampHint(t.Sub(serverTime(h, now))), true
}

// serverTime is the response's Date, or now when it has none: Unix-time
// and HTTP-date hints are meant relative to the server's clock.
func serverTime(h http.Header, now time.Time) time.Time {
	if d := h.Get("Date"); d != "" {
		if t, err := http.ParseTime(d); err == nil {
			return t
		}
	}
	return now
}

func itemName(it httpsfv.Item) string {
	switch v := it.Value.(type) {
	case string:
		return v
	case httpsfv.Token:
		return string(v)
	}
	return ""
}

func intParam(p *httpsfv.Params, k string, round func(float64) float64) (int64, bool) {
	if p == nil {
		return 0, false
	}
	v, found := p.Get(k)
	if !found {
		return 0, false
	}
	return number(v, round)
}

// number reads a structured-field integer or decimal, rounding a decimal
// with round and saturating at MaxQuantity; negative values are reported as
// found so that callers can ignore them.
func number(v any, round func(float64) float64) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return min(n, sluice.MaxQuantity), true
	case float64:
		if math.IsNaN(n) || math.IsInf(n, 0) {
			return 0, false
		}
		f := round(n)
		if f >= sluice.MaxQuantity {
			return sluice.MaxQuantity, true
		}
		if f < 0 {
			return -1, true
		}
		return int64(f), true
	}
	return 0, false
}

// leadingInt reads the non-negative integer that s starts with, after
// spaces ("42", " 42, 42", "100;w=60"), saturating at MaxQuantity.
func leadingInt(s string) (int64, bool) {
	s = strings.TrimLeft(s, " \t")
	var n int64
	i := 0
	for ; i < len(s) && '0' <= s[i] && s[i] <= '9'; i++ {
		n = min(n*10+int64(s[i]-'0'), sluice.MaxQuantity) // n ≤ 2^40: no overflow
	}
	if i == 0 {
		return 0, false
	}
	if i < len(s) && (s[i] == '.' || 'a' <= s[i]|0x20 && s[i]|0x20 <= 'z') {
		return 0, false // "1.5e3", "12abc": not an integer
	}
	return n, true
}

// seconds converts whole seconds from a header to a duration in [0, maxHint].
func seconds(n int64) time.Duration {
	if n <= 0 {
		return 0
	}
	if n >= int64(maxHint/time.Second) {
		return maxHint
	}
	return time.Duration(n) * time.Second
}

func clampHint(d time.Duration) time.Duration {
	return min(max(d, 0), maxHint)
}
