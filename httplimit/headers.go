package httplimit

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/dunglas/httpsfv"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/quota"
)

// Header modes.
const (
	// ModeIETF is draft-ietf-httpapi-ratelimit-headers-11:
	//	RateLimit-Policy: "per-minute";q=100;w=60, "per-day";q=1000;w=86400
	//	RateLimit: "per-minute";r=42;t=18, "per-day";r=958;t=40000
	ModeIETF = "ietf"
	// ModeDraft7 is draft 7, as express-rate-limit sends it:
	//	RateLimit-Policy: 100;w=60, 1000;w=86400
	//	RateLimit: limit=100, remaining=42, reset=18
	// Beside ModeIETF, whose fields of the same names it cannot share, it
	// sends nothing.
	ModeDraft7 = "draft-7"
	// ModeDraft6 is draft 6: RateLimit-Limit, RateLimit-Remaining,
	// RateLimit-Reset (delta seconds) and RateLimit-Policy as in draft 7
	// (beside ModeIETF, the IETF RateLimit-Policy).
	ModeDraft6 = "draft-6"
	// ModeLegacy is X-RateLimit-Limit, X-RateLimit-Remaining and
	// X-RateLimit-Reset (Unix seconds), as GitHub sends them.
	ModeLegacy = "legacy"
)

// policyHeaders are the RateLimit-Policy values of a list of limits (a
// plan's with the global ones, a rule's, or a plan's with the rules that
// matched a request), which do not change between requests: computed once,
// shared read-only (full-capacity slices, so that a handler appending to
// the header copies instead of writing into them).
type policyHeaders struct {
	ietf, draft []string
	// items are the beginnings of the RateLimit items, one per limit in the
	// order of Result.Checks: the name as an sf-string and ";r="
	// ("\"per-minute\";r="), "" for a hidden limit; quotas are those
	// limits' quotas. ietf and draft are nil when every limit is hidden.
	items  []string
	quotas []quota.Quota
	// ietfItems and draftItems are each limit's member of ietf and draft,
	// "" for a hidden limit, from which joined builds a list's values.
	ietfItems, draftItems []string
}

// newPolicyHeaders returns the policy headers of limits, stating each as
// stated finds it (see Middleware.Stated).
func newPolicyHeaders(limits []sluice.Limit, hidden map[string]bool, stated *statedLimits) (policyHeaders, error) {
	var ph policyHeaders
	for _, l := range limits {
		qt := quota.Of(stated.add(l))
		ph.quotas = append(ph.quotas, qt)
		if hidden[l.Name()] {
			ph.items, ph.ietfItems, ph.draftItems = append(ph.items, ""), append(ph.ietfItems, ""), append(ph.draftItems, "")
			continue
		}
		ph.items = append(ph.items, string(appendSFString(nil, l.Name()))+";r=")
		it := httpsfv.NewItem(l.Name())
		it.Params.Add("q", qt.Q)
		d := httpsfv.NewItem(qt.Q)
		switch {
		case qt.W == 0:
			it.Params.Add("qu", "concurrent-requests") // no window: a lease time is not one
		case qt.Calendar:
			// Windows of differing lengths: no w, which the draft allows.
		default:
			it.Params.Add("w", qt.W)
			d.Params.Add("w", qt.W)
		}
		a, err := httpsfv.Marshal(httpsfv.List{it})
		if err != nil {
			return policyHeaders{}, fmt.Errorf("RateLimit-Policy: %w", err)
		}
		b, err := httpsfv.Marshal(httpsfv.List{d})
		if err != nil {
			return policyHeaders{}, fmt.Errorf("RateLimit-Policy: %w", err)
		}
		ph.ietfItems, ph.draftItems = append(ph.ietfItems, a), append(ph.draftItems, b)
	}
	ph.ietf, ph.draft = joined(ph.ietfItems), joined(ph.draftItems)
	return ph, nil
}

