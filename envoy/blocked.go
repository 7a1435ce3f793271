package envoy

import (
	"strconv"
	"time"

	"github.com/sluice-dev/sluice"
)

// A requests_per_unit 0 rule (blocked) has no limit of its own, but
// envoyproxy/ratelimit keeps a counter for it all the same: a hit makes
// the counter of its window at least 1, over the limit of 0, so that even
// a peek (hits_addend 0) is OVER_LIMIT until the window ends, while a peek
// at a window no request hit adds 0 to 0 and is OK. sluice records a hit
// as it records a fixed window that went over (see settle.go): one unit
// of a fixed window of one per unit, under the descriptor's key and
// overKey, which every descriptor of the rule peeks at.

// blockedRecord returns the limit of blocked rule r's record of hits, and
// the suffix of its key, for the Unix second unix: a fixed window of 1 per
// r's unit, named r's label, counted in the Unix window of unix (for a
// week, month or year, as calendarAt counts one) or, when no sluice window
// holds that, in sluice's own windows. Its state ID, r.overID, is that of
// the over-limit record of a fixed window of r's unit on the same key (see
// recordID), as envoyproxy/ratelimit counts a block list's hits in the
// counter that a limit of that unit counts in.
func (r *rule) blockedRecord(unix int64) (sluice.Limit, string) {
	u := r.unitSeconds
	l := sluice.FixedWindow(1, time.Duration(u)*time.Second).Named(r.label).WithID(r.overID).WithShadow(r.shadow)
	if u <= 0 || epochUnix()%u == 0 {
		return l, ""
	}
	n := floorDiv(unix, u)
	if length, ok := alignedLength(n*u, u); ok {
		if cl := sluice.FixedWindow(1, length).Named(r.label).WithID(r.overID).WithShadow(r.shadow); cl.Err() == nil {
			return cl, ":w" + strconv.FormatInt(n, 10)
		}
	}
	return l, ""
}

// hit reports whether slot s, of a blocked rule, is over its limit: it was
// hit (a cost above 0), an identical descriptor before it in the request
// was, or its peek found its window hit.
func (p *plan) hit(s slot, d *sluice.Decision) bool {
	return s.cost > 0 || s.hitBefore || s.over >= 0 && s.over < len(d.Statuses) && d.Statuses[s.over].Remaining == 0
}
