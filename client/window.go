package client

import (
	"math"
	"net/http"
	"time"

	"github.com/sluice-dev/sluice/internal/algo"
)

// A server may state a policy in RateLimit-Policy without saying in
// RateLimit what remains of it: the draft allows policies alone, and lets
// an answer name in RateLimit only some of the policies it states (the
// one nearest exhaustion, say). Of such a policy, q units per w seconds,
// the client knows only the most it may send, and it keeps to it on its
// own count: at most q units in any span of w, a sliding window of what it
// sent. Every fixed window, sliding log and token bucket of q per w (a
// bucket of capacity q refilled at q/w) admits all such sends, so a client
// alone on the quota never meets the 429 the policy announced.
//
// A unit is counted where the server may have counted it: at any time
// from its send to its answer. So a unit is in the window while its
// request is in flight, and leaves it w after its answer arrived (or its
// attempt failed), never sooner, however long the request took. The
// answered units are counted in 64 slots of w/64 (a unit leaves the
// window up to w/64 late, never early), so a window takes the same memory
// for a quota of 10 a second as for a million a day: some 1.1 KiB.
//
// Every policy whose q and w an answer states has a window from then on
// (see remembered): it is what keeps a policy that answers omit, and one
// whose RateLimit item no answer ever gives, to what it announced.

// windowSlots is how many slots a window is counted in.
const windowSlots = 64

// statedPolicy is a policy of RateLimit-Policy that no RateLimit item of
// the same response names: q units per w, counting content bytes when
// bytes.
type statedPolicy struct {
	name  string
	q     int64
	w     time.Duration
	bytes bool
}

// policiesAlone returns the policies of h's RateLimit-Policy, counting
// requests or content bytes per a window, that are not in named (the
// policies its RateLimit states).
func policiesAlone(h http.Header, named map[string]bool) []statedPolicy {
	if len(fieldValues(h, "Ratelimit-Policy")) == 0 {
		return nil
	}
	var out []statedPolicy
	for name, p := range ietfPolicies(h) {
		if named[name] || p.q <= 0 || !(p.w > 0) || p.unit != UnitRequests && p.unit != UnitContentBytes {
			continue
		}
		out = append(out, statedPolicy{name: name, q: p.q, w: p.window(), bytes: p.unit == UnitContentBytes})
	}
	return out
}

// window counts the units answered under one policy, by when their
// answers arrived; the units in flight are the host's (see admits).
type window struct {
	statedPolicy
	since time.Time // when it began counting
	width int64     // nanoseconds a slot spans: ⌈w/windowSlots⌉
	// answered counts the units answered, by when their answers arrived;
	// admitted those the server admitted, by when they were sent (see
	// full); total every unit answered since it began counting.
	answered, admitted slots
	total              int64
}

// slots counts units in the slots of a window: the slots of index
// head − len(n) + 1 to head (nanoseconds since the Unix epoch divided by
// the window's width), slot k's in n[k mod len(n)]. Older slots have
// left the window: the units of a slot w after it end leave it, and
// len(n) slots span more than w.
type slots struct {
	n    [windowSlots + 2]int64
	head int64
}

// tag is the index of the slot whose units n[i] holds.
func (s *slots) tag(i int) int64 {
	l := int64(len(s.n))
	return s.head - ((s.head-int64(i))%l+l)%l
}

// add counts cost units in slot k. A slot older than those held has left
// the window: it is not counted.
func (s *slots) add(k, cost int64) {
	l := int64(len(s.n))
	switch {
	case k < 0 || k <= s.head-l:
		return
	case k > s.head && k-s.head >= l:
		clear(s.n[:])
		s.head = k
	case k > s.head:
		for j := s.head + 1; j <= k; j++ {
			s.n[j%l] = 0
		}
		s.head = k
	}
	s.n[k%l] = algo.AddSat(s.n[k%l], cost)
}

// newWindow returns an empty window of p that begins counting at since.
func newWindow(p statedPolicy, since time.Time) *window {
	return &window{statedPolicy: p, since: since, width: max((int64(p.w)+windowSlots-1)/windowSlots, 1)}
}

// expires returns when the units of slot k leave the window: w after the
// slot ends, in nanoseconds since the Unix epoch.
func (w *window) expires(k int64) int64 {
	return algo.AddSat(algo.AddSat(k, 1)*w.width, int64(w.w))
}

// admits reports whether cost more units may be sent at now, beside
// inFlight units sent and not yet answered, or else when they may (the
// zero time: not by time alone, but when units in flight are answered). A
// cost above q counts as q: such a request waits for an empty window, then
// goes. It changes nothing.
func (w *window) admits(cost, inFlight int64, now time.Time) (bool, time.Time) {
	t, a := now.UnixNano(), &w.answered
	used := max(inFlight, 0)
	for i := range a.n {
		if a.n[i] > 0 && w.expires(a.tag(i)) > t {
			used = algo.AddSat(used, a.n[i])
		}
	}
	cost = min(cost, w.q)
	if used+cost <= w.q {
		return true, time.Time{}
	}
	// Free slots in the order they expire until cost fits.
	var at int64
	for used+cost > w.q {
		next, idx := int64(math.MaxInt64), -1
		for i := range a.n {
			if a.n[i] > 0 && w.expires(a.tag(i)) > max(t, at) && w.expires(a.tag(i)) < next {
				next, idx = w.expires(a.tag(i)), i
			}
		}
		if idx < 0 {
			break
		}
		at = next
		used -= a.n[idx]
		for i := range a.n {
			if a.n[i] > 0 && i != idx && w.expires(a.tag(i)) == next {
				used -= a.n[i]
			}
		}
	}
	if used+cost > w.q {
		return false, time.Time{} // the units in flight must be answered first
	}
	return false, time.Unix(0, at)
}

// empty reports whether no unit answered is in the window at now.
func (w *window) empty(now time.Time) bool {
	t, a := now.UnixNano(), &w.answered
	for i := range a.n {
		if a.n[i] > 0 && w.expires(a.tag(i)) > t {
			return false
		}
	}
	return true
}

// add counts cost units answered at now.
func (w *window) add(cost int64, now time.Time) {
	w.answered.add(now.UnixNano()/w.width, cost)
	w.total = algo.AddSat(w.total, max(cost, 0))
}

// addAdmitted counts cost units sent at sentAt that the server admitted.
func (w *window) addAdmitted(cost int64, sentAt time.Time) {
	w.admitted.add(sentAt.UnixNano()/w.width, cost)
}

// full reports whether a window of q per w held more than q − cost units
// of the client's when it admitted a request of cost units sent at sentAt
// and answered at at, with nothing else in flight: the units admitted that
// were sent after at − w, in slots that ended by sentAt (answered, then,
// before it), were all counted in the span of w that ended with the
// request's decision. Its admission then proves the quota is no such
// window: a bucket, or more generous.
func (w *window) full(cost int64, sentAt, at time.Time) bool {
	from, to := at.UnixNano()-int64(w.w), sentAt.UnixNano()
	var in int64
	for i := range w.admitted.n {
		k := w.admitted.tag(i)
		if w.admitted.n[i] > 0 && k*w.width > from && algo.AddSat(k, 1)*w.width <= to {
			in = algo.AddSat(in, w.admitted.n[i])
		}
	}
	return algo.AddSat(in, cost) > w.q
}
