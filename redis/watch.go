package redis

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"github.com/sluice-dev/sluice"
)

// watchEvery is how often Open's store reads its deployment: the masters
// of a Cluster's slots (for Node) and every master's replication history
// (for lost writes).
const watchEvery = 100 * time.Millisecond

// Losses counts what Redis forgot of what it had acknowledged, as Open's
// store saw it by reading each master's replication history (INFO
// replication) every watchEvery.
type Losses struct {
	// LostWrites counts masters that took over without everything their
	// predecessor had acknowledged: a replica promoted (Sentinel or Cluster
	// failover), or a master restarted from an RDB snapshot that carries
	// its replication history, whose copy of that history ends before the
	// last offset the store saw the old master at. The decisions of those
	// writes are gone: the new master admits them again. Writes the old
	// master acknowledged after the store's last read of it (within
	// watchEvery of a crash, longer if its last reads went unanswered) are
	// compared with nothing: a loss of those alone is not counted (see
	// the package documentation, Failover).
	LostWrites int64
	// LostBytes sums how far, in bytes of the replication stream, the lost
	// histories ran past what the new masters hold: a lower bound, since
	// the store reads offsets only every watchEvery.
	LostBytes int64
	// EmptyRestarts counts masters seen again at the same address with a
	// history unrelated to the one they had: restarted without their data
	// (no persistence) or resynchronised from scratch — and restarted with
	// their data too, when Redis gave them a new replication ID, as it does
	// to a master restarted from its AOF, or from an RDB file written while
	// it had no replica (one written with a replica carries the history:
	// see LostWrites). The history cannot tell those from a loss: it errs
	// on counting one (see the package documentation, Failover).
	EmptyRestarts int64
	// Evicted counts the keys the masters evicted to make room since the
	// store first saw them (INFO stats evicted_keys, read every
	// watchEvery): a Redis with a maxmemory and a maxmemory-policy other
	// than noeviction drops keys when full, and an evicted state gives its
	// client a fresh quota. On a Redis shared with other programs, their
	// keys count too.
	Evicted int64
}

// replication is the part of INFO replication the watch reads.
type replication struct {
	role              string
	replid, replid2   string
	offset, secondOff int64
}

func parseReplication(m map[string]string) replication {
	atoi := func(k string) int64 { n, _ := strconv.ParseInt(m[k], 10, 64); return n }
	return replication{role: m["role"], replid: m["master_replid"], replid2: m["master_replid2"],
		offset: atoi("master_repl_offset"), secondOff: atoi("second_repl_offset")}
}

// parseFields reads INFO's "name:value" lines.
func parseFields(text string) map[string]string {
	m := make(map[string]string)
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if k, v, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, "#") {
			m[k] = v
		}
	}
	return m
}

// maxHistories bounds the replication histories a history remembers.
const maxHistories = 256

// history is what the watch knows of the masters' replication histories:
// the highest offset seen of each (by replication ID), and the ID each
// address had last.
type history struct {
	offsets map[string]int64
	byAddr  map[string]string
}

// observe records that the master at addr reports r and returns the bytes
// of acknowledged history lost (> 0) when r is a new master that continued
// a known one from an earlier point than was seen, and restarted = true
// when addr comes back with a history unrelated to its own. What the old
// master wrote after the last offset observed of it is unknown here: a new
// master that continues it from that offset or later loses nothing seen.
func (h *history) observe(addr string, r replication) (lost int64, restarted bool) {
	if r.role != "master" || r.replid == "" {
		return 0, false
	}
	if h.offsets == nil {
		h.offsets, h.byAddr = make(map[string]int64), make(map[string]string)
	}
	if _, known := h.offsets[r.replid]; !known {
		if off, ok := h.offsets[r.replid2]; ok && r.replid2 != "" {
			// It holds its predecessor's history up to secondOff-1.
			lost = max(off-(r.secondOff-1), 0)
		} else if prev, ok := h.byAddr[addr]; ok && prev != r.replid {
			restarted = true
		}
		if len(h.offsets) >= maxHistories {
			clear(h.offsets)
		}
	}
	h.offsets[r.replid] = max(h.offsets[r.replid], r.offset)
	h.byAddr[addr] = r.replid
	return lost, restarted
}

// watcher runs a Store's watch: its histories and its counts.
type watcher struct {
	log *slog.Logger
	// onLoss, when not nil, is called (on the watch's goroutine) each time
	// the watch finds acknowledged writes lost or a master back without
	// its data: Open's store drops its leases then (Leased.drop).
	onLoss func()
	// onMiss, when not nil, is called (on any goroutine) with the address
	// of a master that did not answer a read, or that was not a master at
	// the previous read (a promoted replica, a new master Sentinel named:
	// its predecessor failed or was demoted): Open's store tells its
	// failover (failover.Store.Unreachable), so that it returns to the
	// master as after a failure of its own calls, whatever other instances
	// admitted meanwhile being charged there first.
	onMiss func(addr string)
	// onReset, when not nil, is called (on the watch's goroutine) with the
	// subject and limit IDs of each Reset any instance confirmed since the
	// previous read, with known true and the shared state's time of the
	// reset, and of each whose announcement went unconfirmed too long,
	// with known false (see readResets): Open's store ends its leases of
	// them taken at or before that time, or all of them
	// (Leased.resetNotice).
	onReset    func(key string, ids []string, at int64, known bool)
	resetsFrom string               // the ID of the last notice read; "" before the first read
	announced  map[string]announced // announcements read and not yet confirmed, by stream ID
	masters    map[string]bool      // the masters of the last read; nil before the first
	history    history
	memory     memoryWatch
	lost       atomic.Int64
	bytes      atomic.Int64
	restart    atomic.Int64
	evicted    atomic.Int64
	// lostAt is when the watch last found what Redis had counted lost, µs
	// since sluice.Epoch on the clock of Redis's receipts (Status.Charged):
	// a receipt older than it may be of a state that is gone.
	lostAt atomic.Int64
}

