// The store section: memory or Redis, and Redis's addresses, credentials and leases.

package config

import (
	"maps"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/dialaddr"
)

// defaultReplicaWait is redis.DefaultReplicaWait, the wait of a write for
// its replicas when replica_wait is left out, which the timeout must exceed.
const defaultReplicaWait = 20 * time.Millisecond

func (d *decoder) store(n *yaml.Node, path string, s *Store) {
	s.Type, s.MaxKeys = "memory", 1_000_000
	s.Redis = Redis{Mode: "standalone", Timeout: 50 * time.Millisecond, OnStoreError: "local", Instances: 1}
	s.Redis.Lease, s.Redis.Leases = "off", d.leases
	d.Mapping(n, path, map[string]field{
		"type":     func(n *yaml.Node, p string) { s.Type = d.OneOf(n, p, "memory", "redis") },
		"max_keys": func(n *yaml.Node, p string) { s.MaxKeys = int(d.Int(n, p, 1, 1<<32)) },
		"redis": func(n *yaml.Node, path string) {
			r := &s.Redis
			sentinelAt := map[string]*yaml.Node{} // where each sentinel_ field is
			var addressesNode, dbNode, replicasNode, masterNameNode, replicaWaitNode, timeoutNode *yaml.Node
			d.Mapping(n, path, map[string]field{
				"mode":        func(n *yaml.Node, p string) { r.Mode = d.OneOf(n, p, "standalone", "sentinel", "cluster") },
				"addresses":   func(n *yaml.Node, p string) { r.Addresses, addressesNode = d.dialAddresses(n, p), n },
				"master_name": func(n *yaml.Node, p string) { r.MasterName, masterNameNode = d.Str(n, p), n },
				"username":    func(n *yaml.Node, p string) { r.Username = d.Str(n, p) },
				"password":    func(n *yaml.Node, p string) { r.Password = d.Str(n, p) },
				"password_file": func(n *yaml.Node, p string) {
					r.PasswordFile = d.file(n, p)
					if _, err := d.secret(r.PasswordFile); err != nil && r.PasswordFile != "" {
						d.Errorf(n, p, "%v", err)
					}
				},
				"sentinel_username": func(n *yaml.Node, p string) { r.SentinelUsername, sentinelAt[p] = d.Str(n, p), n },
				"sentinel_password": func(n *yaml.Node, p string) { r.SentinelPassword, sentinelAt[p] = d.Str(n, p), n },
				"sentinel_password_file": func(n *yaml.Node, p string) {
					r.SentinelPasswordFile, sentinelAt[p] = d.file(n, p), n
					if _, err := d.secret(r.SentinelPasswordFile); err != nil && r.SentinelPasswordFile != "" {
						d.Errorf(n, p, "%v", err)
					}
				},
				"tls":             func(n *yaml.Node, p string) { d.clientTLS(n, p, &r.TLS) },
				"db":              func(n *yaml.Node, p string) { r.DB, dbNode = int(d.Int(n, p, 0, 1<<16)), n },
				"timeout":         func(n *yaml.Node, p string) { r.Timeout, timeoutNode = d.timeout(n, p), n },
				"on_store_error":  func(n *yaml.Node, p string) { r.OnStoreError = d.OneOf(n, p, "local", "allow", "deny") },
				"instances":       func(n *yaml.Node, p string) { r.Instances = int(d.Int(n, p, 1, 10_000)) },
				"replicas":        func(n *yaml.Node, p string) { r.Replicas, replicasNode = int(d.Int(n, p, 0, 64)), n },
				"replica_wait":    func(n *yaml.Node, p string) { r.ReplicaWait, replicaWaitNode = d.Duration(n, p), n },
				"lease":           func(n *yaml.Node, p string) { r.Lease = d.OneOf(n, p, "auto", "off") },
				"lease_max_units": func(n *yaml.Node, p string) { r.LeaseMaxUnits = d.Int(n, p, 1, sluice.MaxQuantity); d.leaseBound(n, p) },
				"lease_max_age": func(n *yaml.Node, p string) {
					before := len(d.Errs)
					if r.LeaseMaxAge = d.Duration(n, p); len(d.Errs) == before && r.LeaseMaxAge < time.Millisecond {
						d.Errorf(n, p, "%s: a lease under 1ms ends before its take's reply can arrive; give at least 1ms", n.Value)
					}
					d.leaseBound(n, p)
				},
			})
			if len(r.Addresses) == 0 {
				d.Errorf(n, path+".addresses", "at least one address is needed")
			}
			d.standaloneAddresses(addressesNode, path+".addresses", r.Mode)
			if r.Password != "" && r.PasswordFile != "" {
				d.Errorf(n, path+".password_file", "set password or password_file, not both")
			}
			if r.Mode == "sentinel" && r.MasterName == "" {
				d.Errorf(n, path+".master_name", "sentinel mode needs the master set's name")
			}
			if r.SentinelPassword != "" && r.SentinelPasswordFile != "" {
				d.Errorf(n, path+".sentinel_password_file", "set sentinel_password or sentinel_password_file, not both")
			}
			if masterNameNode != nil && r.Mode != "sentinel" && r.Mode != "" {
				d.Errorf(masterNameNode, path+".master_name", "only sentinel mode has a master set to name (mode is %s)", r.Mode)
			}
			if replicaWaitNode != nil && r.Replicas == 0 && (replicasNode == nil || replicasNode.Value == "0") {
				d.Errorf(replicaWaitNode, path+".replica_wait", "applies only with replicas above 0: without them no write waits")
			}
			if replicaWaitNode != nil && r.ReplicaWait%time.Millisecond != 0 {
				d.Errorf(replicaWaitNode, path+".replica_wait", "%v is not a whole number of milliseconds, which Redis's WAIT counts in", r.ReplicaWait)
			}
			if replicaWaitNode == nil && r.Replicas > 0 && timeoutNode != nil && r.Timeout > 0 && r.Timeout <= defaultReplicaWait {
				d.Errorf(timeoutNode, path+".timeout", "%v is not above replica_wait (%v when left out), a wait the timeout bounds: "+
					"give a longer timeout, or a shorter replica_wait", r.Timeout, defaultReplicaWait)
			}
			if replicaWaitNode != nil && r.ReplicaWait > 0 && r.Timeout > 0 && r.ReplicaWait >= r.Timeout {
				d.Errorf(replicaWaitNode, path+".replica_wait", "%v is not below timeout (%v), which bounds a write's round trip, "+
					"the wait for its replicas included: give a shorter wait, or a longer timeout", r.ReplicaWait, r.Timeout)
			}
			if r.Mode == "cluster" && r.DB != 0 {
				d.Errorf(dbNode, path+".db", "a Redis Cluster has database 0 only")
			}
			if r.Mode == "cluster" && r.Replicas > 0 {
				d.Errorf(replicasNode, path+".replicas", "a Redis Cluster waits for no replica (a script run decides one slot): "+
					"configure min-replicas-to-write on its masters instead")
			}
			for _, p := range slices.Sorted(maps.Keys(sentinelAt)) {
				if r.Mode != "sentinel" {
					d.Errorf(sentinelAt[p], p, "only sentinel mode has Sentinels to authenticate to")
				}
			}
		},
	})
	if s.Type == "redis" && n != nil && !hasKey(n, "redis") {
		d.Errorf(n, path+".redis", "type redis needs a redis section with addresses")
	}
	if s.Type == "memory" && n != nil && n.Kind == yaml.MappingNode && hasKey(n, "redis") {
		d.Errorf(keyNode(n, "redis"), path+".redis", "applies only to type: redis, and the store is memory (the default when type is left out): set type: redis, or remove the section")
	}
}

