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
	// X-RateLimit-Reset (Unix seconds), as GitHub sends them. In every
	// format, a reset above 10^9 is read as Unix seconds and one above
	// 10^12 as Unix milliseconds.
	FormatLegacy = "legacy"
)

// Quota units of the ietf RateLimit-Policy (its qu parameter), as
// draft-ietf-httpapi-ratelimit-headers registers them. A policy stating
// another unit is ignored, its RateLimit item with it: its quota cannot be
// counted, and the draft allows only registered units.
const (
	// UnitRequests counts requests, each of the cost Transport.Cost gives
	// it; a policy that states no unit counts them.
	UnitRequests = "requests"
	// UnitContentBytes counts the bytes of the content that requests send
	// (their bodies).
	UnitContentBytes = "content-bytes"
	// UnitConcurrentRequests counts requests in flight.
	UnitConcurrentRequests = "concurrent-requests"
)

// maxHint bounds every duration read from a header: a server that asks for
// more than sluice's longest window is saturated to it, never overflowed.
const maxHint = sluice.MaxWindow

// epochThreshold tells a Unix time from a delta in a Reset header: no one
// sends a delta of more than 31 years, and no reset lies before 2001.
// Above epochMillisThreshold a reset is a Unix time in milliseconds, as
// some APIs send it: in seconds it would lie beyond the year 30000.
const (
	epochThreshold       = 1_000_000_000
	epochMillisThreshold = 1_000_000_000_000
)

// maxReset is where a reset read from a header saturates: far enough above
// epochMillisThreshold for any Unix time in milliseconds, and beyond
// maxHint however it is read.
const maxReset = 1_000_000_000_000_000

// maxFieldLen bounds the length of a RateLimit or RateLimit-Policy field,
// all its lines together, that is read: a longer one is ignored, as a
// malformed one is. It holds some 400 policies, more than any server
// states; reading megabytes of one on every response would cost a second
// of CPU each.
const maxFieldLen = 16 << 10

// fieldValues returns the lines of the field name of h, or none when
// together they are longer than maxFieldLen.
func fieldValues(h http.Header, name string) []string {
	vs, n := h.Values(name), 0
	for _, v := range vs {
		if n += len(v); n > maxFieldLen {
			return nil
		}
	}
	return vs
}

// RateLimit is what one response's rate-limit headers say about the
// client's quota. When a response describes several quota policies (the
// ietf format lists each, e.g. per-second and per-day), RateLimit describes
// the binding one: the least Remaining, and among those the longest Reset
// (a quota of content bytes only when no policy counts requests).
type RateLimit struct {
	// Format is the header format it was read from: FormatIETF,
	// FormatDraft7, FormatDraft6 or FormatLegacy.
	Format string
	// Policy names the binding policy when the ietf format names it
	// ("per-minute"); empty otherwise.
	Policy string
	// Unit is the unit of the binding policy's Limit and Remaining, as the
	// ietf RateLimit-Policy of the same name states it (its qu): UnitRequests
	// (also when no policy says, and in the other formats),
	// UnitContentBytes or UnitConcurrentRequests.
	Unit string
	// Limit is the policy's quota in units when the headers say it (the
	// draft-7 limit, RateLimit-Limit, X-RateLimit-Limit, or the q of the
	// ietf RateLimit-Policy of the same name); 0 when they do not.
	Limit int64
	// Remaining is the units still available at once; never negative.
	Remaining int64
	// Reset is how long until the quota is restored (in the ietf format,
	// its t: until more of it is made available, not necessarily all of
	// it, as a sliding window gives units back one by one), measured from
	// the response (from its Date header, advanced by its Age, for
	// Unix-time and date resets, which cancels clock skew). Zero when the
	// headers do not say or the reset has passed; never negative; at most
	// sluice.MaxWindow. sluice sends whole seconds rounded up, so waiting
	// Reset is never too early.
	Reset time.Duration
}

// ParseRateLimit reads the rate-limit headers of a response in all four
// formats and reports the binding policy; ok is false when none gives a
// remaining quota. A quota of content bytes binds only when no policy
// counts requests (its Remaining is in bytes), and a policy in a unit
// other than those registered (UnitRequests, UnitContentBytes,
// UnitConcurrentRequests) is ignored. now is when the response arrived;
// it is used only for Unix-time resets of a response without a Date
// header. Malformed values are ignored, never an error: a header that
// cannot be read says nothing, nor does a RateLimit or RateLimit-Policy
// field longer than 16 KiB.
// The headers are read as they are: those of a response a cache served
// (an Age above 0) say what remained when it was stored, and Transport
// and Pacer ignore them.
func ParseRateLimit(h http.Header, now time.Time) (rl RateLimit, ok bool) {
	var bytes RateLimit
	var hasBytes bool
	parseQuotas(h, now, func(q quota) {
		if q.bytes {
			bytes, hasBytes = binding(bytes, hasBytes, q.RateLimit), true
		} else {
			rl, ok = binding(rl, ok, q.RateLimit), true
		}
	})
	if !ok {
		return bytes, hasBytes
	}
	return rl, ok
}