// joined returns the sf-list of members, those not "" joined by ", ", as a
// header's values full to capacity; nil when every member is "".
func joined(members []string) []string {
	n := 0
	for _, v := range members {
		if v != "" {
			n += len(v) + 2
		}
	}
	if n == 0 {
		return nil
	}
	b := make([]byte, 0, n-2)
	for _, v := range members {
		if v == "" {
			continue
		}
		if len(b) > 0 {
			b = append(b, ", "...)
		}
		b = append(b, v...)
	}
	return []string{string(b)}[:1:1]
}

// concat returns the policy headers of the limits of parts, in order.
func concat(parts ...*policyHeaders) *policyHeaders {
	var ph policyHeaders
	for _, p := range parts {
		ph.items = append(ph.items, p.items...)
		ph.quotas = append(ph.quotas, p.quotas...)
		ph.ietfItems = append(ph.ietfItems, p.ietfItems...)
		ph.draftItems = append(ph.draftItems, p.draftItems...)
	}
	ph.ietf, ph.draft = joined(ph.ietfItems), joined(ph.draftItems)
	return &ph
}

// part returns the headers of limits [from, to) of ph.
func (ph *policyHeaders) part(from, to int) *policyHeaders {
	return &policyHeaders{items: ph.items[from:to], quotas: ph.quotas[from:to],
		ietfItems: ph.ietfItems[from:to], draftItems: ph.draftItems[from:to]}
}

// writeHeaders sets the RateLimit headers of res in every configured mode.
// RateLimit-Policy values are shared ones, rendered once per plan and set of
// matched rules (see Middleware.headersOf); the per-request values of all
// modes are rendered into one buffer, then cut with the header slices (each
// full to capacity, so that a handler appending to a header copies instead
// of writing into its neighbour) from blocks kept in res: no allocation for
// most responses, whatever the modes (see Result.headerValues).
func (m *Middleware) writeHeaders(h http.Header, res *Result) {
	d := &res.Decision
	// res.checksOf is set with res.Checks by Decide and DecideFor; a Result
	// from elsewhere, or one the penalty box decided, has its checks' names
	// read one by one.
	ph, items, quotas := res.checksOf, []string(nil), []quota.Quota(nil)
	if ph != nil && res.plan != nil && res.plan.plan == res.Identity.Plan && len(ph.items) == len(res.Checks) {
		items, quotas = ph.items, ph.quotas
	} else if ps := m.planOf(res.Identity.Plan); res.plan == ps {
		ph = m.headersOf(ps, res)
	} else {
		ph = &ps.headers
	}
	var (
		endArr  [8]int
		nameArr [8]string
	)
	buf, ends, names := res.headerBuf[:0], endArr[:0], nameArr[:0]
	// With ModeIETF, its RateLimit-Policy and RateLimit are sent: the
	// drafts' fields of the same names have another syntax.
	var lim limitFigures
	if m.oneLimit {
		lim = decidingFigures(res, &m.stated)
	}
	// A status whose figures measure no use (see unmeasured: the store
	// was not reached, had no room, or was not asked) tells nothing of
	// the quota: its remaining and reset are left out, its quota (a
	// policy's q, configured) is told.
	told := !lim.unmeasured
	for _, mode := range m.modes {
		switch mode {
		case ModeIETF:
			if ph.ietf != nil {
				h["Ratelimit-Policy"] = ph.ietf
			}
			start := len(buf)
			if buf = appendIETF(buf, res.Checks, d.Statuses, items, quotas, &m.stated); len(buf) > start {
				ends, names = append(ends, len(buf)), append(names, "Ratelimit")
			} // else every limit is hidden: no field (an empty List is no field)
		case ModeDraft7:
			if m.ietfMode {
				continue
			}
			if ph.draft != nil {
				h["Ratelimit-Policy"] = ph.draft
			}
			if told {
				buf = appendDraft7(buf, lim.Q, lim.remaining, lim.t)
				ends, names = append(ends, len(buf)), append(names, "Ratelimit")
			}
		case ModeDraft6:
			if !m.ietfMode && ph.draft != nil {
				h["Ratelimit-Policy"] = ph.draft
			}
			buf = strconv.AppendInt(buf, lim.Q, 10)
			ends, names = append(ends, len(buf)), append(names, "Ratelimit-Limit")
			if told {
				buf = strconv.AppendInt(buf, lim.remaining, 10)
				ends, names = append(ends, len(buf)), append(names, "Ratelimit-Remaining")
				buf = strconv.AppendInt(buf, lim.t, 10)
				ends, names = append(ends, len(buf)), append(names, "Ratelimit-Reset")
			}
		case ModeLegacy:
			buf = strconv.AppendInt(buf, lim.Q, 10)
			ends, names = append(ends, len(buf)), append(names, "X-Ratelimit-Limit")
			if told {
				buf = strconv.AppendInt(buf, lim.remaining, 10)
				ends, names = append(ends, len(buf)), append(names, "X-Ratelimit-Remaining")
				buf = strconv.AppendInt(buf, lim.resetAt(res.Now).Unix(), 10)
				ends, names = append(ends, len(buf)), append(names, "X-Ratelimit-Reset")
			}
		}
	}
	res.headerBuf = buf
	if len(ends) == 0 {
		return
	}
	values := res.headerValues(buf, ends)
	for i := range ends {
		h[names[i]] = values[i : i+1 : i+1]
	}
}

