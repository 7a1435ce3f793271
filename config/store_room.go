package config

import (
	"fmt"

	"github.com/sluice-dev/sluice"
)

// logRoomFactor is how many units of store.max_keys a memory store needs
// per unit of quantity of a sliding log or concurrency limit, so that one
// client's log at its limit takes at most half the store's share of a
// shard: its array holds up to twice its entries, 8 entries a unit, and
// the store keeps max_keys/256 units a shard (see memory.WithMaxKeys).
const logRoomFactor = 128

// LogRoomWarning returns what the server logs, and sluice check prints, of
// a memory store too small for the longest sliding log or concurrency
// limit of c: store.max_keys below 128 times its quantity, where a client's
// log near its limit may be refused for want of room (evictions never free
// a state its limit refuses) before its limit refuses it. It returns ""
// when the store is large enough, or is Redis (its memory is Redis's).
func (c *Config) LogRoomWarning() string {
	if c.Store.Type == "redis" {
		return ""
	}
	var (
		most  int64
		which string
	)
	note := func(owner string, l sluice.Limit) {
		if l.Algorithm() != sluice.AlgorithmSlidingLog && l.Algorithm() != sluice.AlgorithmConcurrency {
			return
		}
		// Of equal quantities the first by name: keys come in map order.
		if q, name := l.Quantity(), l.Name()+" of "+owner; q > most || q == most && name < which {
			most, which = q, name
		}
	}
	if c.Policy != nil {
		for _, p := range c.Policy.Plans {
			for _, l := range p.Limits {
				note("plan "+p.Name, l)
			}
		}
		for _, l := range c.Policy.Global {
			note("the global limits", l)
		}
	}
	for _, r := range c.Rules {
		for _, l := range r.Limits {
			note("rule "+r.Name, l)
		}
	}
	for _, k := range c.Keys {
		if k.Plan != nil {
			for _, l := range k.Plan.Limits {
				note("key "+k.Name, l)
			}
		}
	}
	if c.Penalty.Refusals > 0 {
		note("the penalty box", sluice.SlidingLog(c.Penalty.Refusals, c.Penalty.Within).Named("refusals"))
	}
	// A quantity is at most sluice.MaxQuantity (2^40): the product fits.
	need := most * logRoomFactor
	if most == 0 || need <= int64(c.Store.MaxKeys) {
		return ""
	}
	return fmt.Sprintf("store.max_keys (%d) is less than %d times the quantity of the longest sliding log or concurrency limit, %s (%d): a client's log near its limit takes more than half of its shard of the memory store, and may be refused for want of room (sluice_memory_no_room_total) before its limit refuses it; set store.max_keys to at least %d, or count with a sliding-window counter",
		c.Store.MaxKeys, logRoomFactor, which, most, need)
}
