package redistest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

// Monitor follows the commands a server executes (the MONITOR command),
// telling those a client sent from those a script issued.
type Monitor struct {
	s    *Server
	conn net.Conn
	r    *bufio.Reader
}

// Command is one command seen by a Monitor.
type Command struct {
	// Client is the sender's address, or "lua" for a command a script ran.
	Client string
	// Name is the command name in upper case, e.g. "EVALSHA".
	Name string
}

// Monitor starts following s's commands; it stops when the test ends.
func (s *Server) Monitor(tb testing.TB) *Monitor {
	tb.Helper()
	conn, err := net.DialTimeout("tcp", s.Addr, 5*time.Second)
	if err != nil {
		tb.Fatalf("redistest: monitor: %v", err)
	}
	tb.Cleanup(func() { conn.Close() })
	m := &Monitor{s: s, conn: conn, r: bufio.NewReader(conn)}
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprint(conn, "*1\r\n$7\r\nMONITOR\r\n")
	if line, err := m.r.ReadString('\n'); err != nil || line != "+OK\r\n" {
		tb.Fatalf("redistest: MONITOR answered %q, %v", line, err)
	}
	return m
}

// Next returns the commands executed since the previous call (or since
// Monitor): it sends a marker ECHO on a connection of its own and reads
// up to it.
func (m *Monitor) Next() ([]Command, error) {
	marker := fmt.Sprintf("redistest-marker-%d", time.Now().UnixNano())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := do(ctx, m.s.Addr, nil, "ECHO", marker); err != nil {
		return nil, err
	}
	m.conn.SetDeadline(time.Now().Add(5 * time.Second))
	var out []Command
	for {
		line, err := m.r.ReadString('\n')
		if err != nil {
			return out, err
		}
		if strings.Contains(line, marker) {
			return out, nil
		}
		// +1700000000.123456 [0 127.0.0.1:5555] "EVALSHA" "…" …
		open, end := strings.IndexByte(line, '['), strings.IndexByte(line, ']')
		if open < 0 || end < open {
			continue
		}
		src := line[open+1 : end]
		if _, client, ok := strings.Cut(src, " "); ok {
			src = client
		}
		rest := strings.TrimSpace(line[end+1:])
		name, _, _ := strings.Cut(strings.TrimPrefix(rest, `"`), `"`)
		out = append(out, Command{Client: src, Name: strings.ToUpper(name)})
	}
}
