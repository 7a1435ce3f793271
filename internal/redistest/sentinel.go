package redistest

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// Sentinel starts a Redis Sentinel (redis-server --sentinel) monitoring
// master under the name masterSet with a quorum of one, and returns when it
// reports master's address. It is killed when the test ends.
func Sentinel(tb testing.TB, master *Server, masterSet string) *Server {
	tb.Helper()
	bin := serverPath(tb)
	dir := tb.TempDir()
	ports, err := freePorts(1)
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	conf := filepath.Join(dir, "sentinel.conf") // Sentinel rewrites it
	text := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nlogfile %s\n"+
		"sentinel monitor %s 127.0.0.1 %d 1\nsentinel down-after-milliseconds %s 1000\n",
		ports[0], dir, filepath.Join(dir, "redis.log"), masterSet, master.Port, masterSet)
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0])), Port: ports[0], Dir: dir, tb: tb,
		args: []string{bin, conf, "--sentinel"}}
	tb.Cleanup(s.Kill)
	if err := s.start(); err != nil {
		tb.Fatalf("redistest: sentinel: %v", err)
	}
	err = waitFor(10*time.Second, func() error {
		v, err := s.Do("SENTINEL", "GET-MASTER-ADDR-BY-NAME", masterSet)
		if err != nil {
			return err
		}
		if addr, ok := v.([]any); !ok || len(addr) != 2 || addr[1] != strconv.Itoa(master.Port) {
			return fmt.Errorf("sentinel reports master %v", v)
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("redistest: sentinel: %v", err)
	}
	return s
}
