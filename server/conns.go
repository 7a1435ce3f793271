package server

import (
	"container/list"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
)

// boundedListener holds at most max connections open at once. At the
// limit, when another arrives, it closes an idle connection so that a
// client holding connections open cannot lock others out: first a
// stranger's — one no request was made on yet — the oldest first; then the
// keep-alive connection idle the longest between its requests. With none
// idle (every connection is in a request, each bounded by the server's
// timeouts), Accept holds the new connection until one closes, and the
// clients after it wait in the kernel's backlog.
//
// Idleness is known from an http.Server's ConnState (set it to connState):
// a connection is used once a request starts on it. A gRPC server reports
// no states: on a listener that tracks its peers (trackPeers), each call
// the server admits marks its connection used (used), and a used
// connection counts as idle from its last admitted call.
type boundedListener struct {
	net.Listener
	slots chan struct{} // one token per open connection
	done  chan struct{} // closed by Close
	shed  func()        // counts a closed idle connection

	mu        sync.Mutex
	fresh     *list.List // *boundedConn not yet used, oldest first
	idle      *list.List // *boundedConn used and idle, longest idle first
	closeOnce sync.Once
	// With trackPeers: the open connections by their RemoteAddr.
	peers map[net.Addr]*boundedConn
}

func newBoundedListener(ln net.Listener, max int, shed func()) *boundedListener {
	return &boundedListener{Listener: ln, slots: make(chan struct{}, max), done: make(chan struct{}),
		fresh: list.New(), idle: list.New(), shed: shed}
}

// Accept accepts a connection, then waits for a free slot for it, making
// one from an idle connection if there is any: a connection is closed to
// make room only when another has arrived. While it waits, the accepted
// connection is one over max.
func (l *boundedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	select {
	case l.slots <- struct{}{}:
	default:
		l.closeLongestIdle()
		select {
		case l.slots <- struct{}{}:
		case <-l.done:
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
// one may not.
func (l *boundedListener) connState(nc net.Conn, st http.ConnState) {
	if tc, ok := nc.(*tls.Conn); ok {
		nc = tc.NetConn()
	}
	c, ok := nc.(*boundedConn)
	if !ok || st == http.StateNew {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	c.unlink()
	c.used = true
	if st == http.StateIdle && !c.closed {
		c.elem = l.idle.PushBack(c)
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
	c := l.peers[peer]
	switch {
	case c == nil || c.elem == nil:
	case c.used:
		l.idle.MoveToBack(c.elem)
	default:
		c.unlink()
		c.used, c.elem = true, l.idle.PushBack(c)
	}
}

// boundedConn gives its slot back when closed, once.
type boundedConn struct {
	net.Conn
	l *boundedListener
	// Guarded by l.mu.
	elem   *list.Element // in l.fresh until used, then in l.idle while idle
	used   bool          // a request started, or a call was admitted, on it
	closed bool
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