// Sizes of the blocks header values are cut from (see Result.headerValues).
const (
	valueBlockBytes  = 1024
	valueBlockValues = 64
)

// headerValues returns the header values buf holds, value i ending at
// ends[i], as strings in a slice. Both are cut from blocks the Result keeps
// (a Result is used by one request at a time), so that most responses
// allocate nothing for their headers: a block serves several responses and
// is replaced, not reused, when used up. The bytes are written through a
// strings.Builder, whose String never copies and whose earlier strings never
// change as it grows; a header kept past its response keeps its blocks
// (about 2 KB) alive. Each value is full to capacity in the slice, so that
// appending to one copies.
func (res *Result) headerValues(buf []byte, ends []int) []string {
	k, n := len(ends), len(buf)
	if len(res.valueBlock) < k {
		res.valueBlock = make([]string, max(valueBlockValues, k))
	}
	values := res.valueBlock[:k:k]
	res.valueBlock = res.valueBlock[k:]
	var s string
	if n <= valueBlockBytes {
		if res.byteBlock.Cap()-res.byteBlock.Len() < n {
			res.byteBlock = strings.Builder{}
			res.byteBlock.Grow(valueBlockBytes)
		}
		from := res.byteBlock.Len()
		res.byteBlock.Write(buf)
		s = res.byteBlock.String()[from:]
	} else {
		s = string(buf) // longer than a block: rare (dozens of limits)
	}
	from := 0
	for i, end := range ends {
		values[i] = s[from:end]
		from = end
	}
	return values
}

// appendIETF appends the draft-11 RateLimit value of checks and their
// statuses, an sf-list of one item per limit:
//
//	"per-minute";r=42;t=18, "per-day";r=958;t=40000
//
// r is the Status's Remaining and t the seconds until more is available
// (quota.Quota.Seconds); a concurrency limit has no t. A status no store
// decided (sluice.Status.Unavailable, sluice.Status.Undecided), or that a
// store refused for want of room (sluice.Status.NoRoom), has no item: its
// figures are made up, and tell nothing of the quota. It writes what
// httpsfv.Marshal writes for that list (a property test holds it to that)
// without building the list: names are sf-strings, remaining and reset are
// sf-integers, which hold them (remaining ≤ MaxQuantity, reset ≤ Never in
// seconds, both below 10^15). items and quotas, when not nil, are the
// checks' names already written with ";r=" and their quotas
// (policyHeaders); a check whose item is "" is hidden. Without them, a
// check's quota is that of the limit stated finds for it.
func appendIETF(buf []byte, checks []sluice.Check, statuses []sluice.Status, items []string, quotas []quota.Quota, stated *statedLimits) []byte {
	start := len(buf)
	for i := range checks {
		if items != nil && items[i] == "" || unmeasured(&statuses[i]) {
			continue
		}
		if len(buf) > start {
			buf = append(buf, ", "...)
		}
		st := &statuses[i]
		var qt quota.Quota
		if items != nil {
			buf = append(buf, items[i]...)
			qt = quotas[i]
		} else {
			buf = appendSFString(buf, checks[i].Limit.Name())
			buf = append(buf, ";r="...)
			qt = quota.Of(stated.of(checks[i].Limit))
		}
		buf = strconv.AppendInt(buf, st.Remaining, 10)
		if qt.W > 0 {
			buf = append(buf, ";t="...)
			buf = strconv.AppendInt(buf, qt.Seconds(st.Remaining, st.ResetAfter, st.RetryAfter), 10)
		}
	}
	return buf
}

