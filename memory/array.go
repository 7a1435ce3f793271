package memory

import (
	"math/bits"
	"math/rand/v2"
	"sync/atomic"

	"github.com/sluice-dev/sluice"
)

// Growth: an array holds at most half as many keys as it has entries and
// grows by a quarter, so at any size it is between two fifths and half
// full. At most half full, nine keys in ten are in their home entry or the
// next one.
const (
	minEntries        = 8
	maxLoadNum        = 1
	maxLoadDen        = 2
	growNum, growDen  = 5, 4
	shrinkBelowOneIn  = 8
	shrinkMinEntries  = 1024
	evictionSample    = 8
	evictionRounds    = 8
	evictionMaxProbes = 64
)

// Slots: an entry holds up to width states inline, each in a slot of three
// words — meta, then two words of the state (see stateKind). meta holds the
// state's limit (its ref, see limitRef) in the top 32 bits and its expiry
// in whole seconds (see expSecs) in the bottom 32; 0 marks a free slot. A
// sliding counter's state takes two slots, the second marked with the
// ref's contBit and holding the third word. States that do not fit inline
// — sliding logs, and every state of a key beyond maxWidth slots — are
// kept beside the array (see side).
const (
	slotWords  = 3
	headWords  = 2
	maxWidth   = 6
	contBit    = 1 << 31
	secsMask   = 1<<32 - 1
	firstSlot  = headWords
	noSlot     = -1
	sideSlot   = -2
	metaRefPos = 32
)

// array is a shard's keys: an open-addressing table with linear probing
// of entries (see entry.go) of stride words, each with width slots. It is
// replaced whole as it grows, shrinks or widens.
//
// Deciders without the shard's mutex look keys up in the array the shard
// publishes (Store.dir) and take entries (acquire); the array's words —
// inserting, removing, moving entries to a new array — otherwise belong
// to the holder of the mutex, which holds every entry it moves or reads
// (hold), so that a decider never sees a key half moved: an array given up
// keeps its entries held forever.
type array struct {
	w      []uint64
	n      int // entries
	width  int // slots an entry
	stride int // words an entry
	used   int // entries holding a key (the owner's count)
}

// stateKind says which words of a sluice.State a limit's algorithm uses,
// and so where its slots keep them.
type stateKind uint8

const (
	kindTA  stateKind = iota // T and A in one slot (fixed window)
	kindTB                   // T and B in one slot (token bucket, leaky bucket, GCRA)
	kindTAB                  // T and A in one slot, B in the next (sliding counter)
	kindLog                  // beside the array (sliding log, concurrency)
)

func kindOf(a sluice.Algorithm) stateKind {
	switch a {
	case sluice.AlgorithmTokenBucket, sluice.AlgorithmLeakyBucket, sluice.AlgorithmGCRA:
		return kindTB
	case sluice.AlgorithmSlidingCounter:
		return kindTAB
	case sluice.AlgorithmSlidingLog, sluice.AlgorithmConcurrency:
		return kindLog
	}
	return kindTA
}

// slots returns how many slots a state of kind takes inline (0: never
// inline).
func (k stateKind) slots() int {
	switch k {
	case kindTAB:
		return 2
	case kindLog:
		return 0
	}
	return 1
}

func makeArray(n, width int) *array {
	stride := headWords + slotWords*width
	return &array{w: make([]uint64, n*stride), n: n, width: width, stride: stride}
}

// home is the entry where h's probe sequence starts in an array of n
// entries.
func home(h hash, n int) int {
	hi, _ := bits.Mul64(h.h2, uint64(n))
	return int(hi)
}

// find returns the first word of h's entry and true, or false and that of
// the empty entry where h would go. It looks at no more than a.n entries:
// deciders without the mutex may meet an array full of keys moving under
// them, and then report h absent (-1, false), which sends them to the
// mutex.
func (a *array) find(h hash) (int, bool) {
	if a.n == 0 {
		return -1, false
	}
	i := home(h, a.n)
	base := i * a.stride
	for range a.n {
		h1 := atomic.LoadUint64(&a.w[base])
		if h1 == h.h1 && h.names(atomic.LoadUint64(&a.w[base+1])) {
			return base, true
		}
		if h1 == 0 {
			return base, false
		}
		if base += a.stride; base == len(a.w) {
			base = 0
		}
	}
	return -1, false
}