// binding returns the one of rl (when has) and c that binds: the least
// Remaining, and among those the longest Reset.
func binding(rl RateLimit, has bool, c RateLimit) RateLimit {
	if !has || c.Remaining < rl.Remaining || c.Remaining == rl.Remaining && c.Reset > rl.Reset {
		return c
	}
	return rl
}

// quota is one policy of a response: what RateLimit says of it, and the
// rate at which its quota comes back when the headers say it (q units per
// w seconds in RateLimit-Policy), in units per second, and its window w;
// 0 when unknown.
// inFlight: RateLimit-Policy states it a concurrency limit
// (qu="concurrent-requests"), whose units come back as requests end;
// bytes: it counts the bytes of request content (qu="content-bytes").
type quota struct {
	RateLimit
	rate     float64
	window   time.Duration
	inFlight bool
	bytes    bool
}

// resetBeyondWindow reports whether q's reset lies beyond its window,
// rounded up to whole seconds as resets are: a bucket of q per w is whole
// again within w, so such a quota does not come back at q/w (the server
// keeps a refused client out longer, say), and no rate of it holds until
// the reset.
func (q quota) resetBeyondWindow() bool {
	return q.window > 0 && q.Reset > ceilSecond(q.window)
}

// parseQuotas calls consider for every policy the rate-limit headers of a
// response describe, in any of the four formats.
func parseQuotas(h http.Header, now time.Time, consider func(quota)) {
	keep := func(q quota) {
		if q.Remaining >= 0 {
			consider(q)
		}
	}
	if vs := fieldValues(h, "Ratelimit"); len(vs) > 0 {
		if list, err := httpsfv.UnmarshalList(vs); err == nil {
			parseIETF(list, h, serverTime(h, now), keep)
		} else if dict, err := httpsfv.UnmarshalDictionary(vs); err == nil {
			parseDraft7(dict, draftRate(h), serverTime(h, now), keep)
		}
	}
	base := serverTime(h, now)
	if c, found := parseTriple(h, "Ratelimit-Limit", "Ratelimit-Remaining", "Ratelimit-Reset", base); found {
		c.Format = FormatDraft6
		keep(quota{RateLimit: c, rate: draftRate(h)})
	}
	if c, found := parseTriple(h, "X-Ratelimit-Limit", "X-Ratelimit-Remaining", "X-Ratelimit-Reset", base); found {
		c.Format = FormatLegacy
		keep(quota{RateLimit: c})
	}
}

// parseIETF reads draft-11's list of policies: "name";r=42;t=18. A reset
// above epochThreshold is a Unix time, taken relative to base.
func parseIETF(list httpsfv.List, h http.Header, base time.Time, consider func(quota)) {
	var policies map[string]policy
	for _, m := range list {
		it, isItem := m.(httpsfv.Item)
		if !isItem {
			continue
		}
		r, found := intParam(it.Params, "r", math.Floor, sluice.MaxQuantity)
		if !found || r < 0 {
			continue
		}
		c := quota{RateLimit: RateLimit{Format: FormatIETF, Policy: itemName(it), Remaining: r}}
		if t, found := intParam(it.Params, "t", math.Ceil, maxReset); found {
			c.Reset = resetIn(t, base)
		}
		if policies == nil {
			policies = ietfPolicies(h)
		}
		p, stated := policies[c.Policy]
		if !stated {
			p.unit = UnitRequests // no RateLimit-Policy says otherwise
		}
		if p.unit == "" {
			continue // a unit not registered: its quota cannot be counted
		}
		c.Limit, c.Unit, c.rate, c.window = p.q, p.unit, p.rate(), p.window()
		c.inFlight, c.bytes = p.unit == UnitConcurrentRequests, p.unit == UnitContentBytes
		consider(c)
	}
}

// policy is one item of RateLimit-Policy: q units per w seconds (w 0 when
// it does not say), or q requests in flight at once, in its unit (its qu):
// UnitRequests, UnitContentBytes or UnitConcurrentRequests, or "" for a
// unit not registered.
type policy struct {
	q    int64
	w    float64
	unit string
}

// window is w, rounded up to a nanosecond and saturated at
// sluice.MaxWindow, or 0 when the policy names no window.
func (p policy) window() time.Duration {
	if !(p.w > 0) {
		return 0
	}
	if ns := math.Ceil(p.w * 1e9); ns < float64(sluice.MaxWindow) {
		return time.Duration(ns)
	}
	return sluice.MaxWindow
}

