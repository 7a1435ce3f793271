package redis

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Bounds of a connector.
const (
	// backgroundDial bounds a connection's TCP connect and TLS handshake
	// made in the background (at least the dialer's own timeout).
	backgroundDial = 5 * time.Second
	// parkFor is how long a connection made after its caller gave up is
	// kept for a later call to its address before it is closed.
	parkFor = 10 * time.Second
	// dialsPerAddr bounds the dials under way at once to one address, and
	// the connections kept for it.
	dialsPerAddr = 4
)

// errMakerGaveUp marks the failure of a connection that the call making it
// gave up on: its context ended while the connection was being made, or
// too little of its time was left for HELLO, or HELLO was not answered by
// its deadline. rueidis hands that failure to every call that waited for
// the connection meanwhile; none of them was sent, and each whose own
// context has not ended is sent again (see unsent).
var errMakerGaveUp = errors.New("the call that was making the connection gave up on it")

// errKeptLost marks the failure of a kept connection (one that waited
// idle for the call it was handed to, see connector) that was lost before
// Redis answered its HELLO:
// closed while it waited by Redis's idle timeout, CLIENT KILL, a restart or
// a middlebox. Nothing of a call was written on it, and each call it
// failed whose context has not ended is sent again (see unsent), on a
// connection made anew.
var errKeptLost = errors.New("the connection kept for a later call was closed while it waited")

// dialTimeout is the failure of a connection not made, or whose HELLO was
// not answered, within the dial timeout (the store's Timeout): the store's
// failure, not a call's. It is a net.Error whose Timeout is true, and
// wraps no context error, so that it is never taken for a call's context
// ending (see unsent).
type dialTimeout struct{ msg string }

func (e *dialTimeout) Error() string   { return e.msg }
func (e *dialTimeout) Timeout() bool   { return true }
func (e *dialTimeout) Temporary() bool { return true }

// connector makes rueidis's connections (ClientOption.DialCtxFn) off the
// goroutine of the call that needs one. rueidis makes a new connection on
// that goroutine, under that call's deadline, so that a Redis slower to
// connect to (TCP, TLS) than one call's Timeout would never be connected
// to, each call giving up on a connection it could not finish. A connector
// instead makes the connection in the background, bounded by
// backgroundDial, and has the call wait for it no longer than its own
// deadline (the dialer's timeout when it has none); a connection made
// after its caller gave up is kept, for parkFor, for the next call to the
// address, which then spends only HELLO, on its own goroutine, before its
// own round trip. At most dialsPerAddr dials run at once per address: a
// call beyond them waits for theirs. A connector is safe for concurrent
// use; the connections it keeps are closed when unclaimed for parkFor.
//
// Its owner ends it with close once the client it dials for is closed:
// close abandons the dials under way, closes the connections kept, and
// refuses every later dial.
type connector struct {
	dial  func(ctx context.Context, dst string, d *net.Dialer, tc *tls.Config) (net.Conn, error)
	ctx   context.Context    // every background dial's; ended by close
	stop  context.CancelFunc // ends ctx
	dials sync.WaitGroup     // background dials under way
	park  time.Duration      // how long a connection is kept: parkFor

	mu     sync.Mutex
	closed bool
	addrs  map[string]*dialing
}

// dialing is a connector's state of one address, held while it has a
// dial under way, a connection kept or a call waiting (see forget).
type dialing struct {
	running  int           // dials under way
	waiting  int           // calls in DialCtx
	parked   []*parked     // connections made and not claimed yet
	ended    chan struct{} // closed (and replaced) each time a dial ends
	failures uint64        // dials that failed
	err      error         // the last one's error
}

// parked is a connection made for a call to claim.
type parked struct {
	conn  net.Conn
	took  time.Duration // its dial's
	timer *time.Timer
	at    time.Time // when it was parked
}

// newConnector returns a connector that makes each connection with dial:
// a TLS one when rueidis passes a TLS configuration.
func newConnector(dial func(context.Context, string, *net.Dialer, *tls.Config) (net.Conn, error)) *connector {
	ctx, stop := context.WithCancel(context.Background())
	return &connector{dial: dial, ctx: ctx, stop: stop, park: parkFor, addrs: make(map[string]*dialing)}
}

// close ends c: when it returns, no dial of c's runs and no connection is
// kept, and every later DialCtx fails with an error wrapping net.ErrClosed,
// as do the calls waiting for a dial. A connection a call already got is
// the call's. close is idempotent and safe to call concurrently with
// DialCtx.
func (c *connector) close() {
	c.mu.Lock()
	c.closed = true
	for _, a := range c.addrs {
		for _, p := range a.parked {
			p.timer.Stop()
			p.conn.Close()
		}
		a.parked = nil
	}
	clear(c.addrs)
	c.mu.Unlock()
	c.stop()
	c.dials.Wait()
}

// keeps reports whether c keeps a connection for a later call.
func (c *connector) keeps() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, a := range c.addrs {
		if len(a.parked) > 0 {
			return true
		}
	}
	return false
}

