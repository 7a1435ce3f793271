// Package redistest starts real redis-server processes for tests: a
// standalone server (Standalone), a master with a replica and three
// Sentinels (SentinelGroup), or a three-master cluster, optionally with
// replicas (Cluster). Each process listens on a free loopback port, keeps its
// files in a t.TempDir(), and is killed by t.Cleanup.
//
// A missing redis-server is a test failure, never a skip: `make test`
// installs it (Debian package redis-server), or run
// `apt-get install redis-server`.
package redistest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/rueidis"
)

// startTimeout bounds how long a server may take to answer PING.
const startTimeout = 15 * time.Second

// Server is one redis-server process on 127.0.0.1. Its methods are safe for
// concurrent use, but Kill and Restart should not race each other.
type Server struct {
	// Addr is "127.0.0.1:port", the address clients dial.
	Addr string
	// TLSAddr is "127.0.0.1:port", the TLS port of a server started with
	// TLS (Secure, Cluster WithTLS); "" otherwise.
	TLSAddr string
	// Port is the client port; BusPort the cluster bus port (cluster nodes).
	Port, BusPort int
	// Dir holds the server's log (redis.log) and, for cluster nodes, nodes.conf.
	Dir string

	tb   testing.TB
	args []string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
	auth []string      // user and password Do authenticates with; nil: none
}

// Standalone starts a standalone redis-server and returns when it answers
// PING. It is killed when the test ends.
func Standalone(tb testing.TB) *Server {
	tb.Helper()
	return startNew(tb, false, 0, false, nil)
}

// startNew starts a new server, on other free ports if another process took
// the chosen ones in the meantime. prepare, when not nil, adds to the
// server's arguments before it starts.
func startNew(tb testing.TB, cluster bool, nodeTimeout time.Duration, partial bool, prepare func(*Server) error) *Server {
	tb.Helper()
	for attempt := 1; ; attempt++ {
		s := newServer(tb, cluster, nodeTimeout)
		if partial {
			s.args = append(s.args, "--cluster-require-full-coverage", "no")
		}
		if prepare != nil {
			if err := prepare(s); err != nil {
				tb.Fatalf("redistest: %v", err)
			}
		}
		err := s.start()
		if err == nil {
			return s
		}
		if attempt == 3 || !strings.Contains(err.Error(), "in use") {
			tb.Fatalf("redistest: %v", err)
		}
	}
}

// serverPath returns the redis-server binary or fails the test saying how
// to install it.
func serverPath(tb testing.TB) string {
	tb.Helper()
	p, err := exec.LookPath("redis-server")
	if err != nil {
		tb.Fatalf("redistest: redis-server not found in PATH (%v): the Redis tests need a real Redis 7; "+
			"run `make test`, which installs it, or `apt-get install redis-server`", err)
	}
	out, err := exec.Command(p, "--version").Output()
	if err != nil {
		tb.Fatalf("redistest: %s --version: %v", p, err)
	}
	if major, ok := redisMajor(string(out)); !ok || major < 7 {
		tb.Fatalf("redistest: %s is %q: the Redis tests need Redis 7.0 or later (the store's scripts use PEXPIRETIME): "+
			"Debian 12 and Ubuntu 24.04 ship it (`apt-get install redis-server`)", p, strings.TrimSpace(string(out)))
	}
	return p
}

// redisMajor reads the major version from the output of
// `redis-server --version` ("Redis server v=7.0.15 sha=…"); ok is false
// when the output has no version.
func redisMajor(version string) (major int, ok bool) {
	_, v, found := strings.Cut(version, " v=")
	if !found {
		return 0, false
	}
	n, _, _ := strings.Cut(v, ".")
	major, err := strconv.Atoi(n)
	return major, err == nil
}

// newServer picks free ports and prepares the arguments of a server; it does
// not start it.
func newServer(tb testing.TB, cluster bool, nodeTimeout time.Duration) *Server {
	tb.Helper()
	bin := serverPath(tb)
	dir := tb.TempDir()
	ports, err := freePorts(2)
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	s := &Server{
		Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0])),
		Port: ports[0], Dir: dir, tb: tb,
	}
	s.args = []string{bin,
		"--port", strconv.Itoa(s.Port),
		"--bind", "127.0.0.1",
		"--dir", dir,
		"--logfile", filepath.Join(dir, "redis.log"),
		"--save", "",
		"--appendonly", "no",
		"--daemonize", "no",
		"--protected-mode", "no",
		"--repl-diskless-sync-delay", "0", // replicas sync at once
	}
	if cluster {
		s.BusPort = ports[1]
		s.args = append(s.args,
			"--cluster-enabled", "yes",
			"--cluster-config-file", filepath.Join(dir, "nodes.conf"),
			"--cluster-port", strconv.Itoa(s.BusPort),
			"--cluster-node-timeout", strconv.FormatInt(nodeTimeout.Milliseconds(), 10),
		)
	}
	tb.Cleanup(s.Kill)
	return s
}

