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
// Idleness is known from an http.Server's ConnState (set it to connState);
// a listener whose server reports no states (gRPC) only caps.
type boundedListener struct {
	net.Listener
	slots chan struct{} // one token per open connection
	done  chan struct{} // closed by Close
	shed  func()        // counts a closed idle connection

	mu        sync.Mutex
	idle      *list.List // *boundedConn, longest idle first
	closeOnce sync.Once
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
	return &boundedConn{Conn: c, l: l}, nil
}

// Close closes the listener and wakes an Accept waiting for a slot.
func (l *boundedListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

func (l *boundedListener) closeLongestIdle() {
	l.mu.Lock()
	e := l.idle.Front()
	var c *boundedConn
	if e != nil {
		c = e.Value.(*boundedConn)
		l.idle.Remove(e)
		c.elem = nil
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
	if c.elem != nil {
		l.idle.Remove(c.elem)
		c.elem = nil
	}
	if (st == http.StateNew || st == http.StateIdle) && !c.closed {
		c.elem = l.idle.PushBack(c)
	}
}

// boundedConn gives its slot back when closed, once.
type boundedConn struct {
	net.Conn
	l *boundedListener
	// Guarded by l.mu.
	elem   *list.Element
	closed bool
}

func (c *boundedConn) Close() error {
	c.l.mu.Lock()
	first := !c.closed
	c.closed = true
	if c.elem != nil {
		c.l.idle.Remove(c.elem)
		c.elem = nil
	}
	c.l.mu.Unlock()
	err := c.Conn.Close()
	if first {
		<-c.l.slots
	}
	return err
}
