package redis

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/sluice-dev/sluice"
)

// resetStream is the Redis stream on which Store.Reset tells the instances
// sharing Redis which states it resets, so that each ends the leases it
// holds of them (see Leased quota in the package documentation). It is
// never a state's key, whose subject is always in braces.
const resetStream = "sluice:resets"

// resetStreamLen bounds the notices the stream keeps (approximately):
// instances read it every watchEvery.
const resetStreamLen = 10000

// resetNotice is what a Reset tells the other instances: the subject
// ("k") and the IDs of its leasable limits joined by "," ("l"; an ID holds
// no ","). A Reset appends two: before its reset, the announcement, whose
// stream ID id then records; after it, the confirmation, which also holds
// the shared state's time of the reset ("t", µs since sluice.Epoch) and
// the announcement's ID ("a"; "" when a store that leases none of the
// limits reset them without it, Redis being full).
type resetNotice struct {
	key  string
	ids  []string
	life int64 // ms the stream must live for a lease of the limits to matter
	id   string
}

// leasableNotice returns the notice of a reset of key's states under
// limits, or nil when none of them can be leased.
func leasableNotice(key string, limits []sluice.Limit) *resetNotice {
	n := &resetNotice{key: key}
	for _, l := range limits {
		if ms := resetLife(l); ms > 0 {
			n.ids = append(n.ids, l.ID())
			n.life = max(n.life, ms)
		}
	}
	if len(n.ids) == 0 {
		return nil
	}
	return n
}

// announceReset appends to resetStream the announcement that n's states
// are about to be reset and records its ID in n ("" when Redis did not
// take it).
func (s *Store) announceReset(ctx context.Context, n *resetNotice) error {
	id, err := s.appendNotice(ctx, n, "k", n.key, "l", strings.Join(n.ids, ","))
	n.id = id
	return err
}

// confirmReset appends to resetStream the confirmation that the reset
// n announced ran at the shared state's time at.
func (s *Store) confirmReset(ctx context.Context, n *resetNotice, at int64) error {
	_, err := s.appendNotice(ctx, n, "k", n.key, "l", strings.Join(n.ids, ","),
		"t", strconv.FormatInt(at, 10), "a", n.id)
	return err
}

// appendNotice appends the fields fv (name, value, …) of n to resetStream
// and keeps the stream for as long as a lease of n's limits could matter
// (its TTL only grows). It returns the notice's stream ID.
func (s *Store) appendNotice(ctx context.Context, n *resetNotice, fv ...string) (string, error) {
	b := s.client.B()
	rs := s.doMulti(ctx, func() []rueidis.Completed {
		x := b.Xadd().Key(resetStream).Maxlen().Almost().Threshold(strconv.Itoa(resetStreamLen)).Id("*").FieldValue()
		for i := 0; i+1 < len(fv); i += 2 {
			x = x.FieldValue(fv[i], fv[i+1])
		}
		return []rueidis.Completed{x.Build(),
			b.Pexpire().Key(resetStream).Milliseconds(n.life).Nx().Build(),
			b.Pexpire().Key(resetStream).Milliseconds(n.life).Gt().Build()}
	})
	for _, r := range rs {
		if err := r.Error(); err != nil {
			return "", err
		}
	}
	return rs[0].ToString()
}

// isOutOfMemory reports whether err is Redis's OOM reply: Redis is full
// under maxmemory-policy noeviction and refuses the write asked, having
// written nothing.
func isOutOfMemory(err error) bool {
	e, ok := rueidis.IsRedisErr(err)
	return ok && strings.HasPrefix(e.Error(), "OOM ")
}

// announced is an announcement read without its confirmation: its
// subject, its limits' IDs, and when the watch stops waiting for the
// confirmation.
type announced struct {
	key string
	ids []string
	due time.Time
}

// readResets reads the notices appended to resetStream since w last read
// it. A confirmation is handed to w.onReset with its reset's time: the
// leases taken at or before it end. An announcement waits for its
// confirmation for the larger of the store's timeout and watchEvery, and
// a watchEvery more, since its Reset sends the reset and the confirmation
// within its timeout; unconfirmed by then (the confirmation failed, or an
// instance of an earlier version, which confirms nothing, reset), every
// lease held of its limits ends. The first read starts after the newest
// notice. A read that fails is tried again at the next watch.
func (s *Store) readResets(ctx context.Context, w *watcher) {
	now := time.Now()
	defer w.overdue(now)
	c := s.client
	if w.resetsFrom == "" {
		last, err := do(ctx, c, func() rueidis.Completed {
			return c.B().Xrevrange().Key(resetStream).End("+").Start("-").Count(1).Build()
		}).AsXRange()
		if err != nil && !rueidis.IsRedisNil(err) {
			if w.log != nil {
				w.log.Debug("redis reset notices not read", "err", err)
			}
			return
		}
		w.resetsFrom = "0-0"
		if len(last) > 0 {
			w.resetsFrom = last[0].ID
		}
		return
	}
	read, err := do(ctx, c, func() rueidis.Completed {
		return c.B().Xread().Count(resetStreamLen).Streams().Key(resetStream).Id(w.resetsFrom).Build()
	}).AsXRead()
	if err != nil {
		if !rueidis.IsRedisNil(err) && w.log != nil {
			w.log.Debug("redis reset notices not read", "err", err)
		}
		return
	}
	wait := max(s.timeout, watchEvery) + watchEvery
	for _, e := range read[resetStream] {
		w.resetsFrom = e.ID
		key, ok := e.FieldValues["k"]
		if !ok {
			continue
		}
		ids := strings.Split(e.FieldValues["l"], ",")
		if at, err := strconv.ParseInt(e.FieldValues["t"], 10, 64); err == nil {
			delete(w.announced, e.FieldValues["a"])
			w.onReset(key, ids, at, true)
			continue
		}
		if w.announced == nil {
			w.announced = make(map[string]announced)
		}
		if len(w.announced) >= resetStreamLen {
			w.onReset(key, ids, 0, false)
			continue
		}
		w.announced[e.ID] = announced{key: key, ids: ids, due: now.Add(wait)}
	}
}

// overdue ends, at now, every lease held of the limits of the
// announcements whose confirmation is overdue.
func (w *watcher) overdue(now time.Time) {
	for id, a := range w.announced {
		if !now.Before(a.due) {
			delete(w.announced, id)
			w.onReset(a.key, a.ids, 0, false)
		}
	}
}
