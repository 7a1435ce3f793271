package server

import (
	"container/list"
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync"

	grpcstats "google.golang.org/grpc/stats"
)

// boundedListener holds at most max connections open at once. At the
// limit, before it accepts another, it closes the connection that has been
// idle the longest — a keep-alive connection between requests, or one that
// has not sent a request yet — so that a client holding connections open
// cannot lock others out. With none idle (every connection is in a
// request, each bounded by the server's timeouts), Accept waits for one to
// close and new clients wait in the kernel's backlog.
//
// Idleness is known from an http.Server's ConnState (set it to connState),
// or from a gRPC server's calls (set its stats handler to grpcStates): a
// gRPC connection is idle while it has no call in progress.
type boundedListener struct {
	net.Listener
	slots chan struct{} // one token per open connection
	done  chan struct{} // closed by Close
	shed  func()        // counts a closed idle connection

	mu        sync.Mutex
	idle      *list.List // *boundedConn, longest idle first
	closeOnce sync.Once
	// peers are the open connections by their peer's address, for
	// grpcStates (nil without).
	peers map[string]*boundedConn
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
		l.peers[c.RemoteAddr().String()] = bc
		bc.elem = l.idle.PushBack(bc) // idle until its first call
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
	l.setIdle(c, st == http.StateNew || st == http.StateIdle)
}

// setIdle makes c the most recently idle connection, or takes it out of
// the idle ones. l.mu is held.
func (l *boundedListener) setIdle(c *boundedConn, idle bool) {
	if c.elem != nil {
		l.idle.Remove(c.elem)
		c.elem = nil
	}
	if idle && !c.closed {
		c.elem = l.idle.PushBack(c)
	}
}

// grpcStates returns the stats handler (grpc.StatsHandler) by which a gRPC
// server serving on l tells it which connections are idle: those with no
// call in progress. Call it before the server serves.
func (l *boundedListener) grpcStates() grpcstats.Handler {
	l.peers = map[string]*boundedConn{}
	return grpcStates{l}
}

// grpcStates counts the calls in progress on each connection of l.
type grpcStates struct{ l *boundedListener }

// grpcConnKey is the context key of a gRPC connection's boundedConn.
type grpcConnKey struct{}

func (g grpcStates) TagConn(ctx context.Context, info *grpcstats.ConnTagInfo) context.Context {
	g.l.mu.Lock()
	c := g.l.peers[info.RemoteAddr.String()]
	g.l.mu.Unlock()
	if c == nil {
		return ctx
	}
	return context.WithValue(ctx, grpcConnKey{}, c)
}

func (grpcStates) HandleConn(context.Context, grpcstats.ConnStats) {}

func (grpcStates) TagRPC(ctx context.Context, _ *grpcstats.RPCTagInfo) context.Context { return ctx }

func (g grpcStates) HandleRPC(ctx context.Context, s grpcstats.RPCStats) {
	var delta int
	switch s.(type) {
	case *grpcstats.Begin:
		delta = 1
	case *grpcstats.End:
		delta = -1
	default:
		return
	}
	c, ok := ctx.Value(grpcConnKey{}).(*boundedConn)
	if !ok {
		return
	}
	g.l.mu.Lock()
	defer g.l.mu.Unlock()
	c.calls += delta
	g.l.setIdle(c, c.calls == 0)
}

// boundedConn gives its slot back when closed, once.
type boundedConn struct {
	net.Conn
	l *boundedListener
	// Guarded by l.mu.
	elem   *list.Element
	closed bool
	calls  int // gRPC calls in progress (grpcStates)
}

func (c *boundedConn) Close() error {
	c.l.mu.Lock()
	first := !c.closed
	c.closed = true
	if c.elem != nil {
		c.l.idle.Remove(c.elem)
		c.elem = nil
	}
	if first && c.l.peers != nil {
		if addr := c.RemoteAddr().String(); c.l.peers[addr] == c {
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