// limitFigures are what the single-limit modes (draft-6, draft-7, legacy)
// and the problem body say: the deciding limit's quota, remaining and
// seconds until more is available.
type limitFigures struct {
	quota.Quota
	name      string
	remaining int64
	t         int64         // the RateLimit t: until, in whole seconds rounded up, at most w
	until     time.Duration // the exact wait behind t (quota.Quota.Until)
	// unmeasured: the limit's status measures no use (see unmeasured),
	// and remaining, t and until tell nothing of its quota.
	unmeasured bool
}

// unmeasured reports whether st's Remaining and ResetAfter measure nothing
// of its key's use: no store decided it (sluice.Status.Unavailable: a
// failover's allow or deny while its store cannot be reached;
// sluice.Status.Undecided: an over-limit cache refused the request by
// another limit's remembered refusal, without asking the store), or the
// store refused it for want of room to keep its state
// (sluice.Status.NoRoom), counting nothing. Such figures are made up, and
// the headers and the problem body leave them out.
func unmeasured(st *sluice.Status) bool { return st.Unavailable || st.NoRoom || st.Undecided }

// decidingFigures returns the figures of the limit that decided res (see
// Result.Deciding), as stated finds it, so that a refusal's t is never
// past Retry-After.
func decidingFigures(res *Result, stated *statedLimits) limitFigures {
	l, st := res.Deciding()
	f := limitFigures{Quota: quota.Of(stated.of(l)), name: l.Name(), remaining: st.Remaining, unmeasured: unmeasured(&st)}
	f.wait(st.Remaining, st.ResetAfter, st.RetryAfter)
	return f
}

// Deciding returns the limit whose figures the single-limit headers
// (draft-6, draft-7, legacy), the problem body and the decision API's
// limit, remaining and resetAfterMs state, and its status: when refused,
// the enforcing limit whose wait RetryAfter states (the violated limit the
// longest wait is owed to, a concurrency limit's counting as its poll);
// when admitted, Decision.Limit (the one with the least remaining). A
// Result whose checks do not say (one from elsewhere, or whose Statuses do
// not match its Checks) gives Decision.Limit with the Decision's figures.
// For an exempt Result it returns the zero Limit and Status.
func (res *Result) Deciding() (sluice.Limit, sluice.Status) {
	d := &res.Decision
	if i := decidingCheck(res); i >= 0 {
		return res.Checks[i].Limit, d.Statuses[i]
	}
	return d.Limit, sluice.Status{Allowed: d.Allowed, Remaining: d.Remaining, ResetAfter: d.ResetAfter,
		RetryAfter: d.RetryAfter, Delay: d.Delay}
}

// decidingCheck returns the index of the check Deciding tells, or -1 when
// res's checks do not say: refusingCheck's when refused, else the
// enforcing check of Decision.Limit's name (names are unique among a
// request's limits).
func decidingCheck(res *Result) int {
	d := &res.Decision
	if !d.Allowed {
		return refusingCheck(res)
	}
	if len(d.Statuses) != len(res.Checks) {
		return -1
	}
	for i := range res.Checks {
		if l := res.Checks[i].Limit; !l.Shadow() && l.Name() == d.Limit.Name() {
			return i
		}
	}
	return -1
}

