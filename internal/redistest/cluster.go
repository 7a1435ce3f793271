package redistest

import (
	"crypto/tls"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/sluice-dev/sluice/internal/testpki"
)

// slots is the number of hash slots of a Redis Cluster.
const slots = 16384

// ClusterFixture is a running Redis Cluster of three masters, each serving
// a third of the hash slots, and optionally replicas of them.
type ClusterFixture struct {
	// Masters serve slots [0,5461), [5461,10922) and [10922,16384) in order.
	Masters []*Server
	// Replicas holds the replicas of Masters[i/n] for n replicas per master.
	Replicas []*Server
	// IDs maps each node's Addr to its cluster node ID.
	IDs map[string]string
	// CA, with WithTLS, signs the nodes' certificates and a client's
	// (see Secure); nil otherwise.
	CA *testpki.CA
}

// A ClusterOption configures Cluster.
type ClusterOption func(*clusterConfig)

type clusterConfig struct {
	replicas    int
	nodeTimeout time.Duration
	partial     bool
	tls         bool
}

// WithReplicas gives every master n replicas (0 by default), for tests of
// failover.
func WithReplicas(n int) ClusterOption { return func(c *clusterConfig) { c.replicas = max(n, 0) } }

// WithPartialCoverage sets cluster-require-full-coverage no: while a
// master is down, the other masters go on serving their slots instead of
// refusing every command with CLUSTERDOWN (Redis's default).
func WithPartialCoverage() ClusterOption { return func(c *clusterConfig) { c.partial = true } }

// WithTLS gives every node a TLS port (Server.TLSAddr), on which clients
// must present a certificate the fixture's CA signed, and runs the cluster
// bus and replication over TLS: a client connected over TLS is told the
// nodes' TLS ports (TLSAddrs). The fixture's own commands keep a plaintext
// port.
func WithTLS() ClusterOption { return func(c *clusterConfig) { c.tls = true } }

// WithNodeTimeout sets cluster-node-timeout, after which an unreachable
// master is failed over (2s by default; Redis's own default is 15s).
func WithNodeTimeout(d time.Duration) ClusterOption {
	return func(c *clusterConfig) { c.nodeTimeout = d }
}

// Cluster starts a Redis Cluster of three masters (and the replicas asked
// for) and returns when every node reports cluster_state:ok, knows every
// other node and sees all 16384 slots served. It assigns slots with CLUSTER
// ADDSLOTSRANGE and joins nodes with CLUSTER MEET, which is faster than
// redis-cli --cluster create. Every node is killed when the test ends.
func Cluster(tb testing.TB, opts ...ClusterOption) *ClusterFixture {
	tb.Helper()
	cfg := clusterConfig{nodeTimeout: 2 * time.Second}
	for _, o := range opts {
		o(&cfg)
	}
	var ca *testpki.CA
	var prepare func(*Server) error
	if cfg.tls {
		ca = newCA(tb)
		prepare = func(s *Server) error {
			s.args = append(s.args, "--tls-cluster", "yes", "--tls-replication", "yes")
			return withTLS(s, ca)
		}
	}
	n := 3 * (1 + cfg.replicas)
	for attempt := 1; ; attempt++ {
		nodes := make([]*Server, n)
		var wg sync.WaitGroup
		for i := range nodes {
			wg.Go(func() { nodes[i] = startNew(tb, true, cfg.nodeTimeout, cfg.partial, prepare) })
		}
		wg.Wait()
		if tb.Failed() {
			tb.FailNow()
		}
		c := &ClusterFixture{Masters: nodes[:3], Replicas: nodes[3:], IDs: make(map[string]string), CA: ca}
		err := c.form()
		if err == nil {
			return c
		}
		// A node on a port a cluster of another test had used can be met
		// by that cluster's nodes before this one is formed, and joins it
		// (its config epoch is then no longer 0): start afresh, on other
		// ports.
		if attempt == 3 || !strings.Contains(err.Error(), "config epoch is already non-zero") {
			tb.Fatalf("redistest: forming the cluster: %v", err)
		}
		for _, s := range nodes {
			s.Kill()
		}
	}
}

func (c *ClusterFixture) all() []*Server {
	return append(append([]*Server(nil), c.Masters...), c.Replicas...)
}

