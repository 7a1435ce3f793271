package sim

import (
	"fmt"
	"math"
	"time"
)

// A RetryPolicy says what a client does when it is refused. The zero
// RetryPolicy never retries.
//
// A refused client retries up to Max times. Each time it is impatient with
// probability Impatient and retries after Gap ("at once", a round trip
// later); otherwise it honours the refusal's RetryAfter exactly as the
// algorithm computed it (to the microsecond: an HTTP server rounds it up to
// whole seconds, which only makes clients wait longer). A refusal that no
// wait can cure (RetryAfter = sluice.Never) ends the client's attempts, and
// so does a retry that would fall at or after the trace's end.
type RetryPolicy struct {
	// Max is the most retries per original request; 0 disables retries.
	Max int `json:"max"`
	// Impatient is the probability in [0, 1] that one retry ignores
	// RetryAfter and comes after Gap instead.
	Impatient float64 `json:"impatient"`
	// Gap is how soon an impatient client retries; 0 means the same
	// microsecond.
	Gap Duration `json:"gap"`
}

// DefaultRetryStorm returns the retry-storm pattern's default policy: up to
// 5 retries, half of them at once (10ms later), half after RetryAfter.
func DefaultRetryStorm() RetryPolicy {
	return RetryPolicy{Max: 5, Impatient: 0.5, Gap: Duration(10 * time.Millisecond)}
}

func (p RetryPolicy) validate() error {
	switch {
	case p.Max < 0 || p.Max > 100:
		return fmt.Errorf("retry: max %d must be in [0, 100]", p.Max)
	case !(p.Impatient >= 0 && p.Impatient <= 1):
		return fmt.Errorf("retry: impatient %v must be a probability in [0, 1]", p.Impatient)
	case p.Gap < 0 || math.IsNaN(float64(p.Gap)):
		return fmt.Errorf("retry: gap %v must be ≥ 0", p.Gap)
	}
	return nil
}

// retry is one pending retry.
type retry struct {
	at      int64 // µs since Epoch
	seq     int64 // creation order: ties at the same µs keep it
	cost    int64
	key     int32
	attempt int32 // retries sent so far for the original request, this one included
}

// retryQueue is a min-heap of pending retries ordered by (at, seq).
type retryQueue []retry

func (q retryQueue) less(i, j int) bool {
	return q[i].at < q[j].at || q[i].at == q[j].at && q[i].seq < q[j].seq
}

func (q *retryQueue) push(r retry) {
	*q = append(*q, r)
	h := *q
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (q *retryQueue) pop() retry {
	h := *q
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h) && h.less(l, m) {
			m = l
		}
		if r < len(h) && h.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	*q = h
	return top
}
