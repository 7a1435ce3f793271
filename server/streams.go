package server

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/http/httptrace"
	"slices"
	"sync"
	"time"
)

// streamWriter is the writer the reverse proxy answers through. The
// listener's write_timeout bounds the wait for the upstream's answer to
// start (see answerWait); from then on the answer lives as long as it
// moves data, as an event stream or a long download does: each write must
// finish, and the next begin, within idle of the last, else the request is
// cancelled (the proxy then aborts the answer); with idle 0 nothing bounds
// it once it started. An interim (1xx) answer is no start: the wait goes
// on, bounded as before, and so does a request body's upload behind a 100
// Continue. The request's body is bounded alike (see watchedBody). A
// connection switched to another protocol (a WebSocket) is handed over as
// a switchedConn, which closes after idle without a byte in either
// direction.
type streamWriter struct {
	http.ResponseWriter
	rc       *http.ResponseController
	idle     time.Duration
	cancel   context.CancelFunc
	switched *switchedConns
	wait     answerWait   // the wait for the answer to start
	body     *watchedBody // the request's body, nil for none
	timer    *time.Timer  // from the answer's start: cancels after idle
	started  bool         // the answer started: wait ended
	// fields are the answer's header fields set before the upstream
	// answered (the RateLimit fields): the proxy clears the header after
	// an interim (1xx) answer, and the final answer gets them back, as it
	// has them without one.
	fields http.Header
	// own are the names of the fields the limits in front write on the
	// answers they admit (ownFields), which sluice's alone fill when it set
	// them (see dropOwn).
	own []string
	// trailed is the upstream's answer when it is a gRPC answer whose
	// status comes in trailers (grpcTrailed), nil for any other.
	trailed   *http.Response
	interim   bool // an interim answer was written, not yet the final one
	unbounded bool // with idle 0, the write deadline was lifted
	http1     bool // the request came over HTTP/1.x with a body
}

// closeUnlessBodyOver makes an HTTP/1.x answer that starts before its
// request's body ended the last on its connection. The proxy is full
// duplex (the upstream may answer before it reads, and the body goes on
// to it), so net/http does not drain the body as the answer starts; were
// the connection kept, the rest of a body the upstream left unread would
// be read as the client's next request, and a body cut short would leave
// its connection in the middle of it (RFC 9112 §9.6: the connection is
// closed instead).
func (w *streamWriter) closeUnlessBodyOver() {
	if w.http1 && w.body != nil && !w.body.isOver() {
		w.Header().Set("Connection", "close")
	}
}

// extend gives the answer, which started, idle more to write and to move
// its next byte. With idle 0 it lifts the listener's write_timeout as the
// answer starts, and bounds nothing after.
func (w *streamWriter) extend() {
	if !w.started {
		w.started = true
		w.wait.end()
	}
	if w.idle <= 0 {
		if !w.unbounded {
			w.unbounded = true
			w.rc.SetWriteDeadline(time.Time{})
		}
		return
	}
	if w.timer == nil {
		w.timer = time.AfterFunc(w.idle, w.cancel)
	} else {
		w.timer.Reset(w.idle)
	}
	w.rc.SetWriteDeadline(time.Now().Add(w.idle))
}

// stop ends the wait and the idle timer when the handler returns.
func (w *streamWriter) stop() {
	w.wait.end()
	if w.timer != nil {
		w.timer.Stop()
	}
}

// WriteHeader writes the answer's status. An interim (1xx) status but 101
// Switching Protocols starts nothing: it is written within the deadline of
// the wait for the answer (see answerWait), which goes on.
func (w *streamWriter) WriteHeader(code int) {
	switch {
	case code >= 200 && w.interim:
		w.interim = false
		h := w.Header()
		for k, v := range w.fields {
			h[k] = append(slices.Clip(v), h[k]...)
		}
	case code >= 100 && code < 200 && code != http.StatusSwitchingProtocols:
		w.interim = true
		w.ResponseWriter.WriteHeader(code)
		return
	}
	if code != http.StatusSwitchingProtocols {
		w.closeUnlessBodyOver()
	}
	w.extend()
	w.ResponseWriter.WriteHeader(code)
}

// dropOwn removes from h, an answer's header or trailers as the upstream
// sent them or as the proxy copied them (with prefix http.TrailerPrefix),
// the fields of own names that sluice set on this answer (fields), so
// that the client reads one value of each, sluice's. Fields of those names
// on an answer sluice set none on (an exempt request's) are the upstream's
// alone, and stay.
func (w *streamWriter) dropOwn(h http.Header, prefix string) {
	for _, name := range w.own {
		if _, set := w.fields[name]; set {
			delete(h, prefix+name)
		}
	}
}