// form assigns slots, joins the nodes, attaches replicas and waits for a
// healthy cluster.
func (c *ClusterFixture) form() error {
	all := c.all()
	for i, s := range all {
		id, err := s.Do("CLUSTER", "MYID")
		if err != nil {
			return err
		}
		c.IDs[s.Addr] = id.(string)
		// Distinct config epochs before the nodes meet, as redis-cli does,
		// so that no epoch collision has to be resolved.
		if _, err := s.Do("CLUSTER", "SET-CONFIG-EPOCH", strconv.Itoa(i+1)); err != nil {
			return err
		}
	}
	for i, m := range c.Masters {
		lo, hi := i*slots/3, (i+1)*slots/3-1
		if _, err := m.Do("CLUSTER", "ADDSLOTSRANGE", strconv.Itoa(lo), strconv.Itoa(hi)); err != nil {
			return err
		}
	}
	for _, s := range all[1:] {
		if _, err := all[0].Do("CLUSTER", "MEET", "127.0.0.1", strconv.Itoa(s.Port), strconv.Itoa(s.BusPort)); err != nil {
			return err
		}
	}
	if err := waitFor(20*time.Second, func() error { return c.check(len(all), false) }); err != nil {
		return err
	}
	if len(c.Replicas) == 0 {
		return nil
	}
	per := len(c.Replicas) / len(c.Masters)
	for i, r := range c.Replicas {
		if _, err := r.Do("CLUSTER", "REPLICATE", c.IDs[c.Masters[i/per].Addr]); err != nil {
			return fmt.Errorf("CLUSTER REPLICATE on %s: %w", r.Addr, err)
		}
	}
	return waitFor(30*time.Second, func() error { return c.check(len(all), true) })
}

// check reports why the cluster is not yet healthy, or nil.
func (c *ClusterFixture) check(known int, replicas bool) error {
	for _, s := range c.all() {
		info, err := s.Do("CLUSTER", "INFO")
		if err != nil {
			return err
		}
		m := parseInfo(info.(string))
		if m["cluster_state"] != "ok" || m["cluster_slots_ok"] != strconv.Itoa(slots) ||
			m["cluster_known_nodes"] != strconv.Itoa(known) {
			return fmt.Errorf("%s: cluster_state=%s slots_ok=%s known_nodes=%s (want ok, %d, %d)",
				s.Addr, m["cluster_state"], m["cluster_slots_ok"], m["cluster_known_nodes"], slots, known)
		}
		if !replicas {
			continue
		}
		nodes, err := s.Do("CLUSTER", "NODES")
		if err != nil {
			return err
		}
		if got := strings.Count(nodes.(string), "slave "); got != len(c.Replicas) {
			return fmt.Errorf("%s sees %d replicas, want %d", s.Addr, got, len(c.Replicas))
		}
	}
	if replicas {
		for _, r := range c.Replicas {
			info, err := r.Info("replication")
			if err != nil {
				return err
			}
			if info["master_link_status"] != "up" {
				return fmt.Errorf("replica %s: master_link_status=%s", r.Addr, info["master_link_status"])
			}
		}
	}
	return nil
}

// Addrs returns every node's address, masters first.
func (c *ClusterFixture) Addrs() []string {
	var out []string
	for _, s := range c.all() {
		out = append(out, s.Addr)
	}
	return out
}

// TLSAddrs returns every node's TLS address, masters first (WithTLS).
func (c *ClusterFixture) TLSAddrs() []string {
	var out []string
	for _, s := range c.all() {
		out = append(out, s.TLSAddr)
	}
	return out
}

// ClientTLS returns a TLS configuration that trusts the nodes' CA and
// presents a client certificate it signed (WithTLS).
func (c *ClusterFixture) ClientTLS(tb testing.TB) *tls.Config {
	tb.Helper()
	return clientTLS(tb, c.CA)
}

// MasterOf returns the master that served slot when the cluster was formed.
func (c *ClusterFixture) MasterOf(slot int) *Server {
	return c.Masters[min(slot*3/slots, 2)]
}

// Client returns a rueidis cluster client of the fixture (no client-side
// cache), closed when the test ends.
func (c *ClusterFixture) Client(tb testing.TB) rueidis.Client {
	tb.Helper()
	cl, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: c.Addrs(), DisableCache: true})
	if err != nil {
		tb.Fatalf("redistest: cluster client: %v", err)
	}
	if cl.Mode() != rueidis.ClientModeCluster {
		cl.Close()
		tb.Fatalf("redistest: client of the cluster is in %s mode", cl.Mode())
	}
	tb.Cleanup(cl.Close)
	return cl
}

// Keys returns every key held by the masters (SCAN on each), for tests that
// inspect what a store left behind.
func (c *ClusterFixture) Keys(pattern string) ([]string, error) {
	var out []string
	for _, m := range c.Masters {
		keys, err := m.Keys(pattern)
		if err != nil {
			return nil, err
		}
		out = append(out, keys...)
	}
	return out, nil
}

// Keys returns every key of the server matching pattern, by SCAN.
func (s *Server) Keys(pattern string) ([]string, error) {
	var out []string
	cursor := "0"
	for {
		v, err := s.Do("SCAN", cursor, "MATCH", pattern, "COUNT", "1000")
		if err != nil {
			return nil, err
		}
		page, ok := v.([]any)
		if !ok || len(page) != 2 {
			return nil, fmt.Errorf("SCAN: unexpected reply %v", v)
		}
		for _, k := range page[1].([]any) {
			out = append(out, k.(string))
		}
		if cursor = page[0].(string); cursor == "0" {
			return out, nil
		}
	}
}
