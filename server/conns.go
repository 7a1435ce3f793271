package server

import (
	"container/list"
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
)

// boundedListener holds at most max connections open at once. At the
// limit, when another arrives, it closes an idle connection so that a
// client holding connections open cannot lock others out: first a
// stranger's — one no request was made on yet — the oldest first; then the
// keep-alive connection idle the longest between its requests. With none
// idle (every connection is in a request, each bounded by the server's
// timeouts), Accept holds the new connection until one closes or goes
// idle, which it then closes, and the clients after it wait in the
// kernel's backlog.
//
// Idleness is known from an http.Server's ConnState (set it to
// connState), and use from its requests (set ConnContext to connContext):
// a connection is used once a request reaches the handler (wrap it with
// markUsed) or, on a listener whose callers prove who they are (the admin
// listener), once a request proves its caller (markCaller) — a stranger's
// answered request (/healthz, a 404) leaves its connection a stranger's,
// first to be closed. Reading a connection's first bytes does not use
// it: HTTP/2's opening preface makes a connection active and idle again
// with no request. A gRPC server reports no states: on a listener that
// tracks its peers (trackPeers), each call the server admits marks its
// connection used (used), and a used connection counts as idle from its
// last admitted call.
type boundedListener struct {
	net.Listener
	slots chan struct{} // one token per open connection
	done  chan struct{} // closed by Close
	shed  func()        // counts a closed idle connection

	// wake tells an Accept waiting for a slot that a connection went idle
	// (while waiting is set): one it may close to make room.
	wake    chan struct{}
	waiting atomic.Bool

	mu        sync.Mutex
	fresh     *list.List // *boundedConn not yet used, oldest first
	idle      *list.List // *boundedConn used and idle, longest idle first
	closeOnce sync.Once
	// With trackPeers: the open connections by their RemoteAddr.
	peers map[net.Addr]*boundedConn
}

func newBoundedListener(ln net.Listener, max int, shed func()) *boundedListener {
	return &boundedListener{Listener: ln, slots: make(chan struct{}, max), done: make(chan struct{}),
		wake: make(chan struct{}, 1), fresh: list.New(), idle: list.New(), shed: shed}
}

// Accept accepts a connection, then waits for a free slot for it, making
// one from an idle connection if there is any, or from the first that
// goes idle while it waits: a connection is closed to make room only when
// another has arrived. While it waits, the accepted connection is one over
// max. One goroutine calls Accept at a time (a server's accept loop).
func (l *boundedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	select {
	case l.slots <- struct{}{}:
	default:
		if !l.waitForSlot() {
			c.Close()
			return nil, net.ErrClosed
		}
	}
	bc := &boundedConn{Conn: c, l: l}
	l.mu.Lock()
	if l.peers != nil {
		l.peers[c.RemoteAddr()] = bc
	}
	bc.elem = l.fresh.PushBack(bc)
	l.mu.Unlock()
	return bc, nil
}

// waitForSlot takes a slot once one is free, closing the longest idle
// connection now and, while none is free, each that goes idle; it reports
// false when the listener closes first.
func (l *boundedListener) waitForSlot() bool {
	select {
	case <-l.wake: // told before this wait: stale
	default:
	}
	l.waiting.Store(true)
	defer l.waiting.Store(false)
	l.closeLongestIdle()
	for {
		select {
		case l.slots <- struct{}{}:
			return true
		case <-l.wake:
			select {
			case l.slots <- struct{}{}:
				return true
			default:
				l.closeLongestIdle()
			}
		case <-l.done:
			return false
		}
	}
}

