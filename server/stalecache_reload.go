package server

import "slices"

// keptStale returns the stale cache next is to serve: prev's, copies and
// all, when next proxies to the same upstream as prev, sends it the same
// Host, and keeps copies as prev's cache does (for as long, under the same
// request headers, without the same response fields); else next's own,
// empty. A reload at level 2 then keeps answering reads with the copies
// recorded before it.
func keptStale(prev, next *state) *staleCache {
	p, n := prev.stale, next.stale
	if p == nil || n == nil || prev.cfg.Upstream != next.cfg.Upstream || prev.cfg.PreserveHost != next.cfg.PreserveHost ||
		p.ttl != n.ttl || !slices.Equal(p.headers, n.headers) || !slices.Equal(p.dropped, n.dropped) {
		return n
	}
	return p
}
