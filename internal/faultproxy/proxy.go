// Package faultproxy is a TCP proxy for fault-injection tests: it sits
// between a client and a server on loopback, forwards bytes both ways, and on
// demand delays them (SetLatency), resets every open connection (ResetAll) or
// resets new connections as soon as they arrive (RefuseNew). Tests put it
// between sluice and Redis to see what latency and broken connections do to
// decisions.
package faultproxy

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Stats counts what a Proxy has done since it started.
type Stats struct {
	// Accepted counts connections accepted from clients, refused ones
	// included.
	Accepted int64
	// Refused counts connections reset on arrival while RefuseNew was on,
	// or because the target could not be dialled.
	Refused int64
	// Reset counts open connections reset by ResetAll.
	Reset int64
	// Open is the number of connections being forwarded now.
	Open int
}

// A Proxy forwards TCP connections from its loopback address to a target.
// Its methods are safe for concurrent use. Close stops it and every
// goroutine it started.
type Proxy struct {
	ln     net.Listener
	target string

	latency atomic.Int64 // time.Duration added to every chunk, each way
	refuse  atomic.Bool

	mu     sync.Mutex
	links  map[*link]struct{}
	closed bool
	wg     sync.WaitGroup

	accepted, refused, reset atomic.Int64
}

// New starts a proxy on 127.0.0.1 (a free port) that forwards to target
// ("host:port").
func New(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faultproxy: %w", err)
	}
	p := &Proxy{ln: ln, target: target, links: map[*link]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the address clients dial: "127.0.0.1:port".
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// SetLatency delays every chunk of bytes by d in each direction (a round
// trip gains 2d), from now on, including chunks already waiting. Zero
// removes the delay. Order is kept; throughput is not limited.
func (p *Proxy) SetLatency(d time.Duration) { p.latency.Store(int64(max(d, 0))) }

// RefuseNew makes the proxy reset connections as soon as it accepts them
// (on) or forward them again (off). Open connections are not affected:
// ResetAll them too to simulate a server that is gone.
func (p *Proxy) RefuseNew(on bool) { p.refuse.Store(on) }

// ResetAll resets every open connection (a TCP RST to the client, the
// target's side closed) and returns how many there were.
func (p *Proxy) ResetAll() int {
	p.mu.Lock()
	links := make([]*link, 0, len(p.links))
	for l := range p.links {
		links = append(links, l)
	}
	p.mu.Unlock()
	for _, l := range links {
		l.close(true)
	}
	p.reset.Add(int64(len(links)))
	return len(links)
}

// Stats returns the current counts.
func (p *Proxy) Stats() Stats {
	p.mu.Lock()
	open := len(p.links)
	p.mu.Unlock()
	return Stats{Accepted: p.accepted.Load(), Refused: p.refused.Load(), Reset: p.reset.Load(), Open: open}
}

// Close stops accepting, closes every connection and waits for the
// proxy's goroutines to end. It is idempotent.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	links := make([]*link, 0, len(p.links))
	for l := range p.links {
		links = append(links, l)
	}
	p.mu.Unlock()
	err := p.ln.Close()
	for _, l := range links {
		l.close(false)
	}
	p.wg.Wait()
	return err
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		p.accepted.Add(1)
		if p.refuse.Load() {
			p.refused.Add(1)
			rst(c)
			continue
		}
		p.wg.Add(1)
		go p.serve(c)
	}
}

// serve dials the target for client c and forwards until either side ends.
func (p *Proxy) serve(c net.Conn) {
	defer p.wg.Done()
	up, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		p.refused.Add(1)
		rst(c)
		return
	}
	l := &link{client: c, server: up, done: make(chan struct{})}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		c.Close()
		up.Close()
		return
	}
	p.links[l] = struct{}{}
	p.mu.Unlock()

	var wg sync.WaitGroup
	wg.Go(func() { p.pipe(l, c, up) })
	wg.Go(func() { p.pipe(l, up, c) })
	wg.Wait()
	l.close(false)
	p.mu.Lock()
	delete(p.links, l)
	p.mu.Unlock()
}

// chunk is bytes read at a time, to be written latency after it.
type chunk struct {
	data []byte
	at   time.Time
}

// pipe copies src to dst, each chunk delayed by the latency current when it
// is due. When src ends its sending (EOF) and every chunk has been written,
// dst's sending is ended too (a TCP half-close) and the other way goes on;
// any other end of src, or a failed write, ends the link.
func (p *Proxy) pipe(l *link, src, dst net.Conn) {
	chunks := make(chan chunk, 256)
	var ended bool // src ended with EOF; read once chunks is closed
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(chunks)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				select {
				case chunks <- chunk{buf[:n], time.Now()}:
				case <-l.done:
					return
				}
			}
			if err != nil {
				ended = errors.Is(err, io.EOF)
				return
			}
		}
	})
	delivered := true
	for ch := range chunks {
		if !l.sleepUntil(ch.at, &p.latency) {
			delivered = false
			break
		}
		if _, err := dst.Write(ch.data); err != nil {
			delivered = false
			break
		}
	}
	if delivered && ended {
		if hc, ok := dst.(interface{ CloseWrite() error }); ok && hc.CloseWrite() == nil {
			wg.Wait()
			return
		}
	}
	l.close(false)
	for range chunks { // let the reader end
	}
	wg.Wait()
}

// link is one proxied connection.
type link struct {
	client, server net.Conn
	once           sync.Once
	done           chan struct{}
}

// close ends the link; with reset the client gets a TCP RST.
func (l *link) close(reset bool) {
	l.once.Do(func() {
		close(l.done)
		if reset {
			rst(l.client)
		} else {
			l.client.Close()
		}
		l.server.Close()
	})
}

// sleepUntil waits until at plus the latency, re-reading the latency as it
// changes; false if the link ended first.
func (l *link) sleepUntil(at time.Time, latency *atomic.Int64) bool {
	for {
		wait := time.Until(at.Add(time.Duration(latency.Load())))
		if wait <= 0 {
			return true
		}
		t := time.NewTimer(min(wait, 10*time.Millisecond))
		select {
		case <-t.C:
		case <-l.done:
			t.Stop()
			return false
		}
	}
}

// rst closes c with a TCP RST instead of a FIN.
func rst(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Close()
}