// concurrencyPoll is the wait a refusal states for a concurrency limit: a
// slot frees when one of the client's requests ends, which no clock
// predicts (its lease's expiry is only the latest it can), so a refused
// client is told to poll.
const concurrencyPoll = time.Second

// refusingCheck returns the index of the check whose figures the refusal
// of res states, or -1 when res is admitted or its checks do not say: of
// the enforcing checks that refused, the one with the longest refusalWait
// (the first of equals), so that Retry-After is when every violated limit
// admits the request if nothing else arrives.
func refusingCheck(res *Result) int {
	d := &res.Decision
	if d.Allowed || len(d.Statuses) != len(res.Checks) {
		return -1
	}
	best := -1
	for i := range res.Checks {
		if d.Statuses[i].Allowed || res.Checks[i].Limit.Shadow() {
			continue
		}
		if best < 0 || refusalWait(res, i) > refusalWait(res, best) {
			best = i
		}
	}
	return best
}

// RetryAfter returns the wait res's refusal states, exact: the figure that
// Retry-After and the problem body's retryAfter round up to whole seconds.
// It is the longest wait of the enforcing limits that refused, counting a
// refused AlgorithmConcurrency limit as a one-second poll (a slot frees
// when one of the client's requests ends, which no clock predicts; its
// lease's expiry is only the latest it can) unless the request costs more
// than the limit's quantity, and includes
// Options.RetryJitter when set. It is 0 when res was admitted or is
// exempt, and sluice.Never when no wait will admit the request (its cost
// exceeds a limit's capacity).
func (res *Result) RetryAfter() time.Duration {
	d := &res.Decision
	if res.Exempt || d.Allowed {
		return 0
	}
	if i := refusingCheck(res); i >= 0 {
		return refusalWait(res, i)
	}
	return d.RetryAfter
}

// refusalWait is the wait the refusal of check i of res states: its
// RetryAfter, or concurrencyPoll for a concurrency limit whose slots can
// ever hold the request. sluice.Never stays Never: a cost above a
// concurrency limit's quantity frees no slot by waiting.
func refusalWait(res *Result, i int) time.Duration {
	wait := res.Decision.Statuses[i].RetryAfter
	if wait != sluice.Never && res.Checks[i].Limit.Algorithm() == sluice.AlgorithmConcurrency {
		return concurrencyPoll
	}
	return wait
}

// wait sets f's t and until from a status's figures (see quota.Quota.Until).
func (f *limitFigures) wait(remaining int64, reset, retry time.Duration) {
	f.until = f.Until(remaining, reset, retry)
	f.t = f.Seconds(remaining, reset, retry)
}

// resetAt returns when, from now, more is available, rounded up to whole
// seconds (X-RateLimit-Reset, the body's resetsAt): now + the exact wait,
// rounded once, and so never past now + t.
func (f *limitFigures) resetAt(now time.Time) time.Time {
	at := now.Add(min(f.until, time.Duration(f.t)*time.Second))
	if s := at.Truncate(time.Second); s.Before(at) {
		return s.Add(time.Second)
	}
	return at
}

// appendDraft7 appends the draft-7 RateLimit value, an sf-dictionary:
//
//	limit=100, remaining=42, reset=18
func appendDraft7(buf []byte, limit, remaining, reset int64) []byte {
	buf = append(buf, "limit="...)
	buf = strconv.AppendInt(buf, limit, 10)
	buf = append(buf, ", remaining="...)
	buf = strconv.AppendInt(buf, remaining, 10)
	buf = append(buf, ", reset="...)
	return strconv.AppendInt(buf, reset, 10)
}

// appendSFString appends s as an RFC 8941 sf-string: quoted, with \ and "
// escaped. Limit names are sluice.ValidName tokens, which need no escaping;
// a byte outside printable ASCII (which an sf-string cannot hold, and a
// valid name never has) is written as it is.
func appendSFString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' {
			buf = append(buf, '\\', c)
		} else {
			buf = append(buf, c)
		}
	}
	return append(buf, '"')
}
