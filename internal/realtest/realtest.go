// Package realtest starts the real programs that sit next to sluice in
// production — nginx, HAProxy and Caddy as front proxies, headless Chromium as the
// browser of the web pages, Prometheus scraping the metrics — so that tests
// exercise them, not imitations.
// Each process listens on a free loopback port, keeps its files in a
// t.TempDir(), and is killed (with its children) by t.Cleanup; its output is
// logged when the test fails.
//
// A missing program is a test failure, never a skip: `make deps` (which
// `make test` runs) installs them (Debian packages nginx, haproxy, caddy,
// chromium, prometheus and podman), or run
// `apt-get install nginx haproxy caddy chromium prometheus podman`.
package realtest

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startTimeout bounds how long a program may take to accept connections.
const startTimeout = 15 * time.Second

// stopTimeout bounds how long a program may take to exit after SIGTERM
// before it is killed.
const stopTimeout = 5 * time.Second

// FreeAddr returns "127.0.0.1:port" for a TCP port that was free when it
// was chosen. The port is picked at random below the kernel's ephemeral
// range (net.ipv4.ip_local_port_range), from which the local ports of
// outgoing connections and of ":0" listeners come: a port from that range
// can be taken by any connection of a test running beside this one before
// the program under test binds it.
func FreeAddr(tb testing.TB) string {
	tb.Helper()
	lo, hi := 10000, ephemeralStart()
	for range 100 {
		if hi-lo < 1000 {
			break // an unusual range: let the kernel choose
		}
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(lo+rand.IntN(hi-lo))))
		if err != nil {
			continue // taken
		}
		addr := ln.Addr().String()
		ln.Close()
		return addr
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("realtest: finding a free port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// ephemeralStart returns the first port of the kernel's ephemeral range
// (32768, Linux's default, when it cannot be read).
func ephemeralStart() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 32768
	}
	n, err := strconv.Atoi(f[0])
	if err != nil {
		return 32768
	}
	return n
}

// Replace returns text with each old string of pairs (old, new, old, new…)
// replaced by its new one. Each old string must occur exactly once: an
// example file that no longer has the line a test rewrites fails the test
// instead of being tested half-rewritten.
func Replace(tb testing.TB, name, text string, pairs ...string) string {
	tb.Helper()
	if len(pairs)%2 != 0 {
		tb.Fatalf("realtest: Replace(%s): odd number of strings", name)
	}
	for i := 0; i < len(pairs); i += 2 {
		if n := strings.Count(text, pairs[i]); n != 1 {
			tb.Fatalf("realtest: %s: %q occurs %d times, want exactly once (the test rewrites it)", name, pairs[i], n)
		}
		text = strings.Replace(text, pairs[i], pairs[i+1], 1)
	}
	return text
}

// lookPath finds a program in PATH or in the directories Debian installs
// daemons to (not in a non-root PATH), or fails the test saying how to
// install it.
func lookPath(tb testing.TB, name, pkg string) string {
	tb.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, dir := range []string{"/usr/sbin", "/usr/bin", "/sbin"} {
		if p := dir + "/" + name; isExecutable(p) {
			return p
		}
	}
	tb.Fatalf("realtest: %s not found in PATH, /usr/sbin or /usr/bin: this test runs the real program; "+
		"run `make deps` (make test runs it), which installs it, or `apt-get install %s`", name, pkg)
	return ""
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// Process is a program started by this package. Its output (stdout and
// stderr together) is kept for error messages and logged if the test fails.
type Process struct {
	name string
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
	out  *Buffer
}

// start runs args in dir with env added to the environment, in its own
// process group, and waits until it accepts TCP connections on addr. The
// process group is stopped when the test ends.
func start(tb testing.TB, name, dir string, env []string, addr string, args ...string) *Process {
	tb.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out := &Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid:   true,            // its workers can be stopped with it
		Pdeathsig: syscall.SIGKILL, // no orphan if the test binary dies
	}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("realtest: starting %s: %v", name, err)
	}
	p := &Process{name: name, cmd: cmd, done: make(chan struct{}), out: out}
	go func() { cmd.Wait(); close(p.done) }()
	tb.Cleanup(func() {
		p.stop()
		if tb.Failed() {
			tb.Logf("%s output:\n%s", name, p.Output())
		}
	})
	if err := p.waitListening(addr); err != nil {
		tb.Fatalf("realtest: %v; its output:\n%s", err, p.Output())
	}
	return p
}

func (p *Process) waitListening(addr string) error {
	deadline := time.Now().Add(startTimeout)
	for {
		select {
		case <-p.done:
			return fmt.Errorf("%s exited at start (%v)", p.name, p.cmd.ProcessState)
		default:
		}
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not accept connections on %s within %v", p.name, addr, startTimeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stop sends SIGTERM to the process group, kills it if it has not exited
// within stopTimeout, and waits for the process.
func (p *Process) stop() {
	pgid := -p.cmd.Process.Pid
	syscall.Kill(pgid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(stopTimeout):
		syscall.Kill(pgid, syscall.SIGKILL)
		<-p.done
	}
	syscall.Kill(pgid, syscall.SIGKILL) // workers that outlived their master
}

// Output is what the process has written so far.
func (p *Process) Output() string { return p.out.String() }