// endTrailers ends the answer's trailers, which the proxy copied as they
// came into h, the answer's header, with prefix http.TrailerPrefix: the
// upstream's fields of own names sluice set on this answer are dropped
// (dropOwn), and on a gRPC answer whose status came in trailers (trailed,
// its grpc-status received: announced trailers never sent are none)
// sluice's take their place, the values its header carries, as a
// grpclimit.Server sends an admitted call's RateLimit fields in its
// trailers: a client reading the call's end (grpclimit.Pacer) learns that
// the limiter saw it, which a proxy's own status without them does not say.
// An answer without trailers gets none: a trailers-only answer carries
// sluice's fields in its one header block, a gRPC-Web answer its status in
// its body.
func (w *streamWriter) endTrailers(h http.Header) {
	w.dropOwn(h, http.TrailerPrefix)
	if w.trailed == nil || len(w.trailed.Trailer["Grpc-Status"]) == 0 {
		return // no status came: the upstream's failure stays its own
	}
	for _, name := range w.own {
		if v, set := w.fields[name]; set {
			h[http.TrailerPrefix+name] = slices.Clip(v)
		}
	}
}

func (w *streamWriter) Write(b []byte) (int, error) {
	if !w.started {
		w.closeUnlessBodyOver()
	}
	w.extend()
	return w.ResponseWriter.Write(b)
}

// FlushError flushes what was written, within idle.
func (w *streamWriter) FlushError() error {
	if !w.started {
		w.closeUnlessBodyOver()
	}
	w.extend()
	return w.rc.Flush()
}

// Hijack hands the connection over for a switched protocol, as a
// switchedConn.
func (w *streamWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	w.stop()
	conn, rw, err := w.rc.Hijack()
	if err != nil {
		return nil, nil, err
	}
	return w.switched.add(conn, w.idle), rw, nil
}

// Unwrap returns the writer beneath, for http.ResponseController.
func (w *streamWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// ownAnswerRoom is the time the listener's write deadline gives the
// proxy, past write_timeout, while it waits for the upstream's answer to
// start: the transport gives up at write_timeout, and the proxy needs the
// room to write its 504 (on HTTP/2 a stream whose write deadline passes is
// reset, whatever its handler writes after).
const ownAnswerRoom = time.Second

// answerWait bounds the wait for the answer to start. The upstream has
// write (write_timeout; no bound with 0) to start its answer once the
// request reached it whole (the transport's ResponseHeaderTimeout, then a
// 504); the listener's write deadline passes ownAnswerRoom after that,
// moved from each sign of life of the request: the proxy's start, each
// read of its body (see watchedBody), and the request written to the
// upstream. Once the answer starts, its writer bounds the writes (see
// streamWriter), and the wait ends; it ends too when the handler returns
// (the transport's goroutines may outlive it, and the connection serve
// another request). The zero answerWait bounds nothing.
type answerWait struct {
	rc    *http.ResponseController
	write time.Duration
	mu    sync.Mutex
	ended bool
}

// from moves the write deadline to write and ownAnswerRoom from now, unless
// the wait ended.
func (a *answerWait) from(now time.Time) {
	if a.write <= 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.ended {
		a.rc.SetWriteDeadline(now.Add(a.write + ownAnswerRoom))
	}
}

// wroteRequest is httptrace.ClientTrace's WroteRequest: the transport wrote
// the request whole to the upstream, whose wait for the answer starts.
func (a *answerWait) wroteRequest(httptrace.WroteRequestInfo) { a.from(time.Now()) }

// end ends the wait: from moves the deadline no more.
func (a *answerWait) end() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.ended = true
}

// switchedConns are the connections the proxy switched to another
// protocol: the http.Server no longer knows them, so the Server closes
// them itself when it stops.
type switchedConns struct {
	mu    sync.Mutex
	conns map[*switchedConn]struct{}
	done  bool
}

func newSwitchedConns() *switchedConns {
	return &switchedConns{conns: make(map[*switchedConn]struct{})}
}

// add returns conn as a switchedConn that closes after idle without a
// byte moved (never with idle 0), tracked until it closes.
func (s *switchedConns) add(conn net.Conn, idle time.Duration) net.Conn {
	c := &switchedConn{Conn: conn, idle: idle, set: s}
	c.extend()
	s.mu.Lock()
	done := s.done
	if !done {
		s.conns[c] = struct{}{}
	}
	s.mu.Unlock()
	if done {
		c.Conn.Close() // the server has stopped
	}
	return c
}

// closeAll closes every switched connection, and those switched later.
func (s *switchedConns) closeAll() {
	s.mu.Lock()
	s.done = true
	conns := s.conns
	s.conns = nil
	s.mu.Unlock()
	for c := range conns {
		c.Conn.Close()
	}
}

// len returns the switched connections open now.
func (s *switchedConns) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// A switchedConn is a connection switched to another protocol: every read
// or write gives both directions idle more.
type switchedConn struct {
	net.Conn
	idle time.Duration
	set  *switchedConns
	once sync.Once
}

// extend gives both directions idle more (no bound with idle 0).
func (c *switchedConn) extend() {
	if c.idle > 0 {
		c.SetDeadline(time.Now().Add(c.idle))
	}
}

func (c *switchedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.extend()
	}
	return n, err
}

func (c *switchedConn) Write(p []byte) (int, error) {
	c.extend()
	return c.Conn.Write(p)
}

func (c *switchedConn) Close() error {
	c.once.Do(func() {
		c.set.mu.Lock()
		delete(c.set.conns, c)
		c.set.mu.Unlock()
	})
	return c.Conn.Close()
}