// slotOf returns the first word of the slot of the entry at base that
// holds the state of ref, or noSlot; the caller holds the entry.
func (a *array) slotOf(base int, ref uint32) int {
	s := base + firstSlot
	for range a.width {
		if uint32(a.w[s]>>metaRefPos) == ref {
			return s
		}
		s += slotWords
	}
	return noSlot
}

// read copies the state in slot s into *st; the caller holds the entry.
func (a *array) read(kind stateKind, s int, st *sluice.State) {
	switch kind {
	case kindTA:
		st.T, st.A = int64(a.w[s+1]), int64(a.w[s+2])
	case kindTB:
		st.T, st.B = int64(a.w[s+1]), int64(a.w[s+2])
	case kindTAB:
		st.T, st.A, st.B = int64(a.w[s+1]), int64(a.w[s+2]), int64(a.w[s+slotWords+1])
	}
}

// write stores st, expiring at secs, into slot s; the caller holds the
// entry.
func (a *array) write(kind stateKind, s int, st *sluice.State, secs uint64) {
	a.w[s] = a.w[s]&^secsMask | secs
	switch kind {
	case kindTA:
		a.w[s+1], a.w[s+2] = uint64(st.T), uint64(st.A)
	case kindTB:
		a.w[s+1], a.w[s+2] = uint64(st.T), uint64(st.B)
	case kindTAB:
		a.w[s+1], a.w[s+2], a.w[s+slotWords+1] = uint64(st.T), uint64(st.A), uint64(st.B)
	}
}

// slotSecs returns the expiry of the state in slot s, in seconds.
func (a *array) slotSecs(s int) uint64 { return a.w[s] & secsMask }

// raiseSecs makes the state in slot s expire no earlier than secs, and
// reports whether that moved its expiry; the caller holds the entry.
func (a *array) raiseSecs(s int, secs uint64) bool {
	if secs <= a.slotSecs(s) {
		return false
	}
	a.w[s] = a.w[s]&^secsMask | secs
	return true
}

// claim marks the slots of a state of kind from s on as ref's; the caller
// holds the entry and has found them free (see freeRun).
func (a *array) claim(kind stateKind, s int, ref uint32) {
	a.w[s] = uint64(ref) << metaRefPos
	if kind == kindTAB {
		a.w[s+slotWords] = uint64(ref|contBit) << metaRefPos
	}
}

// clear frees the slots of the state from s on, of kind; the caller holds
// the entry.
func (a *array) clear(kind stateKind, s int) {
	for k := range kind.slots() {
		clear(a.w[s+k*slotWords : s+(k+1)*slotWords])
	}
}

// freeRun returns the first word of need free slots in a row in the entry
// at base, or noSlot.
func (a *array) freeRun(base, need int) int {
	run := 0
	for k := range a.width {
		s := base + firstSlot + k*slotWords
		if a.w[s] != 0 {
			run = 0
			continue
		}
		if run++; run == need {
			return s - (need-1)*slotWords
		}
	}
	return noSlot
}

// slotsUsed returns how many slots of the entry at base hold a state.
func (a *array) slotsUsed(base int) int {
	n := 0
	for k := range a.width {
		if a.w[base+firstSlot+k*slotWords] != 0 {
			n++
		}
	}
	return n
}

// inlineSecs returns the latest expiry of the entry's inline states, in
// seconds (0: none).
func (a *array) inlineSecs(base int) uint64 {
	var secs uint64
	for k := range a.width {
		secs = max(secs, a.slotSecs(base+firstSlot+k*slotWords))
	}
	return secs
}

