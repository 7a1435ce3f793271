package redis

import (
	"context"
	"errors"
	"time"

	"github.com/redis/rueidis"
)

// The waits between sends of a script Redis answered TRYAGAIN: the first,
// doubling up to the longest.
const (
	tryAgainFirst = time.Millisecond
	tryAgainMax   = 16 * time.Millisecond
)

// exec runs lua with keys and args as Lua.Exec does (EVALSHA, then EVAL on
// NOSCRIPT), sending it again for as long as Redis answers TRYAGAIN and ctx
// allows, and whenever it was never sent (see unsent). Every script run of
// the store goes through it, except execScript's runs followed by a WAIT,
// which never run on a Cluster.
//
// While a Cluster slot moves between masters (a reshard), Redis answers
// TRYAGAIN to a command whose keys are not all on the node asked until the
// move ends: for the store's scripts, any that declares a key not written
// yet (a state's reset key, a charge id's key, a limit of a new subject)
// next to one that exists. Redis answers so while routing the command,
// before running it (getNodeByQuery, called by processCommand before
// call); inside a running script, a key the node cannot serve fails the
// script with "Script attempted to access a non local key", never with
// TRYAGAIN. A script answered TRYAGAIN has therefore written nothing, and
// sending it again cannot count anything twice. exec waits tryAgainFirst
// before the second send, twice as long before each next one up to
// tryAgainMax, and returns the last TRYAGAIN when ctx would end before the
// next send could be answered: before the wait and as long again as the
// last send took have passed. No other error is sent again: a script whose
// reply was lost or came too late may have run.
func (s *Store) exec(ctx context.Context, lua *rueidis.Lua, keys, args []string) rueidis.RedisResult {
	sent := time.Now()
	wait := tryAgainFirst
	for resent := 0; ; {
		r := lua.Exec(ctx, s.client, keys, args)
		switch err := r.Error(); {
		case resent < maxResends && unsent(ctx, err):
			resent++
		case isTryAgain(err) && pause(ctx, wait, time.Since(sent)):
			wait = min(2*wait, tryAgainMax)
		default:
			return r
		}
		sent = time.Now()
	}
}

// maxResends bounds how many times one call is sent again for want of a
// connection another call gave up on (see unsent). Each is another call's
// connection, so a few suffice; a client closed meanwhile answers every
// send at once with the last such failure, which would otherwise be sent
// again until ctx ends.
const maxResends = 8

// do sends the command build returns on c, and sends it again, built
// anew, as exec does a script that was never sent (see unsent): a PING, an
// INFO, a read that a caller's patience must not lose to another's.
func do(ctx context.Context, c rueidis.Client, build func() rueidis.Completed) rueidis.RedisResult {
	for resent := 0; ; resent++ {
		res := c.Do(ctx, build())
		if resent == maxResends || !unsent(ctx, res.Error()) {
			return res
		}
	}
}

// doMulti sends the commands build returns as one DoMulti, and sends them
// again, built anew, as exec does a script that was never sent (see
// unsent), judged by the first command's result.
func (s *Store) doMulti(ctx context.Context, build func() []rueidis.Completed) []rueidis.RedisResult {
	for resent := 0; ; resent++ {
		res := s.client.DoMulti(ctx, build()...)
		if resent == maxResends || !unsent(ctx, res[0].Error()) {
			return res
		}
	}
}

// unsent reports whether err failed a call that never reached Redis, while
// ctx has not ended: the connection it waited for was being made by
// another call, which gave up on it, or was kept idle and lost before
// HELLO's answer (errKeptLost). Such a call is sent again, on a
// connection made anew (by it, or by a call it waits for in turn). rueidis
// makes a connection under the context of the first call that needs it
// and hands the outcome to every call that waits for the same connection
// meanwhile: without this, one caller's short deadline (Envoy's 20 ms)
// would fail the calls of patient callers as errors of the store.
//
// Another call gave up when err wraps errMakerGaveUp (see connector), or
// when it is a context's error that is not ctx's: ctx has not ended and
// its deadline has not come. rueidis returns the maker's context error
// before writing HELLO when that context ended after the connection was
// handed over; a call's own command fails with a context error only by
// its own context, or at its own deadline (the connection's deadline
// when it is read without a background reader).
func unsent(ctx context.Context, err error) bool {
	if err == nil || ctx.Err() != nil {
		return false
	}
	if errors.Is(err, errMakerGaveUp) || errors.Is(err, errKeptLost) {
		return true
	}
	if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
		return false
	}
	dl, ok := ctx.Deadline()
	return !ok || time.Now().Before(dl)
}

// isTryAgain reports whether err is Redis's TRYAGAIN reply.
func isTryAgain(err error) bool {
	e, ok := rueidis.IsRedisErr(err)
	return ok && e.IsTryAgain()
}

// pause waits d and reports true, or reports false as soon as ctx ends,
// and at once when ctx's deadline comes before d and then send, the time a
// send takes, have passed.
func pause(ctx context.Context, d, send time.Duration) bool {
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < d+send {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