// plainDial is rueidis's own dial: TCP, then TLS when tc is not nil.
func plainDial(ctx context.Context, dst string, d *net.Dialer, tc *tls.Config) (net.Conn, error) {
	if tc == nil {
		return d.DialContext(ctx, "tcp", dst)
	}
	td := tls.Dialer{NetDialer: d, Config: tc}
	return td.DialContext(ctx, "tcp", dst)
}

// DialCtx implements ClientOption.DialCtxFn: it returns a connection to
// dst kept from an earlier dial, or one a dial it starts (or that runs)
// makes before ctx's deadline, waiting at most d.Timeout (rueidis's dial
// timeout, the store's Timeout): a caller with more time (the watch, a
// first connection) holds no more than that the calls that wait for its
// connection. A connection is not handed to a call with less time left
// than its dial took (HELLO's round trip takes about as long), or than
// half of d.Timeout when the dial took longer: it is kept for the next
// call, which has its whole Timeout for HELLO, and the call fails at its
// deadline (failed at once, it would be sent again and refused again
// until then). The connection returned is closed at ctx's deadline, or
// d.Timeout after it is returned when that comes first, unless Redis has
// answered on it by then (see heard). An error is the dial's, or a
// dialTimeout when d.Timeout passed first (the dial goes on), or one
// wrapping errMakerGaveUp and ctx's error when ctx ended first or too
// little of its time was left, or one wrapping net.ErrClosed once c is
// closed. rueidis hands the outcome to every call that needs the
// connection meanwhile; those that errMakerGaveUp fails are sent again
// (see unsent).
func (c *connector) DialCtx(ctx context.Context, dst string, d *net.Dialer, tc *tls.Config) (net.Conn, error) {
	call, entered := ctx, time.Now()
	heardBy, bounded := ctx.Deadline()
	if dl, ok := ctx.Deadline(); d.Timeout > 0 && (!ok || time.Until(dl) > d.Timeout) {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d.Timeout)
		defer cancel()
	}
	c.mu.Lock()
	a := c.addrs[dst]
	if a == nil {
		a = &dialing{ended: make(chan struct{})}
		c.addrs[dst] = a
	}
	a.waiting++
	leave := func() { // with c.mu held
		a.waiting--
		c.forget(dst, a)
		c.mu.Unlock()
	}
	failures := a.failures
	for {
		if c.closed {
			leave()
			return nil, fmt.Errorf("redis: connecting to %s: %w (the client was closed)", dst, net.ErrClosed)
		}
		if n := len(a.parked); n > 0 {
			p := a.parked[n-1]
			dl, ok := ctx.Deadline()
			if ok && time.Until(dl) < min(p.took, d.Timeout/2) {
				leave()
				// Returned at once, the failure would have the call
				// send again (its context has not ended) and be
				// refused again until it does.
				<-ctx.Done()
				return nil, fmt.Errorf("redis: connecting to %s: %w: %w (the connection was made, and is kept for the next call: "+
					"too little of this call's time was left for its HELLO)", dst, errMakerGaveUp, context.DeadlineExceeded)
			}
			a.parked = a.parked[:n-1]
			leave()
			p.timer.Stop()
			callBound := bounded // HELLO's bound is the call's deadline
			if d.Timeout > 0 {
				if by := time.Now().Add(d.Timeout); !bounded || by.Before(heardBy) {
					heardBy, bounded, callBound = by, true, false
				}
			}
			// Parked before this call came, it waited idle (no call took
			// it when it was made, or the one that waited left it).
			kept := !entered.Before(p.at)
			return newHeard(p.conn, heardBy, callBound, kept), nil
		}
		if a.failures != failures {
			err := a.err
			leave()
			return nil, err
		}
		if a.running < dialsPerAddr {
			a.running++
			c.dials.Add(1)
			go c.background(a, dst, d, tc)
		}
		ended := a.ended
		c.mu.Unlock()
		select {
		case <-ended:
		case <-ctx.Done():
			c.mu.Lock()
			leave()
			if err := call.Err(); err != nil {
				return nil, fmt.Errorf("redis: connecting to %s: %w: %w (the connection is still being made in the background)",
					dst, errMakerGaveUp, err)
			}
			return nil, &dialTimeout{fmt.Sprintf("redis: connecting to %s: no connection within the dial timeout, %v "+
				"(it is still being made in the background)", dst, d.Timeout)}
		}
		c.mu.Lock()
	}
}

// background makes one connection to dst within backgroundDial, unless c
// is closed first, and keeps it in a for a call to claim, or records its
// error.
func (c *connector) background(a *dialing, dst string, d *net.Dialer, tc *tls.Config) {
	defer c.dials.Done()
	bd := *d
	bd.Timeout = max(d.Timeout, backgroundDial)
	ctx, cancel := context.WithTimeout(c.ctx, bd.Timeout)
	defer cancel()
	start := time.Now()
	conn, err := c.dial(ctx, dst, &bd, tc)
	took := time.Since(start)
	c.mu.Lock()
	defer c.mu.Unlock()
	a.running--
	switch {
	case err != nil:
		a.failures++
		a.err = err
	case c.closed, len(a.parked) >= dialsPerAddr:
		conn.Close()
	default:
		p := &parked{conn: conn, took: took, at: time.Now()}
		p.timer = time.AfterFunc(c.park, func() { c.unpark(dst, a, p) })
		a.parked = append(a.parked, p)
	}
	close(a.ended)
	a.ended = make(chan struct{})
	c.forget(dst, a)
}

