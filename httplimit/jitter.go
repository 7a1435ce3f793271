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
// in [0, span], span being RetryJitter or a tenth of the deciding limit's
// window (the policy's w), whichever is shorter: a wait of 30 s on a daily
// quota, none on a per-second limit (a tenth of a second rounds to none). It
// is a hash of the client's subject and the second it would otherwise be
// told to come back at, so clients refused together come back spread over
// the span, and one client asking twice is told the same. Nothing changes
// for an admitted request with some of every limit left, a request no
// wait will admit (RetryAfter sluice.Never), or a concurrency limit (w 0).
func (m *Middleware) spread(res *Result) {
	d := &res.Decision
	if m.jitter <= 0 || d.Allowed && d.Remaining > 0 || d.RetryAfter == sluice.Never {
		return
	}
	span := min(m.jitter, time.Duration(quota.Of(d.Limit).W)*time.Second/10) / time.Second
	if span <= 0 {
		return
	}
	back := d.RetryAfter
	if d.Allowed {
		back = d.ResetAfter
	}
	at := res.Now.Add(back).Unix()
	j := time.Duration(jitterHash(res.Identity.Subject, at)%uint64(span+1)) * time.Second
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

// later returns wait + j for a wait to come (0 < wait < sluice.Never),
// saturated below sluice.Never; wait itself otherwise.
func later(wait, j time.Duration) time.Duration {
	if wait <= 0 || wait == sluice.Never {
		return wait
	}
	return min(wait, sluice.Never-1-j) + j
}

// jitterHash mixes subject and at (FNV-1a, then a 64-bit finalizer so that
// its low bits, which the span's modulus keeps, depend on all of them).
func jitterHash(subject string, at int64) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(subject); i++ {
		h = (h ^ uint64(subject[i])) * 1099511628211
	}
	for i := 0; i < 8; i++ {
		h = (h ^ uint64(byte(at>>(8*i)))) * 1099511628211
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	return h ^ h>>33
}