// rate is q/w in units per second, or 0 when the policy names no window.
func (p policy) rate() float64 {
	if p.q <= 0 || !(p.w > 0) || math.IsInf(p.w, 0) {
		return 0
	}
	return float64(p.q) / p.w
}

// policyOf reads q and w from a RateLimit-Policy item's parameters.
func policyOf(params *httpsfv.Params) (p policy) {
	if q, found := intParam(params, "q", math.Floor, sluice.MaxQuantity); found && q > 0 {
		p.q = q
	}
	p.unit = UnitRequests
	if params != nil {
		if qu, found := params.Get("qu"); found {
			p.unit = quotaUnit(bareString(qu))
		}
		if v, found := params.Get("w"); found {
			switch w := v.(type) {
			case int64:
				p.w = float64(w)
			case float64:
				p.w = w
			}
		}
	}
	return p
}

// quotaUnit is the registered quota unit qu names, or "" for another.
// The draft names the unit of requests both "requests" and, in its
// registry, "request": either is read as it.
func quotaUnit(qu string) string {
	switch qu {
	case UnitRequests, "request":
		return UnitRequests
	case UnitContentBytes, UnitConcurrentRequests:
		return qu
	}
	return ""
}

// ietfPolicies maps the names of the ietf RateLimit-Policy to their q and w.
func ietfPolicies(h http.Header) map[string]policy {
	out := map[string]policy{}
	list, err := httpsfv.UnmarshalList(fieldValues(h, "Ratelimit-Policy"))
	if err != nil {
		return out
	}
	for _, m := range list {
		if it, isItem := m.(httpsfv.Item); isItem {
			out[itemName(it)] = policyOf(it.Params)
		}
	}
	return out
}

// draftRate is the rate of the one policy of draft 6 and 7's
// RateLimit-Policy ("100;w=60"), which names no policy: 0 when it lists
// several, since the headers do not say which of them binds.
func draftRate(h http.Header) float64 {
	list, err := httpsfv.UnmarshalList(fieldValues(h, "Ratelimit-Policy"))
	if err != nil || len(list) != 1 {
		return 0
	}
	it, isItem := list[0].(httpsfv.Item)
	if !isItem {
		return 0
	}
	q, isInt := it.Value.(int64)
	if !isInt {
		return 0
	}
	p := policyOf(it.Params)
	if p.unit != UnitRequests {
		return 0 // a rate in other units than the remaining's
	}
	p.q = q
	return p.rate()
}

// parseDraft7 reads RateLimit: limit=100, remaining=42, reset=18. A reset
// above epochThreshold is a Unix time, taken relative to base.
func parseDraft7(d *httpsfv.Dictionary, rate float64, base time.Time, consider func(quota)) {
	get := func(k string, round func(float64) float64, most int64) (int64, bool) {
		m, found := d.Get(k)
		if !found {
			return 0, false
		}
		it, isItem := m.(httpsfv.Item)
		if !isItem {
			return 0, false
		}
		return number(it.Value, round, most)
	}
	r, found := get("remaining", math.Floor, sluice.MaxQuantity)
	if !found || r < 0 {
		return
	}
	c := RateLimit{Format: FormatDraft7, Unit: UnitRequests, Remaining: r}
	if l, found := get("limit", math.Floor, sluice.MaxQuantity); found && l > 0 {
		c.Limit = l
	}
	if t, found := get("reset", math.Ceil, maxReset); found {
		c.Reset = resetIn(t, base)
	}
	consider(quota{RateLimit: c, rate: rate})
}

// parseTriple reads the draft-6 or legacy headers: a Limit, a Remaining and
// a Reset header, each an integer (the first of a comma-separated list); a
// decimal Reset (Discord sends "1470173023.123") is rounded up.
// A Reset above epochThreshold is a Unix time, and one that is an RFC 3339
// timestamp or an HTTP-date a time, taken relative to base.
func parseTriple(h http.Header, limitH, remainingH, resetH string, base time.Time) (RateLimit, bool) {
	r, found := leadingInt(h.Get(remainingH))
	if !found {
		return RateLimit{}, false
	}
	c := RateLimit{Unit: UnitRequests, Remaining: r}
	if l, found := leadingInt(h.Get(limitH)); found {
		c.Limit = l
	}
	if t, found := leadingCeil(h.Get(resetH)); found {
		c.Reset = resetIn(t, base)
	} else if at, found := resetDate(h.Get(resetH)); found {
		c.Reset = ceilSecond(at.Sub(base))
	}
	return c, true
}