// unpark closes p, kept in a (dst's), unless a call claimed it.
func (c *connector) unpark(dst string, a *dialing, p *parked) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, q := range a.parked {
		if q == p {
			a.parked = append(a.parked[:i], a.parked[i+1:]...)
			p.conn.Close()
			c.forget(dst, a)
			return
		}
	}
}

// forget drops a, dst's state, once it holds nothing: no dial under way,
// no connection kept and no call waiting, so that c holds state only for
// the addresses in use (a Cluster's nodes move over time). The next call
// to dst starts afresh. c.mu must be held.
func (c *connector) forget(dst string, a *dialing) {
	if a.running == 0 && len(a.parked) == 0 && a.waiting == 0 && c.addrs[dst] == a {
		delete(c.addrs, dst)
	}
}

// heard is a connection handed to a call for its HELLO (see DialCtx): it
// is closed at the call's deadline (if it has one) unless Redis has
// answered on it by then. A call that could not send its HELLO in time (a loaded machine
// that did not run it) has rueidis close the connection after a PING,
// which a stalled Redis does not answer: without this, the call, and every
// call waiting for that connection whatever its deadline, were held until
// Redis answered or rueidis gave up a second later. A HELLO sent in time
// and not answered fails at that deadline all the same; when that deadline
// is the call's own, shorter than the store's Timeout, the failure wraps
// errMakerGaveUp, so that the calls waiting for the connection are sent
// again. After the first reply, a Read costs one atomic load more than
// the connection's own.
type heard struct {
	net.Conn
	state     atomic.Int32 // heardWaiting, heardAnswered or heardClosed
	timer     *time.Timer
	by        time.Time // the deadline
	callBound bool      // by is the deadline of the call making the connection
	kept      bool      // the connection waited idle for a call (see parked)
}

// The states of a heard connection.
const (
	heardWaiting  = iota // nothing read yet, the deadline not passed
	heardAnswered        // Redis answered before the deadline: kept
	heardClosed          // the deadline passed first: closed
)

// newHeard returns conn, closed at by unless Redis answers on it first;
// callBound says by is the deadline of the call making the connection, and
// kept that the connection waited idle for it.
func newHeard(conn net.Conn, by time.Time, callBound, kept bool) *heard {
	h := &heard{Conn: conn, by: by, callBound: callBound, kept: kept}
	if by.IsZero() {
		return h
	}
	h.timer = time.AfterFunc(time.Until(by), func() {
		if h.state.CompareAndSwap(heardWaiting, heardClosed) {
			h.Conn.Close()
		}
	})
	return h
}

// Read reads from the connection; its first bytes keep it open.
func (h *heard) Read(b []byte) (int, error) {
	n, err := h.Conn.Read(b)
	if n > 0 && h.state.Load() == heardWaiting && h.state.CompareAndSwap(heardWaiting, heardAnswered) && h.timer != nil {
		h.timer.Stop()
	}
	if err != nil && n == 0 {
		err = h.unanswered(err)
	}
	return n, err
}

// Write writes to the connection.
func (h *heard) Write(b []byte) (int, error) {
	n, err := h.Conn.Write(b)
	if err != nil {
		err = h.unanswered(err)
	}
	return n, err
}

// unanswered returns err, a failure to read or write before Redis answered
// HELLO, as an error wrapping errMakerGaveUp once the deadline of the call
// making the connection has passed, a timeout as a dialTimeout (rueidis
// would replace a timeout with context.DeadlineExceeded, which unsent
// takes for another call's giving up), and any other failure of a kept
// connection as one wrapping errKeptLost. After HELLO's answer, err is
// returned as it is.
func (h *heard) unanswered(err error) error {
	state := h.state.Load()
	switch {
	case state == heardAnswered:
		return err
	case h.callBound && !time.Now().Before(h.by):
		return fmt.Errorf("redis: %w: Redis did not answer its HELLO by that call's deadline (%v)", errMakerGaveUp, err)
	case state == heardClosed || errors.Is(err, os.ErrDeadlineExceeded):
		return &dialTimeout{fmt.Sprintf("redis: Redis did not answer HELLO within the dial timeout (%v)", err)}
	case h.kept:
		return fmt.Errorf("redis: %w, before HELLO's answer: %w", errKeptLost, err)
	}
	return err
}

// Close closes the connection and stops its deadline.
func (h *heard) Close() error {
	if h.timer != nil {
		h.timer.Stop()
	}
	return h.Conn.Close()
}
