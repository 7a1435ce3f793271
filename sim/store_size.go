package sim

import (
	"fmt"
	"strings"

	"github.com/sluice-dev/sluice"
)

// Bounds of the memory store's max_keys, as the configuration reads it.
const (
	// defaultMaxKeys is what the memory store holds when max_keys is unset.
	defaultMaxKeys = 1_000_000
	// maxMaxKeys is the most max_keys the configuration accepts.
	maxMaxKeys = 1 << 32
)

// How the memory store counts a log toward max_keys (memory.WithMaxKeys).
const (
	// logUnitEntries is how many entries of a sliding log's or concurrency
	// limit's array count one unit (16 bytes an entry, 128 a unit).
	logUnitEntries = 8
	// logRoomFactor is how many units of max_keys a store needs per unit of
	// quantity of its longest log, so that one client's log at its limit
	// takes at most half of its shard (config.Config.LogRoomWarning).
	logRoomFactor = 128
)

// storeNeed is what a design's memory store holds at most: its states,
// one per client and limit, and the units they count toward max_keys.
type storeNeed struct {
	// states are the (key, limit) states: clients × limits.
	states int64
	// units are what the states count toward max_keys: one each, and for
	// a sliding log or concurrency limit one more per 8 entries of room.
	units int64
	// longestLog is the quantity of the longest sliding log or
	// concurrency limit; 0 without one.
	longestLog int64
}

// add counts keys states of rec's limit.
func (n *storeNeed) add(keys int64, rec Recommendation) {
	n.states = satAdd(n.states, keys)
	n.units = satAdd(n.units, satMul(keys, stateUnits(rec)))
	if logged(rec) {
		n.longestLog = max(n.longestLog, rec.Quantity)
	}
}

// needOf is what keys states of rec's limit need of a memory store.
func needOf(keys int64, rec Recommendation) storeNeed {
	var n storeNeed
	n.add(keys, rec)
	return n
}

// logged reports whether rec's limit keeps a log of its admissions (a
// sliding log) or leases (a concurrency limit), whose room counts toward
// max_keys.
func logged(rec Recommendation) bool {
	alg, err := sluice.ParseAlgorithm(rec.Algorithm)
	return err == nil && (alg == sluice.AlgorithmSlidingLog || alg == sluice.AlgorithmConcurrency)
}

// stateUnits returns what one state of rec's limit counts toward max_keys:
// 1, and for a sliding log or concurrency limit one more per 8 entries of
// room for twice its quantity (its window holds at most Quantity entries,
// and the store moves a log that outgrows its array to one of twice its
// entries).
func stateUnits(rec Recommendation) int64 {
	if !logged(rec) || rec.Quantity <= 0 {
		return 1
	}
	room := satMul(rec.Quantity, 2)
	return 1 + room/logUnitEntries + min(room%logUnitEntries, 1)
}

// maxKeys returns the memory store's max_keys for a design that needs
// need, and whether it exceeds the default and so must be written: a
// quarter above need's units, and at least 128 times its longest log's
// quantity, rounded up to a thousand, at most 2^32.
//
// The quarter is room the store needs to keep the states it is counted to
// keep: its bound is kept per shard, over which keys hash unevenly; a
// client that left keeps its state until the state is full again (a
// per-day limit's up to a day later), so more clients hold states than
// are live at once; and a full store makes room by evicting, which gives
// the evicted client its whole quota back. The floor keeps one client's
// log at its limit within half of its shard of the store, which would
// otherwise refuse it for room before its limit does.
func maxKeys(need storeNeed) (n int64, set bool) {
	n = min(satAdd(need.units, (need.units+3)/4), maxMaxKeys)
	n = max(n, min(satMul(need.longestLog, logRoomFactor), maxMaxKeys))
	n = min((n+999)/1000*1000, maxMaxKeys)
	return n, n > defaultMaxKeys
}

// maxKeysYAML writes the memory store's max_keys line for need, when the
// default does not hold it with room to spare. The line also bounds the
// memory a Redis store decides in while Redis is down (on_store_error:
// local), which holds the states of the clients it meets meanwhile: the
// caller writes it for a memory store and for that fallback alike.
func maxKeysYAML(b *strings.Builder, need storeNeed) {
	n, set := maxKeys(need)
	counted := fmt.Sprintf("%d states (clients × limits)", need.states)
	if need.units > need.states {
		counted += fmt.Sprintf(", %d units with the room of their logs", need.units)
	}
	switch {
	case !set:
	case n < satAdd(need.units, need.units/4):
		fmt.Fprintf(b, "  max_keys: %d   # %s: the most a memory store holds, with less room than a quarter more\n", n, counted)
	case satAdd(need.units, (need.units+3)/4) < satMul(need.longestLog, logRoomFactor):
		fmt.Fprintf(b, "  max_keys: %d   # %s; %d times the longest log's quantity, %d, so that one client's log at its limit takes at most half of its shard\n", n, counted, logRoomFactor, need.longestLog)
	default:
		fmt.Fprintf(b, "  max_keys: %d   # %s and a quarter more: clients that left keep theirs until full again\n", n, counted)
	}
}

// memoryHolds refuses a memory store that need does not fit in (max_keys
// at most 2^32 units): a *fieldError of the store.
func memoryHolds(need storeNeed) error {
	if need.units <= maxMaxKeys {
		return nil
	}
	if need.units > need.states {
		return fieldErrorf("store", "memory: %d states (clients × limits), %d units with the room of their logs, are more than a memory store holds (max_keys at most %d): use store: redis (or auto)", need.states, need.units, int64(maxMaxKeys))
	}
	return fieldErrorf("store", "memory: %d states (clients × limits) are more than a memory store holds (max_keys at most %d): use store: redis (or auto)", need.states, int64(maxMaxKeys))
}