// resetDate reads a Reset header that is a time rather than a number, as
// some servers send it: an RFC 3339 timestamp ("2026-11-30T12:00:30Z") or
// an HTTP-date.
func resetDate(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, true
	}
	if t, err := http.ParseTime(s); err == nil {
		return t, true
	}
	return time.Time{}, false
}

// ParseRetryAfter reads a Retry-After header: delay-seconds ("120") or an
// HTTP-date, which is taken relative to the response's Date header when it
// has one (so that clock skew cancels), advanced by its Age when a cache
// served it, and to now otherwise. ok is false
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

// serverTime is the server's clock now, as the response tells it: its
// Date, advanced by its Age when a cache served it (RFC 9111: the Date is
// when the origin made it, Age how long ago that was), or now when it has
// no Date. Unix-time and HTTP-date hints are meant relative to the
// server's clock.
func serverTime(h http.Header, now time.Time) time.Time {
	if d := h.Get("Date"); d != "" {
		if t, err := http.ParseTime(d); err == nil {
			if age, ok := leadingInt(h.Get("Age")); ok {
				t = t.Add(seconds(age))
			}
			return t
		}
	}
	return now
}

func itemName(it httpsfv.Item) string { return bareString(it.Value) }

// bareString is a structured field's string or token, or "" for a value
// of another type.
func bareString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case httpsfv.Token:
		return string(v)
	}
	return ""
}

func intParam(p *httpsfv.Params, k string, round func(float64) float64, most int64) (int64, bool) {
	if p == nil {
		return 0, false
	}
	v, found := p.Get(k)
	if !found {
		return 0, false
	}
	return number(v, round, most)
}

// number reads a structured-field integer or decimal, rounding a decimal
// with round and saturating at most; negative values are reported as
// found so that callers can ignore them.
func number(v any, round func(float64) float64, most int64) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return min(n, most), true
	case float64:
		if math.IsNaN(n) || math.IsInf(n, 0) {
			return 0, false
		}
		f := round(n)
		if f >= float64(most) {
			return most, true
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
	return leadingIntUpTo(s, sluice.MaxQuantity)
}

// leadingIntUpTo is leadingInt saturating at most (at most maxReset).
func leadingIntUpTo(s string, most int64) (int64, bool) {
	s = strings.TrimLeft(s, " \t")
	var n int64
	i := 0
	for ; i < len(s) && '0' <= s[i] && s[i] <= '9'; i++ {
		n = min(n*10+int64(s[i]-'0'), most) // n ≤ 10^15: no overflow
	}
	if i == 0 {
		return 0, false
	}
	if i < len(s) && (s[i] == '.' || s[i] == '-' || s[i] == ':' || 'a' <= s[i]|0x20 && s[i]|0x20 <= 'z') {
		return 0, false // "1.5e3", "12abc", "2026-11-30", "12:00": not an integer
	}
	return n, true
}

// resetIn reads a reset of t from a header: a delta in seconds, or a Unix
// time taken relative to base, in seconds when above epochThreshold and in
// milliseconds when above epochMillisThreshold; in [0, maxHint].
func resetIn(t int64, base time.Time) time.Duration {
	if t > epochMillisThreshold {
		return clampHint(time.UnixMilli(t).Sub(base))
	}
	if t > epochThreshold {
		return clampHint(time.Unix(t, 0).Sub(base))
	}
	return seconds(t)
}

// leadingCeil reads the non-negative number that s starts with, after
// spaces, as leadingInt does, but also a decimal ("2.5", "1470173023.123"),
// rounded up; it saturates at maxReset.
func leadingCeil(s string) (int64, bool) {
	n, found := leadingIntUpTo(s, maxReset)
	if found {
		return n, true
	}
	s = strings.TrimLeft(s, " \t")
	i := strings.IndexByte(s, '.')
	if i <= 0 || strings.TrimLeft(s[:i], "0123456789") != "" {
		return 0, false
	}
	n, _ = leadingIntUpTo(s[:i], maxReset)
	frac := s[i+1:]
	j := len(frac) - len(strings.TrimLeft(frac, "0123456789"))
	if j == 0 || j < len(frac) && (frac[j] == '.' || 'a' <= frac[j]|0x20 && frac[j]|0x20 <= 'z') {
		return 0, false // "1.", "1.5e3", "1.5s": not a decimal
	}
	if strings.Trim(frac[:j], "0") != "" {
		n = min(n+1, maxReset)
	}
	return n, true
}

// ceilSecond rounds d up to whole seconds, in [0, maxHint].
func ceilSecond(d time.Duration) time.Duration {
	d = clampHint(d)
	if r := d % time.Second; r != 0 {
		d += time.Second - r
	}
	return min(d, maxHint)
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
