package redis

import (
	"context"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"

	"github.com/redis/rueidis"

	"github.com/sluice-dev/sluice"
)

// slotMap is the master of every slot of a Cluster, as CLUSTER SLOTS last
// said: owner[slot] indexes names ("" for a slot no master serves).
type slotMap struct {
	owner [slotCount]uint16
	names []string
}

// Node returns the name of the Redis node that decides c: on a Cluster the
// address ("host:port") of the master serving the slot of c's key, as the
// store last learned it and as the client names its nodes (a master
// CLUSTER SLOTS gives without a host, as under
// cluster-preferred-endpoint-type unknown-endpoint, is the client's one
// node on its port; a slot whose master's endpoint is unknown, "?", or
// matches no such node, is on the node ""); otherwise the address of the
// server or of the master Sentinel names. It is what failover.Options.Node asks for: Open's
// store keeps a circuit breaker per node, so that the keys of healthy
// masters stay on Redis while another is down.
//
// A Store learns its Cluster's masters when Open's store watches it (every
// watchEvery); until then, and for a Store made by New or Dial, every key of
// a Cluster is on the node "".
func (s *Store) Node(c *sluice.Check) string {
	if !s.cluster {
		if p := s.master.Load(); p != nil {
			return *p
		}
		return ""
	}
	m := s.slots.Load()
	if m == nil {
		return ""
	}
	return m.names[m.owner[subjectSlot(c.Key)]]
}

// isMaster reports whether addr serves keys, as Node names it: on a
// Cluster, a master of the slot map as last read; otherwise the one node.
func (s *Store) isMaster(addr string) bool {
	if !s.cluster {
		return true
	}
	m := s.slots.Load()
	return m != nil && slices.Contains(m.names[1:], addr)
}

// singleNode returns the address of a client's one node (standalone, or
// Sentinel's master now), or "".
func singleNode(c rueidis.Client) string {
	for addr := range c.Nodes() {
		return addr
	}
	return ""
}

// refreshSlots reads CLUSTER SLOTS from any node into the store's map.
func (s *Store) refreshSlots(ctx context.Context) error {
	c := s.client
	msgs, err := do(ctx, c, func() rueidis.Completed { return c.B().ClusterSlots().Build() }).ToArray()
	if err != nil {
		return err
	}
	return s.readSlots(msgs)
}

// readSlots stores the slot map of msgs, a reply to CLUSTER SLOTS, each
// master named as the client names its nodes (see endpoint).
func (s *Store) readSlots(msgs []rueidis.RedisMessage) error {
	m := &slotMap{names: []string{""}}
	index := map[string]uint16{"": 0}
	var nodes []string // the client's, read at the first master without a host
	for _, r := range msgs {
		row, err := r.ToArray()
		if err != nil || len(row) < 3 {
			return fmt.Errorf("CLUSTER SLOTS: unexpected row %v", r)
		}
		lo, err1 := row[0].AsInt64()
		hi, err2 := row[1].AsInt64()
		master, err3 := row[2].ToArray()
		if err1 != nil || err2 != nil || err3 != nil || len(master) < 2 || lo < 0 || hi >= slotCount || lo > hi {
			return fmt.Errorf("CLUSTER SLOTS: unexpected row %v", r)
		}
		host, _ := master[0].ToString() // "" for NULL
		port, _ := master[1].AsInt64()
		if host == "" && nodes == nil {
			nodes = slices.Collect(maps.Keys(s.client.Nodes()))
		}
		addr := endpoint(host, port, nodes)
		i, ok := index[addr]
		if !ok {
			i = uint16(len(m.names))
			index[addr] = i
			m.names = append(m.names, addr)
		}
		for sl := lo; sl <= hi; sl++ {
			m.owner[sl] = i
		}
	}
	s.slots.Store(m)
	return nil
}

// endpoint returns the name of the node that CLUSTER SLOTS gives as host
// and port, among nodes, the addresses of the client's nodes, so that Node
// and isMaster name the nodes the client sends to: "host:port". A host ""
// or NULL (cluster-preferred-endpoint-type unknown-endpoint, or a node
// that does not know its own IP) means the host of the node asked, which
// the client took from whichever node it asked (rueidis's parseEndpoint):
// it is the one node of nodes on port, or none ("") when nodes has none or
// several there. "?", an endpoint the node does not know, names none.
func endpoint(host string, port int64, nodes []string) string {
	p := strconv.FormatInt(port, 10)
	switch host {
	case "?":
		return ""
	case "":
		name := ""
		for _, addr := range nodes {
			if _, q, err := net.SplitHostPort(addr); err == nil && q == p {
				if name != "" {
					return ""
				}
				name = addr
			}
		}
		return name
	}
	return net.JoinHostPort(host, p)
}
