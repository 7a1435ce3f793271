package redis

import (
	"context"
	"strconv"
	"strings"

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

// announceReset appends to resetStream the notice that key's states under
// limits are about to be reset, when any of them can be leased, and keeps
// the stream for as long as such a lease could matter (its TTL only grows).
// Each notice holds the subject ("k") and the limits' IDs joined by ","
// ("l"; an ID holds no ",").
func (s *Store) announceReset(ctx context.Context, key string, limits []sluice.Limit) error {
	var ids []string
	var life int64
	for _, l := range limits {
		if ms := resetLife(l); ms > 0 {
			ids = append(ids, l.ID())
			life = max(life, ms)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	b := s.client.B()
	cmds := rueidis.Commands{
		b.Xadd().Key(resetStream).Maxlen().Almost().Threshold(strconv.Itoa(resetStreamLen)).Id("*").
			FieldValue().FieldValue("k", key).FieldValue("l", strings.Join(ids, ",")).Build(),
		b.Pexpire().Key(resetStream).Milliseconds(life).Nx().Build(),
		b.Pexpire().Key(resetStream).Milliseconds(life).Gt().Build(),
	}
	for _, r := range s.client.DoMulti(ctx, cmds...) {
		if err := r.Error(); err != nil {
			return err
		}
	}
	return nil
}

// readResets reads the notices appended to resetStream since w last read
// it and hands each to w.onReset. The first read starts after the newest
// notice. A read that fails is tried again at the next watch.
func (s *Store) readResets(ctx context.Context, w *watcher) {
	c := s.client
	if w.resetsFrom == "" {
		last, err := c.Do(ctx, c.B().Xrevrange().Key(resetStream).End("+").Start("-").Count(1).Build()).AsXRange()
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
	read, err := c.Do(ctx, c.B().Xread().Count(resetStreamLen).Streams().Key(resetStream).Id(w.resetsFrom).Build()).AsXRead()
	if err != nil {
		if !rueidis.IsRedisNil(err) && w.log != nil {
			w.log.Debug("redis reset notices not read", "err", err)
		}
		return
	}
	for _, e := range read[resetStream] {
		w.resetsFrom = e.ID
		if key, ok := e.FieldValues["k"]; ok {
			w.onReset(key, strings.Split(e.FieldValues["l"], ","))
		}
	}
}