// freePorts returns n distinct TCP ports that were free on 127.0.0.1.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for len(ports) < n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// start runs the process and waits for PING.
func (s *Server) start() error {
	s.mu.Lock()
	cmd := exec.Command(s.args[0], s.args[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // no orphan if the test binary dies
	if err := cmd.Start(); err != nil {
		s.mu.Unlock()
		return fmt.Errorf("starting redis-server: %w", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()

	deadline := time.Now().Add(startTimeout)
	for {
		select {
		case <-done:
			return fmt.Errorf("redis-server on port %d exited at start; its log:\n%s", s.Port, s.log())
		default:
		}
		if v, err := s.Do("PING"); err == nil && v == "PONG" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis-server on port %d did not answer PING within %v; its log:\n%s", s.Port, startTimeout, s.log())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (s *Server) log() string {
	b, _ := os.ReadFile(filepath.Join(s.Dir, "redis.log"))
	return string(b)
}

// Kill stops the server at once (SIGKILL), as a crash would, and waits for
// the process to exit. Killing a stopped server does nothing.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Kill()
	<-done
}

// Pause stops the server's process (SIGSTOP), as a machine that freezes
// would: it keeps its connections and its data but answers nothing until
// Resume.
func (s *Server) Pause() { s.signal(syscall.SIGSTOP) }

// Resume continues a paused server (SIGCONT); it then answers what it was
// sent meanwhile.
func (s *Server) Resume() { s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) {
	s.tb.Helper()
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	if cmd == nil {
		s.tb.Fatalf("redistest: signal %v to a server that is not running", sig)
	}
	if err := cmd.Process.Signal(sig); err != nil {
		s.tb.Fatalf("redistest: signal %v: %v", sig, err)
	}
}

// Restart kills the server if it runs and starts it again on the same port
// with the same files (a cluster node keeps its identity), returning when it
// answers PING. Data is not kept: the servers run without persistence.
func (s *Server) Restart() {
	s.tb.Helper()
	s.Kill()
	if err := s.start(); err != nil {
		s.tb.Fatalf("redistest: restart: %v", err)
	}
}

// Do sends one command on a fresh connection and returns its reply: a
// string for simple and bulk strings, int64, []any for arrays, nil for a
// null, and an error for an error reply or a failed connection. It never
// fails the test, so it can be used to wait for a state.
func (s *Server) Do(args ...string) (any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.mu.Lock()
	auth := s.auth
	s.mu.Unlock()
	return do(ctx, s.Addr, auth, args...)
}

// MustDo is Do that fails the test on an error.
func (s *Server) MustDo(args ...string) any {
	s.tb.Helper()
	v, err := s.Do(args...)
	if err != nil {
		s.tb.Fatalf("redistest: %s on %s: %v", strings.Join(args, " "), s.Addr, err)
	}
	return v
}

// Info returns the INFO section's fields (e.g. Info("commandstats")), as
// name → value.
func (s *Server) Info(section string) (map[string]string, error) {
	v, err := s.Do("INFO", section)
	if err != nil {
		return nil, err
	}
	text, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("INFO %s: unexpected reply %T", section, v)
	}
	return parseInfo(text), nil
}

func parseInfo(text string) map[string]string {
	m := make(map[string]string)
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			m[k] = v
		}
	}
	return m
}

// Client returns a rueidis client of this server alone (no cluster
// discovery, no client-side cache), closed when the test ends.
func (s *Server) Client(tb testing.TB) rueidis.Client {
	tb.Helper()
	c, err := rueidis.NewClient(rueidis.ClientOption{
		InitAddress:       []string{s.Addr},
		ForceSingleClient: true,
		DisableCache:      true,
	})
	if err != nil {
		tb.Fatalf("redistest: client of %s: %v", s.Addr, err)
	}
	tb.Cleanup(c.Close)
	return c
}

// waitFor polls cond every 20ms until it returns nil or timeout passes, and
// returns its last error then.
func waitFor(timeout time.Duration, cond func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var errNotYet = errors.New("not yet")