// standaloneAddresses refuses a second address of n, the list of
// addresses, in standalone mode: one Redis server, the first address, is
// all the store connects to, and the others would never be used, not even
// once the first fails.
func (d *decoder) standaloneAddresses(n *yaml.Node, path, mode string) {
	if mode != "standalone" || n == nil || n.Kind != yaml.SequenceNode || len(n.Content) < 2 {
		return
	}
	d.Errorf(n.Content[1], path+"[1]", "standalone mode connects to one Redis server, the first address, and never to the others: "+
		"give one address, or set mode: sentinel (the Sentinels' addresses, with master_name) or mode: cluster (the cluster's nodes)")
}

// dialAddresses decodes a list of host:port addresses to connect to (or
// a single one), each as dialaddr.Check tells it, which the designer
// holds its addresses to as well: a host not empty and holding no "@",
// "?", "#" or "/" (a URL's user information, query or path, as in
// secret@r.example:6379), and a port from 1 to 65535 or a service's name,
// a server without a port being never reached. A refused address is shown
// with its password and query masked (dialaddr.Shown).
func (d *decoder) dialAddresses(n *yaml.Node, path string) []string {
	if n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
		return []string{d.dialAddress(n, path)}
	}
	var out []string
	d.List(n, path, func(_ int, e *yaml.Node, p string) { out = append(out, d.dialAddress(e, p)) })
	return out
}

func (d *decoder) dialAddress(n *yaml.Node, p string) string {
	s := d.Str(n, p)
	if err := dialaddr.Check(s); err != nil && n.Kind == yaml.ScalarNode {
		var instead string
		switch {
		case strings.Contains(s, "@"): // credentials (redis://user:secret@host:6379, as managed Redis providers hand them out)
			instead = ": write the host and port alone, the user in username and the password in a file named by password_file"
		case strings.Contains(s, "?"): // settings (redis://host:6379/?password=secret, as redis-py's from_url reads them)
			instead = ": write the host and port alone, each setting of the query in its field, the password in a file named by password_file"
		case strings.Contains(s, "://"):
			instead = ": write the host and port alone, without a scheme"
		}
		d.Errorf(n, p, "%q is not a host:port address (e.g. redis.internal:6379)%s", dialaddr.Shown(s), instead)
	}
	return s
}
