package redis

import (
	"net"
	"sync/atomic"
	"time"
)

// settingUp is a connection handed to rueidis, which sends HELLO on it
// before any call may use it: every call to that node waits for HELLO
// meanwhile, whatever its own deadline. A connection that has read no
// reply by the deadline of the call it was made for is closed then, so
// that neither HELLO nor the PING rueidis sends to close a connection
// whose HELLO failed (answered by a Redis that no longer answers only
// after a second) holds those calls past it: a call with more time than a
// decision's Timeout (the watch, a Ping, rueidis's own dials) holds the
// others no longer than its own wait for the dial.
type settingUp struct {
	net.Conn
	replied atomic.Bool
	timer   *time.Timer
}

// setUpBy returns conn, closed at deadline unless a reply has been read
// from it by then. A zero deadline returns conn itself.
func setUpBy(conn net.Conn, deadline time.Time) net.Conn {
	if deadline.IsZero() {
		return conn
	}
	c := &settingUp{Conn: conn}
	c.timer = time.AfterFunc(time.Until(deadline), func() {
		if !c.replied.Load() {
			conn.Close()
		}
	})
	return c
}

// Read reads from the connection; once it has read a reply, the
// connection is never closed for want of one.
func (c *settingUp) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 && !c.replied.Load() {
		c.replied.Store(true)
		c.timer.Stop()
	}
	return n, err
}

// Close closes the connection.
func (c *settingUp) Close() error {
	c.timer.Stop()
	return c.Conn.Close()
}