// clockOf returns the time now on the clock of the receipts of node c,
// µs since sluice.Epoch: WithTimeForTesting's, else c's TIME, else (c
// does not answer) the process's.
func (s *Store) clockOf(ctx context.Context, c rueidis.Client) int64 {
	if s.now != nil {
		return sluice.MicrosSinceEpoch(s.now())
	}
	if c != nil {
		if t, err := do(ctx, c, func() rueidis.Completed { return c.B().Time().Build() }).AsIntSlice(); err == nil && len(t) == 2 {
			return sluice.MicrosSinceEpoch(time.Unix(t[0], t[1]*1000))
		}
	}
	return sluice.MicrosSinceEpoch(time.Now())
}

// watch reads the deployment every watchEvery, the first time watchEvery
// after it is called, until stop is closed: a Cluster's slot map (for
// Node), the master's address (standalone, Sentinel) and every master's
// replication history, counting and logging the losses it reveals.
func (s *Store) watch(w *watcher, stop <-chan struct{}) {
	t := time.NewTicker(watchEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		s.watchOnce(w)
	}
}

// watchOnce reads the deployment once: the slot map, then every node at
// once, each read bounded by the larger of watchEvery and the store's
// timeout (a deployment slower than that to answer an INFO is not read).
// What the nodes said is observed in one goroutine, the watch's.
func (s *Store) watchOnce(w *watcher) {
	ctx, cancel := context.WithTimeout(context.Background(), max(watchEvery, s.timeout))
	defer cancel()
	if s.cluster {
		if err := s.refreshSlots(ctx); err != nil && w.log != nil {
			w.log.Debug("redis cluster slots not read", "err", err)
		}
	}
	type read struct {
		addr   string
		fields map[string]string
	}
	nodes := s.client.Nodes()
	if promoted := w.promoted(s.masters(nodes)); w.onMiss != nil {
		for _, addr := range promoted {
			w.onMiss(addr)
		}
	}
	if w.onReset != nil {
		s.readResets(ctx, w)
	}
	reads := make(chan read, len(nodes))
	var wg sync.WaitGroup
	for addr, c := range nodes {
		if !s.cluster {
			s.master.Store(&addr)
		}
		wg.Go(func() {
			text, err := do(ctx, c, func() rueidis.Completed {
				return c.B().Info().Section("replication", "stats", "memory").Build()
			}).ToString()
			if err == nil {
				reads <- read{addr, parseFields(text)}
				return
			}
			// Not reached (a timeout, a connection refused or lost), as
			// opposed to an error reply from a master that answers.
			if _, reply := rueidis.IsRedisErr(err); !reply && w.onMiss != nil && s.isMaster(addr) {
				w.onMiss(addr)
			}
		})
	}
	wg.Wait()
	close(reads)
	for r := range reads {
		addr, fields := r.addr, r.fields
		w.observeMemory(addr, fields)
		lost, restarted := w.history.observe(addr, parseReplication(fields))
		switch {
		case lost > 0:
			w.lost.Add(1)
			w.bytes.Add(lost)
			if w.log != nil {
				w.log.Error("redis lost acknowledged writes: a new master took over without them, and admits their units again",
					"node", addr, "bytes", lost)
			}
		case restarted:
			w.restart.Add(1)
			if w.log != nil {
				w.log.Error("redis master restarted without its data: the limits' states it held are gone", "node", addr)
			}
		}
		if lost > 0 || restarted {
			w.lostAt.Store(s.clockOf(ctx, nodes[addr]))
			if w.onLoss != nil {
				w.onLoss()
			}
		}
	}
	w.memory.seen.Store(int64(len(w.memory.evicted)))
}

// masters returns the addresses of the nodes that serve keys now, as
// Node names them: a Cluster's masters as its slot map last said, else
// the client's one node (the server, or the master Sentinel names).
func (s *Store) masters(nodes map[string]rueidis.Client) []string {
	if s.cluster {
		if m := s.slots.Load(); m != nil {
			return m.names[1:]
		}
		return nil
	}
	var list []string
	for addr := range nodes {
		list = append(list, addr)
	}
	return list
}

// promoted records masters as those of the read under way and returns
// the ones that were not masters at the previous read (none at the first).
// A read that finds no master (a slot map not read yet, a Sentinel
// switching) changes nothing.
func (w *watcher) promoted(masters []string) []string {
	if len(masters) == 0 {
		return nil
	}
	var fresh []string
	next := make(map[string]bool, len(masters))
	for _, addr := range masters {
		next[addr] = true
		if w.masters != nil && !w.masters[addr] {
			fresh = append(fresh, addr)
		}
	}
	w.masters = next
	return fresh
}

// losses returns w's counts.
func (w *watcher) losses() Losses {
	return Losses{LostWrites: w.lost.Load(), LostBytes: w.bytes.Load(), EmptyRestarts: w.restart.Load(),
		Evicted: w.evicted.Load()}
}
