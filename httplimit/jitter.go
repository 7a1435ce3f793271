package httplimit

import (
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/quota"
)

// MaxRetryJitter is the largest Options.RetryJitter.
const MaxRetryJitter = time.Hour

// spread adds its client's jitter (Options.RetryJitter) to what res tells
// a client that has nothing left of a limit: the decision's RetryAfter when
// refused, and the ResetAfter and RetryAfter of every limit with nothing
// remaining or that refused, so that the RateLimit t, Retry-After and the
// body's retryAfter and resetsAt move together. The jitter is whole seconds
// in [0, span], span being RetryJitter or a tenth of the window (the
// policy's w) of the limit whose wait the client is told (see toldWait),
// whichever is shorter: a wait of 30 s on a daily quota, none on a
// per-second limit (a tenth of a second rounds to none). It is a hash of
// the client's subject and the second it would otherwise be told to come
// back at, so clients refused together come back spread over the span,
// and one client asking twice is told the same. Nothing changes for an
// admitted request with some of every limit left, a request no wait will
// admit (RetryAfter sluice.Never), or a wait that is a concurrency limit's
// (w 0).
func (m *Middleware) spread(res *Result) {
	d := &res.Decision
	if m.jitter <= 0 || d.Allowed && d.Remaining > 0 {
		return
	}
	l, back, ok := toldWait(res)
	if !ok || back == sluice.Never {
		return
	}
	span := min(m.jitter, time.Duration(quota.Of(m.stated.of(l)).W)*time.Second/10) / time.Second
	if span <= 0 {
		return
	}
	at := res.Now.Add(back).Unix()
	j := time.Duration(quota.ComebackHash(res.Identity.Subject, at)%uint64(span+1)) * time.Second
	if j == 0 {
		return
	}
	for i := range d.Statuses {
		if st := &d.Statuses[i]; !st.Allowed || st.Remaining == 0 {
			st.ResetAfter, st.RetryAfter = later(st.ResetAfter, j), later(st.RetryAfter, j)
		}
	}
	d.ResetAfter, d.RetryAfter = later(d.ResetAfter, j), later(d.RetryAfter, j)
}

// toldWait returns the limit whose wait res tells its client, and that
// wait: when refused, the refusal's (see refusingCheck: Retry-After's);
// when admitted, the ResetAfter of the enforcing limit with nothing left
// that resets last. A concurrency limit tells no wait a clock predicts
// (its RetryAfter and ResetAfter are its leases' expiry, which a refusal
// states as a poll), so it is never the one: ok is false when the wait
// told is a concurrency limit's, or when no limit is exhausted.
func toldWait(res *Result) (l sluice.Limit, wait time.Duration, ok bool) {
	d := &res.Decision
	if len(d.Statuses) != len(res.Checks) { // not checks of this package: the decision's own
		wait = d.RetryAfter
		if d.Allowed {
			wait = d.ResetAfter
		}
		return d.Limit, wait, d.Limit.Algorithm() != sluice.AlgorithmConcurrency
	}
	if !d.Allowed {
		i := refusingCheck(res)
		if i < 0 || res.Checks[i].Limit.Algorithm() == sluice.AlgorithmConcurrency {
			return sluice.Limit{}, 0, false
		}
		return res.Checks[i].Limit, d.Statuses[i].RetryAfter, true
	}
	best := -1
	for i := range res.Checks {
		c, st := &res.Checks[i], &d.Statuses[i]
		if st.Remaining != 0 || c.Limit.Shadow() || c.Limit.Algorithm() == sluice.AlgorithmConcurrency {
			continue
		}
		if best < 0 || st.ResetAfter > d.Statuses[best].ResetAfter {
			best = i
		}
	}
	if best < 0 {
		return sluice.Limit{}, 0, false
	}
	return res.Checks[best].Limit, d.Statuses[best].ResetAfter, true
}

// later returns wait + j for a wait to come (0 < wait < sluice.Never),
// saturated below sluice.Never; wait itself otherwise.
func later(wait, j time.Duration) time.Duration {
	if wait <= 0 || wait == sluice.Never {
		return wait
	}
	return min(wait, sluice.Never-1-j) + j
}
