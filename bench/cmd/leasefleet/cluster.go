package main

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
	"syscall"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// cluster is a Redis Cluster of three masters started for the global
// runs: no persistence, no replicas, each node on free loopback ports
// (client and bus), its files in one temporary directory.
type cluster struct {
	dir   string
	addrs []string
	cmds  []*exec.Cmd
}

// clusterSlots is the number of hash slots of a Redis Cluster.
const clusterSlots = 16384

// startCluster starts three cluster-enabled redis-servers, gives each a
// third of the slots, joins them and returns when every node says the
// cluster is ok.
func startCluster() (*cluster, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("redis-server not found (apt-get install redis-server): %w", err)
	}
	dir, err := os.MkdirTemp("", "sluice-leasefleet-cluster-")
	if err != nil {
		return nil, err
	}
	c := &cluster{dir: dir}
	if err := c.start(bin); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

func (c *cluster) start(bin string) error {
	ports, err := freePorts(6)
	if err != nil {
		return err
	}
	ctx := context.Background()
	clients := make([]*goredis.Client, 3)
	for i := range clients {
		port, bus := strconv.Itoa(ports[2*i]), strconv.Itoa(ports[2*i+1])
		node := filepath.Join(c.dir, port)
		if err := os.Mkdir(node, 0o755); err != nil {
			return err
		}
		cmd := exec.Command(bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
			"--dir", node, "--logfile", filepath.Join(node, "redis.log"), "--daemonize", "no", "--protected-mode", "no",
			"--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(node, "nodes.conf"), "--cluster-port", bus)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("starting a cluster node: %w", err)
		}
		c.cmds = append(c.cmds, cmd)
		addr := net.JoinHostPort("127.0.0.1", port)
		c.addrs = append(c.addrs, addr)
		clients[i] = goredis.NewClient(&goredis.Options{Addr: addr, PoolSize: 1})
		defer clients[i].Close()
	}
	for i, cl := range clients {
		if err := waitUntil(15*time.Second, func() error { return cl.Ping(ctx).Err() }); err != nil {
			return fmt.Errorf("cluster node %s: no PING answer: %w", c.addrs[i], err)
		}
		// Distinct config epochs before the nodes meet, as redis-cli does.
		if err := cl.Do(ctx, "CLUSTER", "SET-CONFIG-EPOCH", i+1).Err(); err != nil {
			return err
		}
		lo, hi := i*clusterSlots/3, (i+1)*clusterSlots/3-1
		if err := cl.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", lo, hi).Err(); err != nil {
			return err
		}
	}
	for i := 1; i < 3; i++ {
		if err := clients[0].Do(ctx, "CLUSTER", "MEET", "127.0.0.1", ports[2*i], ports[2*i+1]).Err(); err != nil {
			return err
		}
	}
	return waitUntil(30*time.Second, func() error {
		for i, cl := range clients {
			info, err := cl.Do(ctx, "CLUSTER", "INFO").Text()
			if err != nil {
				return err
			}
			if !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_known_nodes:3") ||
				!strings.Contains(info, "cluster_slots_ok:"+strconv.Itoa(clusterSlots)) {
				return fmt.Errorf("node %s: cluster not formed yet", c.addrs[i])
			}
		}
		return nil
	})
}

// stop kills the nodes and removes their files.
func (c *cluster) stop() {
	for _, cmd := range c.cmds {
		cmd.Process.Kill()
		cmd.Wait()
	}
	os.RemoveAll(c.dir)
}

// freePorts returns n distinct TCP ports that were free on 127.0.0.1.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// waitUntil calls f until it returns nil or timeout passes, and returns
// its last error then.
func waitUntil(timeout time.Duration, f func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.Join(fmt.Errorf("not within %v", timeout), err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
