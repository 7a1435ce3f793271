package memory

import (
	"time"

	"github.com/sluice-dev/sluice"
)

// maxResetsPerShard bounds the resets a shard remembers (see resetRecord):
// past it, those over drop first, then any one.
const maxResetsPerShard = 256

// resetID names one state a shard may hold: its key's hash and its
// limit's number (limitRef.ref).
type resetID struct {
	h   hash
	ref uint32
}

// resetRecord is when Reset forgot a state of a fixed window or sliding
// counter (µs since sluice.Epoch, by the exact clock), and until when a
// refund of a receipt given before it could still change the state that
// came after (two windows, and a second more).
type resetRecord struct {
	at, until int64
}

// noteReset remembers that h's state of lr was reset at now, for limit
// l, when refunds can reach its algorithm's state (fixed windows and
// sliding counters: a sliding log's receipt names its entry, which a
// fresh log does not hold); the caller holds sh.mu.
func (sh *shard) noteReset(h hash, lr *limitRef, l *sluice.Limit, now int64) {
	switch l.Algorithm() {
	case sluice.AlgorithmFixedWindow, sluice.AlgorithmSlidingCounter:
	default:
		return
	}
	if sh.resets == nil {
		sh.resets = map[resetID]resetRecord{}
	}
	if len(sh.resets) >= maxResetsPerShard {
		for id, r := range sh.resets {
			if r.until <= now {
				delete(sh.resets, id)
			}
		}
		for id := range sh.resets {
			if len(sh.resets) < maxResetsPerShard {
				break
			}
			delete(sh.resets, id)
		}
	}
	life := 2*int64(l.Window()/time.Microsecond) + int64(time.Second/time.Microsecond)
	sh.resets[resetID{h, lr.ref}] = resetRecord{at: now, until: now + life}
}

// resetAt returns when h's state of lr was last reset, if the shard still
// remembers it at now, else 0; the caller holds sh.mu.
func (sh *shard) resetAt(h hash, lr *limitRef, now int64) int64 {
	r, ok := sh.resets[resetID{h, lr.ref}]
	if !ok {
		return 0
	}
	if r.until <= now {
		delete(sh.resets, resetID{h, lr.ref})
		return 0
	}
	return r.at
}
