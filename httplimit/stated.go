package httplimit

import (
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/leasehold"
)

// statedLimits are the limits the middleware states in place of the
// configured ones: for each bucket the store leases (Options.StoreLeases),
// the limit its shared state decides every check by (leasehold.Of), whose
// burst is what the bucket admits at once. They are found while New builds
// the middleware and only read afterwards.
type statedLimits struct {
	// leased reports whether the store leases the limit of an ID; nil
	// when the store leases nothing.
	leased func(id string) bool
	maxAge time.Duration
	shared map[sluice.Limit]sluice.Limit
}

// newStatedLimits returns the stated limits of o, empty without
// StoreLeases.
func newStatedLimits(o *Options) statedLimits {
	var s statedLimits
	if !o.StoreLeases {
		return s
	}
	s.leased, s.maxAge = o.StoreLeased, o.StoreLeaseMaxAge
	if s.leased == nil {
		s.leased = func(string) bool { return true }
	}
	if s.maxAge <= 0 {
		s.maxAge = leasehold.DefaultMaxAge
	}
	return s
}

// add returns the limit stated for l, remembering it: l's shared limit
// when the store leases l as a bucket, else l. It is for New alone.
func (s *statedLimits) add(l sluice.Limit) sluice.Limit {
	if s.leased == nil || l.Err() != nil || !s.leased(l.ID()) {
		return l
	}
	shared, _, ok := leasehold.Of(l, s.maxAge)
	if !ok {
		return l
	}
	if s.shared == nil {
		s.shared = map[sluice.Limit]sluice.Limit{}
	}
	s.shared[l] = shared
	return shared
}

// of returns the limit stated for l, as add found it; l itself for a
// limit the middleware was not built with, or when s is nil.
func (s *statedLimits) of(l sluice.Limit) sluice.Limit {
	if s == nil || len(s.shared) == 0 {
		return l
	}
	if shared, ok := s.shared[l]; ok {
		return shared
	}
	return l
}

// Stated returns the limit whose figures m states for l, one of the limits
// m was built with: l, unless the store leases l as a bucket
// (Options.StoreLeases), whose shared state then decides every check by
// l's rate with a burst less what refills in a lease's life (redis, Leased
// quota); that limit is returned, and its burst is the most l admits at
// once. The RateLimit headers' q and w, the problem body and Inspect state
// it; so should any other account of l's size given to clients. It
// allocates nothing.
func (m *Middleware) Stated(l sluice.Limit) sluice.Limit { return m.stated.of(l) }