// insert adds h, which it does not hold, with no state, holding its entry
// for the owner, and returns the entry's first word. The caller has made
// sure the array has room (see full).
func (a *array) insert(h hash) int {
	base, _ := a.find(h)
	atomic.StoreUint64(&a.w[base+1], h.h2|lockShard)
	atomic.StoreUint64(&a.w[base], h.h1)
	a.used++
	return base
}

// full reports whether one more key would pass the array's load.
func (a *array) full() bool { return (a.used+1)*maxLoadDen > a.n*maxLoadNum }

// remove empties the entry at base, which the owner holds, shifting later
// entries of the probe run back so that lookups never need tombstones.
func (a *array) remove(base int) {
	hole := base / a.stride
	for j := (hole + 1) % a.n; atomic.LoadUint64(&a.w[j*a.stride]) != 0; j = (j + 1) % a.n {
		src := j * a.stride
		k := home(a.keyAt(src), a.n)
		// The entry at j may move to the hole unless its home lies
		// cyclically in (hole, j].
		if hole <= j && hole < k && k <= j || hole > j && (hole < k || k <= j) {
			continue
		}
		a.hold(src)
		dst := hole * a.stride // held: the removed entry, or one moved on
		copy(a.w[dst+firstSlot:dst+a.stride], a.w[src+firstSlot:src+a.stride])
		atomic.StoreUint64(&a.w[dst], atomic.LoadUint64(&a.w[src]))
		atomic.StoreUint64(&a.w[dst+1], atomic.LoadUint64(&a.w[src+1])&^lockBits) // dst is src's key now, free
		hole = j
	}
	end := hole * a.stride
	clear(a.w[end+firstSlot : end+a.stride])
	atomic.StoreUint64(&a.w[end], 0)
	atomic.StoreUint64(&a.w[end+1], 0)
	a.used--
}

// resized returns a new array of n entries of width slots holding every
// key of a, each entry's states packed at its start. a's entries stay
// held, so deciders that still read it go to the mutex. width must be at
// least the slots any entry of a uses.
func (a *array) resized(n, width int) *array {
	fresh := makeArray(n, width)
	for base := 0; base < len(a.w); base += a.stride {
		if atomic.LoadUint64(&a.w[base]) == 0 {
			continue
		}
		a.hold(base)
		h := a.keyAt(base)
		dst, _ := fresh.find(h)
		d := dst + firstSlot
		for k := range a.width {
			s := base + firstSlot + k*slotWords
			if a.w[s] != 0 {
				copy(fresh.w[d:d+slotWords], a.w[s:s+slotWords])
				d += slotWords
			}
		}
		fresh.w[dst] = h.h1
		fresh.w[dst+1] = atomic.LoadUint64(&a.w[base+1]) &^ lockBits
		fresh.used++
	}
	return fresh
}

// grown returns a with room for one more key: a itself, or a larger copy.
func (a *array) grown() *array {
	if !a.full() {
		return a
	}
	return a.resized(max(minEntries, a.n*growNum/growDen), a.width)
}

// compacted returns a smaller or narrower copy of a after a flood of
// keys has expired, or a itself; width is the most slots any of its
// entries uses.
func (a *array) compacted(width int) *array {
	n := a.n
	if n >= shrinkMinEntries && a.used*shrinkBelowOneIn < n {
		// As full as just after a growth: the next inserts do not grow it.
		n = max(minEntries, a.used*maxLoadDen*growNum/(maxLoadNum*growDen))
	}
	if n == a.n && width >= a.width {
		return a
	}
	return a.resized(n, min(width, a.width))
}

// sample returns up to cap(dst) occupied entries (their first words) from
// a random place.
func (a *array) sample(dst []int) []int {
	if a.used == 0 {
		return dst
	}
	base := rand.IntN(a.n) * a.stride
	for probes := 0; probes < evictionMaxProbes*evictionSample && len(dst) < cap(dst); probes++ {
		if atomic.LoadUint64(&a.w[base]) != 0 {
			dst = append(dst, base)
		}
		if base += a.stride; base == len(a.w) {
			base = 0
		}
	}
	return dst
}
