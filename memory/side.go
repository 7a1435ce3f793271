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
//
// A log lies in an array of the store's making, whose length (its room,
// cap(st.Log)) the store chooses and counts toward the shard's bound (see
// logUnits): st.Log runs from the array's first element to the log's end,
// and the log starts at st.Log[from] (see state).
type sideState struct {
	ref  uint32
	from uint32
	secs uint64 // expiry, see expSecs
	st   sluice.State
}

// logUnitEntries is how many entries of a log's room count as one state
// toward the bound of WithMaxKeys: 8 entries of 16 bytes, 128 bytes, about
// what a state in an entry of the shard's array costs.
const logUnitEntries = 8

// minLogRoom is the fewest entries an array a shrunk log is moved to has
// room for (see keep).
const minLogRoom = 8

// maxLogRoom is the most entries a log's array has room for (from is a
// uint32, and an int on every platform holds it).
const maxLogRoom = math.MaxInt32

// logUnits returns how many states a log's array of room entries counts
// as toward the bound, beside the state's own.
func logUnits(room int) int { return (room + logUnitEntries - 1) / logUnitEntries }

// grownRoom returns the room of the array the store moves a log of n
// entries to when it outgrows its own: twice n, so that a log that slides
// through its window moves, or is shifted to its array's front, at most
// once per n/2 admissions.
func grownRoom(n int) int { return min(max(2*n, 2), maxLogRoom) }

// room returns the length of the array ss's log lies in (0: none).
func (ss *sideState) room() int { return cap(ss.st.Log) }

// units returns how many states ss counts as toward the bound.
func (ss *sideState) units() int { return 1 + logUnits(ss.room()) }

// state returns the state ss holds. Its Log lies in ss's array: the
// caller may read it and append to it (beyond its length, which the store
// never reads), not write its elements.
func (ss *sideState) state() sluice.State {
	st := ss.st
	if st.Log != nil {
		st.Log = st.Log[ss.from:]
	}
	return st
}

// newSide returns the side state of ref holding st, expiring at secs, and
// the units it counts as (see units). st.Log, if any, is copied to an
// array of the store's making.
func newSide(ref uint32, st *sluice.State, secs uint64) (sideState, int) {
	ss := sideState{ref: ref, secs: secs}
	ss.keep(st, true)
	return ss, ss.units()
}

// roomFor returns the room of the array that keep(st, grow) puts st.Log
// in, before any shrinking (see keep): that of ss's array when st.Log lies
// in it, or when !grow and it fits there; else grownRoom(len(st.Log)).
func (ss *sideState) roomFor(log []sluice.LogEntry, grow bool) int {
	room := ss.room()
	switch {
	case len(log) == 0:
		return 0
	case room > 0 && sameArray(ss.st.Log, log):
		return room
	case !grow && len(log) <= room:
		return room
	}
	return grownRoom(len(log))
}

// growth returns how many units more than ss the state st counts as once
// kept by keep(st, true), before any shrinking: above 0 when st.Log, a
// log the decision moved to an array of Go's append, must grow past ss's
// room.
func (ss *sideState) growth(st *sluice.State) int {
	return logUnits(ss.roomFor(st.Log, true)) - logUnits(ss.room())
}

// keep makes *st the state of ss and returns the change in the units ss
// counts as. A sliding log is cut at its front as its admissions leave the
// window, while the array it lies in stays whole, and grows at its end
// into that array (see compact). A log st.Log holds in another array
// (Decide's append made one, or Release or Refund a copy) is copied to
// the array of roomFor's room: its own when !grow and it fits there. A log
// that has shrunk to a quarter of its array or less is moved to an array
// of twice its length (at least minLogRoom), so that a key holds about 16
// bytes per admission in its window, not as many as its log ever held.
func (ss *sideState) keep(st *sluice.State, grow bool) int {
	before := logUnits(ss.room())
	buf := ss.st.Log[:cap(ss.st.Log)]
	log := st.Log
	room := ss.roomFor(log, grow)
	ss.st = *st
	switch {
	case room == 0 || len(log) > room:
		// No log, or one longer than any array (never: see maxLogRoom).
		ss.st.Log, ss.from = log, 0
		if len(log) == 0 {
			ss.st.Log = nil
		}
	case room == len(buf) && sameArray(buf, log):
		from := room - cap(log)
		ss.st.Log, ss.from = buf[:from+len(log)], uint32(from)
	case room == len(buf):
		ss.st.Log, ss.from = buf[:copy(buf, log)], 0 // log lies in another array
	default:
		moved := make([]sluice.LogEntry, len(log), room)
		copy(moved, log)
		ss.st.Log, ss.from = moved, 0
	}
	if n, room := len(ss.st.Log)-int(ss.from), ss.room(); room > minLogRoom && n <= room/4 {
		moved := make([]sluice.LogEntry, n, max(2*n, minLogRoom))
		copy(moved, ss.st.Log[ss.from:])
		ss.st.Log, ss.from = moved, 0
	}
	return logUnits(ss.room()) - before
}

// compact shifts ss's log, when it has reached the end of its array with
// room left at the array's front, to that front, so that the next
// admission appends in place: when the log fills at most half the array
// (a shift per at least room/2 admissions), or when tight (the shard could
// not take the array the log would otherwise grow to without evicting).
// The caller holds the key's entry and hands the log out afterwards.
func (ss *sideState) compact(tight bool) {
	n := len(ss.st.Log) - int(ss.from)
	if ss.from == 0 || len(ss.st.Log) < ss.room() || !(tight || n <= ss.room()/2) {
		return
	}
	ss.st.Log = ss.st.Log[:copy(ss.st.Log[:n], ss.st.Log[ss.from:])]
	ss.from = 0
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
	sh.logUnits -= logUnits(ss[i].room())
	ss[i] = ss[len(ss)-1]
	ss[len(ss)-1] = sideState{}
	if ss = ss[:len(ss)-1]; len(ss) == 0 {
		delete(sh.side, h)
	} else {
		sh.side[h] = ss
	}
}
