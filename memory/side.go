package memory

import "github.com/sluice-dev/sluice"

// sideState is a state kept beside its shard's array: a sliding log (or a
// concurrency limit's leases), whose length varies, or a state of a key
// whose entry has no slot left for it (see maxWidth). Side states are read
// and written only under the shard's mutex, with the key's entry held, so
// a call with one is decided there.
type sideState struct {
	ref  uint32
	secs uint64 // expiry, see expSecs
	st   sluice.State
}

// sideIndex returns the index of ref's state among h's side states, or -1.
func (sh *shard) sideIndex(h hash, ref uint32) int {
	for i, ss := range sh.side[h] {
		if ss.ref == ref {
			return i
		}
	}
	return -1
}

// sideSecs returns the latest expiry of h's side states, in seconds (0:
// none).
func (sh *shard) sideSecs(h hash) uint64 {
	var secs uint64
	for _, ss := range sh.side[h] {
		secs = max(secs, ss.secs)
	}
	return secs
}

// dropSide forgets h's side state at index i.
func (sh *shard) dropSide(h hash, i int) {
	ss := sh.side[h]
	ss[i] = ss[len(ss)-1]
	ss[len(ss)-1] = sideState{}
	if ss = ss[:len(ss)-1]; len(ss) == 0 {
		delete(sh.side, h)
	} else {
		sh.side[h] = ss
	}
}
