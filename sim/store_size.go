package sim

import (
	"fmt"
	"strings"
)

// Bounds of the memory store's max_keys, as the configuration reads it.
const (
	// defaultMaxKeys is what the memory store holds when max_keys is unset.
	defaultMaxKeys = 1_000_000
	// maxMaxKeys is the most max_keys the configuration accepts.
	maxMaxKeys = 1 << 32
)

// maxKeys returns the memory store's max_keys for a design that keeps
// states states at once (clients × limits), and whether it exceeds the
// default and so must be written: a quarter above states, rounded up to a
// thousand, at most 2^32.
//
// The quarter is room the store needs to keep the states it is counted to
// keep: its bound is kept per shard, over which keys hash unevenly; a
// client that left keeps its state until the state is full again (a
// per-day limit's up to a day later), so more clients hold states than
// are live at once; and a full store makes room by evicting, which gives
// the evicted client its whole quota back.
func maxKeys(states int64) (n int64, set bool) {
	n = min(states+(states+3)/4, maxMaxKeys)
	n = min((n+999)/1000*1000, maxMaxKeys)
	return n, n > defaultMaxKeys
}

// maxKeysYAML writes the memory store's max_keys line for states, when
// the default does not hold them with room to spare. The line also bounds
// the memory a Redis store decides in while Redis is down (on_store_error:
// local), which holds the states of the clients it meets meanwhile: the
// caller writes it for a memory store and for that fallback alike.
func maxKeysYAML(b *strings.Builder, states int64) {
	n, set := maxKeys(states)
	switch {
	case !set:
	case n < states+states/4:
		fmt.Fprintf(b, "  max_keys: %d   # %d states (clients × limits): the most a memory store holds, with less room than a quarter more\n", n, states)
	default:
		fmt.Fprintf(b, "  max_keys: %d   # %d states (clients × limits) and a quarter more: clients that left keep theirs until full again\n", n, states)
	}
}

// memoryHolds refuses a memory store of states states (clients × limits)
// when max_keys cannot hold them: a *fieldError of the store.
func memoryHolds(states int64) error {
	if states <= maxMaxKeys {
		return nil
	}
	return fieldErrorf("store", "memory: %d states (clients × limits) are more than a memory store holds (max_keys at most %d): use store: redis (or auto)", states, int64(maxMaxKeys))
}
