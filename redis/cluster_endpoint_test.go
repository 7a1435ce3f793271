package redis

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/redistest"
)

// With cluster-preferred-endpoint-type unknown-endpoint (or a node that
// does not know its own IP, as the lone master of a one-shard cluster),
// CLUSTER SLOTS gives each master's endpoint as NULL or "": the host of
// the node asked. The store names the masters as the client does, so that
// Node names a node of the client (one breaker per master, not one per
// port) and isMaster knows every master (a master the watch cannot reach
// reaches failover.Store.Unreachable).
func TestNodeNamesTheClientsNodesWhenEndpointsAreUnknown(t *testing.T) {
	cl := redistest.Cluster(t)
	for _, m := range cl.Masters {
		m.MustDo("CONFIG", "SET", "cluster-preferred-endpoint-type", "unknown-endpoint")
	}
	client := cl.Client(t)
	store := New(client, WithTimeout(5*time.Second))
	if err := store.refreshSlots(context.Background()); err != nil {
		t.Fatal(err)
	}
	nodes := client.Nodes()
	for _, m := range cl.Masters {
		if !store.isMaster(m.Addr) {
			t.Errorf("isMaster(%s) = false for a master of the cluster", m.Addr)
		}
	}
	for _, s := range subjectsBySlot(6, "unknown-endpoint-") {
		n := store.Node(&sluice.Check{Key: s})
		if _, ok := nodes[n]; !ok {
			t.Errorf("Node(%q) = %q, not an address of the cluster's nodes %v", s, n, slices.Sorted(maps.Keys(nodes)))
		}
	}
}

// An endpoint CLUSTER SLOTS gives as "?" (a hostname preferred, none
// announced) names no node: its slots are left unowned, on the node "", as
// before the store first read the map.
func TestNodeLeavesSlotsOfUnknownEndpointsUnowned(t *testing.T) {
	cl := redistest.Cluster(t)
	client := cl.Client(t)
	for _, m := range cl.Masters {
		m.MustDo("CONFIG", "SET", "cluster-preferred-endpoint-type", "hostname")
	}
	store := New(client, WithTimeout(5*time.Second))
	if err := store.refreshSlots(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, m := range cl.Masters {
		if store.isMaster(m.Addr) {
			t.Errorf("isMaster(%s) = true, with every master's endpoint unknown", m.Addr)
		}
	}
	for _, s := range subjectsBySlot(3, "hostname-endpoint-") {
		if n := store.Node(&sluice.Check{Key: s}); n != "" {
			t.Errorf("Node(%q) = %q; want \"\" for a slot whose master's endpoint is unknown", s, n)
		}
	}
}

// endpoint names a master of CLUSTER SLOTS as the client names its nodes:
// by its host and port; for a host "" (or NULL), the host of the node the
// client asked, so the client's one node on that port (none when it has
// several there); nothing for "?".
func TestEndpointNamesAMasterAsTheClientDoes(t *testing.T) {
	nodes := []string{"10.0.0.1:7000", "10.0.0.1:7001", "[::1]:7002", "10.0.0.1:6379", "10.0.0.2:6379"}
	for _, c := range []struct {
		host string
		port int64
		want string
	}{
		{"10.0.0.2", 6379, "10.0.0.2:6379"},
		{"redis-2.example", 6380, "redis-2.example:6380"},
		{"::1", 7001, "[::1]:7001"},
		{"", 7001, "10.0.0.1:7001"},
		{"", 7002, "[::1]:7002"},
		{"", 7003, ""},
		{"", 6379, ""},
		{"?", 7001, ""},
	} {
		if got := endpoint(c.host, c.port, nodes); got != c.want {
			t.Errorf("endpoint(%q, %d, %v) = %q; want %q", c.host, c.port, nodes, got, c.want)
		}
	}
}
