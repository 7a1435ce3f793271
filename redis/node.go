package redis

import (
	"context"
	"fmt"
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
// store last learned it; otherwise the address of the server or of the
// master Sentinel names. It is what failover.Options.Node asks for: Open's
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
	msgs, err := s.client.Do(ctx, s.client.B().ClusterSlots().Build()).ToArray()
	if err != nil {
		return err
	}
	m := &slotMap{names: []string{""}}
	index := map[string]uint16{"": 0}
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
		host, _ := master[0].ToString()
		port, _ := master[1].AsInt64()
		addr := net.JoinHostPort(host, strconv.FormatInt(port, 10))
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
