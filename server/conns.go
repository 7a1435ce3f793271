package server

import (
	"container/list"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
)

// boundedListener holds at most max connections open at once. At the
// limit, before it accepts another, it closes the connection that has been
// idle the longest — a keep-alive connection between requests, or one that
// has not sent a request yet — so that a client holding connections open
// cannot lock others out. With none idle (every connection is in a
// request, each bounded by the server's timeouts), Accept waits for one to
// close and new clients wait in the kernel's backlog.
//
// Idleness is known from an http.Server's ConnState (set it to connState).
// A gRPC server reports no states: on a listener that tracks its peers
// (trackPeers), each call the server admits marks its connection used
// (used). The connections no call was admitted on, a stranger's, are
// closed first, the oldest first; then the one whose last admitted call
// is the oldest.
type boundedListener struct {
	net.Listener
	slots chan struct{} // one token per open connection
	done  chan struct{} // closed by Close
	shed  func()        // counts a closed idle connection

	mu        sync.Mutex
	idle      *list.List // *boundedConn, longest idle first
	closeOnce sync.Once
	// With trackPeers: peers are the open connections by their
	// RemoteAddr, and fresh those not yet used, oldest first (idle holds
	// the used ones).
	peers map[net.Addr]*boundedConn
	fresh *list.List
}

func newBoundedListener(ln net.Listener, max int, shed func()) *boundedListener {
	return &boundedListener{Listener: ln, slots: make(chan struct{}, max), done: make(chan struct{}),
		idle: list.New(), shed: shed}
}

// Accept waits for a free slot, making one from the longest-idle
// connection if there is any, then accepts.
func (l *boundedListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	default:
		l.closeLongestIdle()
		select {
		case l.slots <- struct{}{}:
		case <-l.done:
			return nil, net.ErrClosed
		}
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	bc := &boundedConn{Conn: c, l: l}
	if l.peers != nil {
		l.mu.Lock()
		l.peers[c.RemoteAddr()] = bc
		bc.elem = l.fresh.PushBack(bc)
		l.mu.Unlock()
	}
	return bc, nil
}

// Close closes the listener and wakes an Accept waiting for a slot.
func (l *boundedListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

func (l *boundedListener) closeLongestIdle() {
	l.mu.Lock()
	e := l.idle.Front()
	if l.fresh != nil && l.fresh.Len() > 0 {
		e = l.fresh.Front()
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

// connState is the http.Server's ConnState: a new or idle connection may
// be closed to make room, an active one may not.
func (l *boundedListener) connState(nc net.Conn, st http.ConnState) {
	if tc, ok := nc.(*tls.Conn); ok {
		nc = tc.NetConn()
	}
	c, ok := nc.(*boundedConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	c.unlink()
	if (st == http.StateNew || st == http.StateIdle) && !c.closed {
		c.elem = l.idle.PushBack(c)
	}
}

// trackPeers makes l know its connections by their RemoteAddr, for used.
// Call it before l accepts.
func (l *boundedListener) trackPeers() {
	l.peers, l.fresh = map[net.Addr]*boundedConn{}, list.New()
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
	elem   *list.Element // in l.idle, or l.fresh until used
	used   bool          // a call was admitted on it (trackPeers)
	closed bool
}

// unlink takes c out of the idle or fresh connections. c.l.mu is held.
func (c *boundedConn) unlink() {
	if c.elem == nil {
		return
	}
	if c.l.fresh != nil && !c.used {
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
