package redistest

import (
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/internal/testpki"
)

// Sentinel starts a Redis Sentinel (redis-server --sentinel) monitoring
// master under the name masterSet with a quorum of one, and returns when it
// reports master's address. It is killed when the test ends.
func Sentinel(tb testing.TB, master *Server, masterSet string) *Server {
	tb.Helper()
	s, err := startSentinel(tb, master, masterSet, sentinelConf{quorum: 1})
	if err != nil {
		tb.Fatalf("redistest: sentinel: %v", err)
	}
	return s
}

// SentinelWithPasswords starts a master whose default user needs
// masterPassword and a Sentinel of it (quorum one) that needs
// sentinelPassword from its clients and gives masterPassword to the
// master, as a Sentinel deployment with passwords of its own is set up.
// Their Do authenticates with those passwords. Both are killed when the
// test ends.
func SentinelWithPasswords(tb testing.TB, masterSet, masterPassword, sentinelPassword string) (master, sentinel *Server) {
	tb.Helper()
	master = startNew(tb, false, 0, false, func(s *Server) error {
		s.args = append(s.args, "--requirepass", masterPassword)
		s.auth = []string{"default", masterPassword}
		return nil
	})
	sentinel, err := startSentinel(tb, master, masterSet, sentinelConf{quorum: 1, requirepass: sentinelPassword, authPass: masterPassword})
	if err != nil {
		tb.Fatalf("redistest: sentinel: %v", err)
	}
	return master, sentinel
}

// sentinelDownAfter is how long Sentinels wait for a silent master before
// they call it down, and a failover starts.
const sentinelDownAfter = 500 * time.Millisecond

// sentinelConf is how a Sentinel is set up: its quorum; with ca, TLS
// everywhere; with requirepass, the password its clients need; with
// authPass, the password it gives the master and replicas.
type sentinelConf struct {
	quorum                int
	ca                    *testpki.CA
	requirepass, authPass string
}

// startSentinel starts one Sentinel of master as c says and waits until it
// reports master's address, on other free ports if another process took
// the chosen ones in the meantime.
func startSentinel(tb testing.TB, master *Server, masterSet string, c sentinelConf) (*Server, error) {
	for attempt := 1; ; attempt++ {
		s, err := startSentinelOnce(tb, master, masterSet, c)
		if err == nil || attempt == 3 || !strings.Contains(err.Error(), "in use") {
			return s, err
		}
	}
}

// startSentinelOnce is startSentinel on one choice of ports.
func startSentinelOnce(tb testing.TB, master *Server, masterSet string, c sentinelConf) (*Server, error) {
	quorum, ca := c.quorum, c.ca
	bin := serverPath(tb)
	dir := tb.TempDir()
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "sentinel.conf") // Sentinel rewrites it
	text := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nlogfile %s\n"+
		"sentinel monitor %s 127.0.0.1 %d %d\nsentinel down-after-milliseconds %s %d\n"+
		"sentinel failover-timeout %s 5000\n",
		ports[0], dir, filepath.Join(dir, "redis.log"), masterSet, master.clientPort(), quorum,
		masterSet, sentinelDownAfter.Milliseconds(), masterSet)
	if ca != nil {
		// Sentinels speak TLS to clients, to each other and to the servers.
		text += fmt.Sprintf("tls-port %d\ntls-cert-file %s\ntls-key-file %s\ntls-client-cert-file %s\n"+
			"tls-client-key-file %s\ntls-ca-cert-file %s\ntls-replication yes\n",
			ports[1], ca.File("server"), ca.KeyFile("server"), ca.File("client"), ca.KeyFile("client"), ca.File("ca"))
	}
	if c.requirepass != "" {
		text += fmt.Sprintf("requirepass %s\n", c.requirepass)
	}
	if c.authPass != "" {
		text += fmt.Sprintf("sentinel auth-pass %s %s\n", masterSet, c.authPass)
	}
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		return nil, err
	}
	s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0])), Port: ports[0], Dir: dir, tb: tb,
		args: []string{bin, conf, "--sentinel"}}
	if c.requirepass != "" {
		s.auth = []string{"default", c.requirepass}
	}
	if ca != nil {
		s.TLSAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1]))
	}
	tb.Cleanup(s.Kill)
	if err := s.start(); err != nil {
		return nil, err
	}
	err = waitFor(10*time.Second, func() error {
		v, err := s.Do("SENTINEL", "GET-MASTER-ADDR-BY-NAME", masterSet)
		if err != nil {
			return err
		}
		if addr, ok := v.([]any); !ok || len(addr) != 2 || addr[1] != strconv.Itoa(master.clientPort()) {
			return fmt.Errorf("sentinel reports master %v", v)
		}
		return nil
	})
	return s, err
}

// SentinelFixture is a master, its replica and three Sentinels (quorum 2)
// that fail the master over to the replica 0.5 s after it stops answering.
type SentinelFixture struct {
	// Name is the master set's name.
	Name string
	// Servers are the master and the replica as they started; which of
	// them is the master now, Master says.
	Servers []*Server
	// Sentinels are the three Sentinels.
	Sentinels []*Server
	// CA, for SentinelGroupTLS, signs every certificate; nil otherwise.
	CA *testpki.CA
}

// SentinelGroup starts a master, a replica of it and three Sentinels
// monitoring them as name, and returns when the replica is in sync and
// every Sentinel knows the replica and the two other Sentinels (so that a
// failover can be agreed on at once). Everything is killed when the test
// ends.
func SentinelGroup(tb testing.TB, name string) *SentinelFixture {
	tb.Helper()
	return sentinelGroup(tb, name, nil)
}

