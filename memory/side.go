package memory

import (
	"math"

	"github.com/sluice-dev/sluice"
)

// sideState is a state kept beside its shard's array: a sliding log (or a
// concurrency limit's leases), whose length varies, or a state of a key
// whose entry has no slot left for it (see maxWidth). Side states are read
// and written only under the shard's mutex, with the key's entry held, so
// a call with one is decided there.
type sideState struct {
	ref uint32
	// room is the length of the array st.Log lies in (see keepLog), at
	// most math.MaxUint32.
	room uint32
	secs uint64 // expiry, see expSecs
	st   sluice.State
}

// minLogRoom is the fewest entries an array a log is moved to has room
// for (see keepLog).
const minLogRoom = 8

// newSide returns the side state of ref holding st, expiring at secs.
// st.Log, if any, starts its array (a log of a new state is).
func newSide(ref uint32, st *sluice.State, secs uint64) sideState {
	ss := sideState{ref: ref, secs: secs}
	ss.keep(st)
	return ss
}

// keep makes *st the state of ss. A sliding log is cut at its front as its
// admissions leave the window, while the array it lies in stays whole, and
// grows at its end into that array: a log that has shrunk to a quarter of
// its array or less is moved to an array of twice its length, so that a
// key holds about 16 bytes per admission in its window, not as many as
// its log ever held.
func (ss *sideState) keep(st *sluice.State) {
	old := ss.st.Log
	ss.st = *st
	log := st.Log
	if !sameArray(old, log) {
		// A new array, which log starts (append and Release make them so).
		ss.room = uint32(min(cap(log), math.MaxUint32))
	}
	if n := len(log); int(ss.room) > minLogRoom && n <= int(ss.room)/4 {
		moved := make([]sluice.LogEntry, n, max(2*n, minLogRoom))
		copy(moved, log)
		ss.st.Log, ss.room = moved, uint32(cap(moved))
	}
}

// sameArray reports whether a and b lie in one array: they end their
// capacity at one element.
func sameArray(a, b []sluice.LogEntry) bool {
	return cap(a) > 0 && cap(b) > 0 && &a[:cap(a)][cap(a)-1] == &b[:cap(b)][cap(b)-1]
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