// Close closes the listener and wakes an Accept waiting for a slot.
func (l *boundedListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

func (l *boundedListener) closeLongestIdle() {
	l.mu.Lock()
	e := l.fresh.Front()
	if e == nil {
		e = l.idle.Front()
	}
	var c *boundedConn
	if e != nil {
		c = e.Value.(*boundedConn)
		c.unlink()
	}
	l.mu.Unlock()
	if c != nil {
		c.Close()
		if l.shed != nil {
			l.shed()
		}
	}
}

// connState is the http.Server's ConnState: a new connection (among the
// fresh since Accept) or an idle one may be closed to make room, an active
// one may not. An idle connection no request reached (markUsed) is among
// the fresh again.
func (l *boundedListener) connState(nc net.Conn, st http.ConnState) {
	c := asBounded(nc)
	if c == nil || st == http.StateNew {
		return
	}
	l.mu.Lock()
	c.unlink()
	idle := st == http.StateIdle && !c.closed
	switch {
	case idle && c.used:
		c.elem = l.idle.PushBack(c)
	case idle:
		c.elem = l.fresh.PushBack(c)
	}
	l.mu.Unlock()
	if idle && l.waiting.Load() {
		select {
		case l.wake <- struct{}{}:
		default:
		}
	}
}

// asBounded returns the boundedConn under nc (a TLS connection's), or nil.
func asBounded(nc net.Conn) *boundedConn {
	if tc, ok := nc.(*tls.Conn); ok {
		nc = tc.NetConn()
	}
	c, _ := nc.(*boundedConn)
	return c
}

// connKey is the context key under which connContext keeps a request's
// connection.
type connKey struct{}

// connContext is the http.Server's ConnContext: it keeps the connection
// in its requests' context, for markUsed.
func connContext(ctx context.Context, nc net.Conn) context.Context {
	if c := asBounded(nc); c != nil {
		return context.WithValue(ctx, connKey{}, c)
	}
	return ctx
}

// markUsed serves h, first marking the request's connection used: the
// last to be closed to make room, after the strangers' (see
// boundedListener).
func (l *boundedListener) markUsed(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, ok := r.Context().Value(connKey{}).(*boundedConn); ok && c.l == l {
			l.mu.Lock()
			c.use()
			l.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	})
}

// markCaller marks the connection of r, a request that proved its caller,
// used: on a listener whose handler markUsed does not wrap, only callers'
// connections outlive strangers'. It does nothing for a request on no
// boundedListener.
func markCaller(r *http.Request) {
	if c, ok := r.Context().Value(connKey{}).(*boundedConn); ok {
		c.l.mu.Lock()
		c.use()
		c.l.mu.Unlock()
	}
}

// trackPeers makes l know its connections by their RemoteAddr, for used.
// Call it before l accepts.
func (l *boundedListener) trackPeers() {
	l.peers = map[net.Addr]*boundedConn{}
}

// used makes the connection whose RemoteAddr is peer the most recently
// used: the last to be closed to make room.
func (l *boundedListener) used(peer net.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c := l.peers[peer]; c != nil {
		c.use()
	}
}

// boundedConn gives its slot back when closed, once.
type boundedConn struct {
	net.Conn
	l *boundedListener
	// Guarded by l.mu.
	elem   *list.Element // in l.fresh until used, then in l.idle while idle
	used   bool          // marked by markUsed or markCaller, or a call was admitted on it
	closed bool
}

// use makes c used and, if it is idle, the most recently used. c.l.mu is
// held.
func (c *boundedConn) use() {
	switch {
	case c.elem == nil:
		c.used = true
	case c.used:
		c.l.idle.MoveToBack(c.elem)
	default:
		c.unlink()
		c.used, c.elem = true, c.l.idle.PushBack(c)
	}
}

// unlink takes c out of the idle or fresh connections. c.l.mu is held.
func (c *boundedConn) unlink() {
	if c.elem == nil {
		return
	}
	if !c.used {
		c.l.fresh.Remove(c.elem)
	} else {
		c.l.idle.Remove(c.elem)
	}
	c.elem = nil
}

func (c *boundedConn) Close() error {
	c.l.mu.Lock()
	first := !c.closed
	c.closed = true
	c.unlink()
	if first && c.l.peers != nil {
		if addr := c.RemoteAddr(); c.l.peers[addr] == c {
			delete(c.l.peers, addr)
		}
	}
	c.l.mu.Unlock()
	err := c.Conn.Close()
	if first {
		<-c.l.slots
	}
	return err
}