// SentinelGroupTLS is SentinelGroup with every process speaking TLS to
// clients and to each other (replication, Sentinels' links) on TLS ports
// (Server.TLSAddr; TLSAddrs for a client), with certificates CA signs: the
// Sentinels name the master by its TLS port. The fixture's own commands
// keep plaintext ports.
func SentinelGroupTLS(tb testing.TB, name string) *SentinelFixture {
	tb.Helper()
	return sentinelGroup(tb, name, newCA(tb))
}

func sentinelGroup(tb testing.TB, name string, ca *testpki.CA) *SentinelFixture {
	tb.Helper()
	var prepare func(*Server) error
	if ca != nil {
		prepare = func(s *Server) error {
			s.args = append(s.args, "--tls-replication", "yes")
			return withTLS(s, ca)
		}
	}
	master, replica := startNew(tb, false, 0, false, prepare), startNew(tb, false, 0, false, prepare)
	if _, err := replica.Do("REPLICAOF", "127.0.0.1", strconv.Itoa(master.clientPort())); err != nil {
		tb.Fatalf("redistest: REPLICAOF: %v", err)
	}
	if err := waitFor(10*time.Second, func() error {
		info, err := replica.Info("replication")
		if err != nil {
			return err
		}
		if info["master_link_status"] != "up" {
			return fmt.Errorf("replica %s: master_link_status=%s", replica.Addr, info["master_link_status"])
		}
		// The link is up before the master counts the replica online;
		// WAIT answering 1 is the master's word that it acknowledges.
		if n, err := master.Do("WAIT", "1", "100"); err != nil || n != int64(1) {
			return fmt.Errorf("master %s: WAIT 1 answered %v, %v", master.Addr, n, err)
		}
		return nil
	}); err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	f := &SentinelFixture{Name: name, Servers: []*Server{master, replica}, Sentinels: make([]*Server, 3), CA: ca}
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := range f.Sentinels {
		wg.Go(func() { f.Sentinels[i], errs[i] = startSentinel(tb, master, name, sentinelConf{quorum: 2, ca: ca}) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			tb.Fatalf("redistest: sentinel: %v", err)
		}
	}
	// Sentinels learn of each other from hello messages sent every 2 s
	// through the master and the replica; on a machine running every
	// package's tests at once one was seen to know only one other after
	// 20 s (a clean-clone CI run), so the bound is a minute.
	if err := waitFor(time.Minute, func() error {
		for _, s := range f.Sentinels {
			v, err := s.Do("SENTINEL", "MASTER", name)
			if err != nil {
				return err
			}
			m := pairs(v)
			if m["num-other-sentinels"] != "2" || m["num-slaves"] != "1" {
				return fmt.Errorf("sentinel %s knows %s other sentinels and %s replicas", s.Addr, m["num-other-sentinels"], m["num-slaves"])
			}
		}
		return nil
	}); err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	return f
}

// pairs reads a flat array reply of name, value, … as a map.
func pairs(v any) map[string]string {
	m := make(map[string]string)
	a, _ := v.([]any)
	for i := 0; i+1 < len(a); i += 2 {
		k, _ := a[i].(string)
		m[k] = fmt.Sprint(a[i+1])
	}
	return m
}

// Addrs returns the Sentinels' addresses, for a Sentinel client.
func (f *SentinelFixture) Addrs() []string {
	out := make([]string, len(f.Sentinels))
	for i, s := range f.Sentinels {
		out[i] = s.Addr
	}
	return out
}

// TLSAddrs returns the Sentinels' TLS addresses (SentinelGroupTLS).
func (f *SentinelFixture) TLSAddrs() []string {
	out := make([]string, len(f.Sentinels))
	for i, s := range f.Sentinels {
		out[i] = s.TLSAddr
	}
	return out
}

// ClientTLS returns a TLS configuration that trusts the fixture's CA and
// presents a client certificate it signed (SentinelGroupTLS).
func (f *SentinelFixture) ClientTLS(tb testing.TB) *tls.Config {
	tb.Helper()
	return clientTLS(tb, f.CA)
}

// Master returns the server the first Sentinel that answers names as the
// master now.
func (f *SentinelFixture) Master() (*Server, error) {
	var last error
	for _, s := range f.Sentinels {
		v, err := s.Do("SENTINEL", "GET-MASTER-ADDR-BY-NAME", f.Name)
		if err != nil {
			last = err
			continue
		}
		addr, ok := v.([]any)
		if !ok || len(addr) != 2 {
			return nil, fmt.Errorf("sentinel %s reports master %v", s.Addr, v)
		}
		for _, srv := range f.Servers {
			if strconv.Itoa(srv.clientPort()) == addr[1] {
				return srv, nil
			}
		}
		return nil, fmt.Errorf("sentinel %s reports master %v, not one of the fixture's", s.Addr, v)
	}
	return nil, last
}

// WaitMaster waits up to timeout until the Sentinels name a master other
// than old and it reports role:master, and returns it.
func (f *SentinelFixture) WaitMaster(old *Server, timeout time.Duration) (*Server, error) {
	var m *Server
	err := waitFor(timeout, func() error {
		var err error
		if m, err = f.Master(); err != nil {
			return err
		}
		if m == old {
			return fmt.Errorf("sentinels still name %s", old.Addr)
		}
		info, err := m.Info("replication")
		if err != nil {
			return err
		}
		if info["role"] != "master" {
			return fmt.Errorf("%s is named master but reports role:%s", m.Addr, info["role"])
		}
		return nil
	})
	return m, err
}
