package httplimit

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/dunglas/httpsfv"

	"github.com/sluice-dev/sluice"
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
	ModeDraft7 = "draft-7"
	// ModeDraft6 is draft 6: RateLimit-Limit, RateLimit-Remaining,
	// RateLimit-Reset (delta seconds) and RateLimit-Policy as in draft 7.
	ModeDraft6 = "draft-6"
	// ModeLegacy is X-RateLimit-Limit, X-RateLimit-Remaining and
	// X-RateLimit-Reset (Unix seconds), as GitHub sends them.
	ModeLegacy = "legacy"
)

// policyHeaders are the RateLimit-Policy values of one plan, which do not
// change between requests: computed once, shared read-only (full-capacity
// slices, so that a handler appending to the header copies instead of
// writing into them).
type policyHeaders struct {
	ietf, draft []string
}

func newPolicyHeaders(limits []sluice.Limit) (policyHeaders, error) {
	var ietf, draft httpsfv.List
	for _, l := range limits {
		it := httpsfv.NewItem(l.Name())
		it.Params.Add("q", l.Quantity())
		if l.Algorithm() == sluice.AlgorithmConcurrency {
			it.Params.Add("qu", "concurrent-requests") // no window: a lease time is not one
		} else if w, ok := wholeSeconds(l.Window()); ok {
			it.Params.Add("w", w)
		}
		ietf = append(ietf, it)
		d := httpsfv.NewItem(l.Quantity())
		if w, ok := wholeSeconds(l.Window()); ok && l.Algorithm() != sluice.AlgorithmConcurrency {
			d.Params.Add("w", w)
		}
		draft = append(draft, d)
	}
	a, err := httpsfv.Marshal(ietf)
	if err != nil {
		return policyHeaders{}, fmt.Errorf("RateLimit-Policy: %w", err)
	}
	b, err := httpsfv.Marshal(draft)
	if err != nil {
		return policyHeaders{}, fmt.Errorf("RateLimit-Policy: %w", err)
	}
	return policyHeaders{ietf: []string{a}[:1:1], draft: []string{b}[:1:1]}, nil
}

func wholeSeconds(d time.Duration) (int64, bool) {
	return int64(d / time.Second), d%time.Second == 0
}

// ceilSeconds rounds d up to whole seconds.
func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	if d >= sluice.Never-time.Second {
		return int64(sluice.Never / time.Second)
	}
	return int64((d + time.Second - 1) / time.Second)
}

// writeHeaders sets the RateLimit headers of res in every configured mode.
func (m *Middleware) writeHeaders(h http.Header, res *Result) {
	d := &res.Decision
	ph := m.policies[res.Identity.Plan]
	for _, mode := range m.modes {
		switch mode {
		case ModeIETF:
			h["Ratelimit-Policy"] = ph.ietf
			buf := make([]byte, 0, 32*len(res.Checks))
			for i := range res.Checks {
				if i > 0 {
					buf = append(buf, ", "...)
				}
				st := &d.Statuses[i]
				buf = append(buf, '"')
				buf = append(buf, res.Checks[i].Limit.Name()...)
				buf = append(buf, `";r=`...)
				buf = strconv.AppendInt(buf, st.Remaining, 10)
				buf = append(buf, ";t="...)
				buf = strconv.AppendInt(buf, ceilSeconds(st.ResetAfter), 10)
			}
			h["Ratelimit"] = []string{string(buf)}
		case ModeDraft7:
			h["Ratelimit-Policy"] = ph.draft
			buf := make([]byte, 0, 48)
			buf = append(buf, "limit="...)
			buf = strconv.AppendInt(buf, d.Limit.Burst(), 10)
			buf = append(buf, ", remaining="...)
			buf = strconv.AppendInt(buf, d.Remaining, 10)
			buf = append(buf, ", reset="...)
			buf = strconv.AppendInt(buf, ceilSeconds(d.ResetAfter), 10)
			h["Ratelimit"] = []string{string(buf)}
		case ModeDraft6:
			h["Ratelimit-Policy"] = ph.draft
			h["Ratelimit-Limit"] = []string{strconv.FormatInt(d.Limit.Burst(), 10)}
			h["Ratelimit-Remaining"] = []string{strconv.FormatInt(d.Remaining, 10)}
			h["Ratelimit-Reset"] = []string{strconv.FormatInt(ceilSeconds(d.ResetAfter), 10)}
		case ModeLegacy:
			h["X-Ratelimit-Limit"] = []string{strconv.FormatInt(d.Limit.Burst(), 10)}
			h["X-Ratelimit-Remaining"] = []string{strconv.FormatInt(d.Remaining, 10)}
			reset := res.Now.Add(time.Duration(ceilSeconds(d.ResetAfter)) * time.Second)
			h["X-Ratelimit-Reset"] = []string{strconv.FormatInt(ceilUnix(reset), 10)}
		}
	}
}

func ceilUnix(t time.Time) int64 {
	s := t.Unix()
	if t.Nanosecond() > 0 {
		s++
	}
	return s
}
