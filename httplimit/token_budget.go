package httplimit

import (
	"hash/maphash"
	"sync"
)

// Bounds of the verifications that tokens which do not verify may cost.
const (
	// maxRefusedTokens is how many tokens from one client address the
	// verifier may refuse within refusedTokenMemory before the address's
	// new tokens are no longer verified.
	maxRefusedTokens = 16
	// refusalSlots is how many addresses the budget remembers at once.
	refusalSlots = 1 << 12
	// maxRefusedTokensAll is how many tokens from all addresses together
	// the verifier may refuse within refusedTokenMemory before no new
	// token is verified: forged tokens from many addresses (a botnet, each
	// within its own budget) cost at most 2,000 verifications a second.
	maxRefusedTokensAll = 20_000
)

// refusalBudget bounds what tokens that do not verify cost: once the
// verifier has refused maxRefusedTokens tokens from one client address
// (grouped as identity groups addresses) within refusedTokenMemory of the
// first of them, the address's tokens it has not verified before are not
// sent to it until that time has passed: they name no one, and the client
// is its address. A client sending a new forged token with every request
// so costs at most maxRefusedTokens verifications every refusedTokenMemory;
// a client of that address with a valid token it has not shown before is
// limited by its address meanwhile.
//
// It remembers refusalSlots addresses, each in the slot of a seeded hash
// of it: a new address takes its slot over, so that no address can spend
// another's budget. The refusals of all addresses together are bounded
// too, by maxRefusedTokensAll within refusedTokenMemory: forged tokens from
// more addresses than that, each within its own budget, stop being
// verified (they name no one) until the time has passed, which bounds the
// CPU a botnet of forgers costs. It is safe for concurrent use.
type refusalBudget struct {
	seed  maphash.Seed
	slots []refusalSlot
	// all counts the refusals of every address, against
	// maxRefusedTokensAll: a token not verified before is not sent to the
	// verifier while it is spent.
	all refusalSlot
}

// refusalSlot is the budget of the address whose hash is addr.
type refusalSlot struct {
	mu    sync.Mutex
	addr  uint64 // the seeded hash of the address; 0: none
	since int64  // when the first refusal counted was, in µs since the Unix epoch
	n     int    // refusals counted since then
}

func newRefusalBudget() *refusalBudget {
	return &refusalBudget{seed: maphash.MakeSeed(), slots: make([]refusalSlot, refusalSlots)}
}

// slot returns the slot of addr and addr's hash (never 0).
func (b *refusalBudget) slot(addr string) (*refusalSlot, uint64) {
	h := maphash.String(b.seed, addr) | 1
	return &b.slots[h%refusalSlots], h
}

// spent reports whether addr may have no more tokens verified at now (µs
// since the Unix epoch): its own budget is spent, or that of every
// address together.
func (b *refusalBudget) spent(addr string, now int64) bool {
	if b.all.spent(1, now, maxRefusedTokensAll) {
		return true
	}
	s, h := b.slot(addr)
	return s.spent(h, now, maxRefusedTokens)
}

// refused counts a token of addr the verifier refused at now.
func (b *refusalBudget) refused(addr string, now int64) {
	b.all.refused(1, now)
	s, h := b.slot(addr)
	s.refused(h, now)
}

// spent reports whether the slot holds limit refusals of the address
// whose hash is h within refusedTokenMemory before now.
func (s *refusalSlot) spent(h uint64, now int64, limit int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr == h && now-s.since < refusedTokenMemory.Microseconds() && s.n >= limit
}

// refused counts a refusal of the address whose hash is h at now, the slot
// taken over by it or started afresh once refusedTokenMemory has passed.
func (s *refusalSlot) refused(h uint64, now int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.addr != h || now-s.since >= refusedTokenMemory.Microseconds() {
		s.addr, s.since, s.n = h, now, 0
	}
	s.n++
}
