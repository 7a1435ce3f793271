// The bounds of connections, shutdown and the designer's runs, and the timeouts and durations they are read as.

package config

import (
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/internal/yamlcheck"
)

// defaultConnections are the bounds of every listener's connections when
// the connections section leaves them out.
func defaultConnections() Connections {
	return Connections{Max: 10_000, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 60 * time.Second,
		WriteTimeout: 120 * time.Second, IdleTimeout: 120 * time.Second, StreamIdleTimeout: 5 * time.Minute,
		MaxHeaderBytes: 64 << 10}
}

// WithDefaults returns c with each bound that is not positive replaced by
// its default, as a connections section that leaves it out gets at load:
// for a Config built in Go, whose zero Connections would open listeners of
// no connection and time nothing out. StreamIdleTimeout is kept as it is:
// 0 bounds no stream's silence.
func (c Connections) WithDefaults() Connections {
	d := defaultConnections()
	c.Max = positiveOr(c.Max, d.Max)
	c.ReadHeaderTimeout = positiveOr(c.ReadHeaderTimeout, d.ReadHeaderTimeout)
	c.ReadTimeout = positiveOr(c.ReadTimeout, d.ReadTimeout)
	c.WriteTimeout = positiveOr(c.WriteTimeout, d.WriteTimeout)
	c.IdleTimeout = positiveOr(c.IdleTimeout, d.IdleTimeout)
	c.MaxHeaderBytes = positiveOr(c.MaxHeaderBytes, d.MaxHeaderBytes)
	return c
}

// positiveOr returns v if it is positive, else d.
func positiveOr[T int | time.Duration](v, d T) T {
	if v > 0 {
		return v
	}
	return d
}

func (d *decoder) connections(n *yaml.Node, path string, c *Connections) {
	d.Mapping(n, path, map[string]field{
		"max":                 func(n *yaml.Node, p string) { c.Max = int(d.Int(n, p, 1, 1_000_000)) },
		"read_header_timeout": func(n *yaml.Node, p string) { c.ReadHeaderTimeout = d.timeout(n, p) },
		"read_timeout":        func(n *yaml.Node, p string) { c.ReadTimeout = d.timeout(n, p) },
		"write_timeout":       func(n *yaml.Node, p string) { c.WriteTimeout = d.timeout(n, p) },
		"idle_timeout":        func(n *yaml.Node, p string) { c.IdleTimeout = d.timeout(n, p) },
		"stream_idle_timeout": func(n *yaml.Node, p string) { c.StreamIdleTimeout = d.timeout(n, p) },
		"max_header_bytes":    func(n *yaml.Node, p string) { c.MaxHeaderBytes = int(d.Int(n, p, 1024, 1<<20)) },
	})
}

func (d *decoder) shutdown(n *yaml.Node, path string, s *Shutdown) {
	d.Mapping(n, path, map[string]field{
		"delay": func(n *yaml.Node, p string) {
			if s.Delay = d.durationOrNone(n, p); s.Delay > 5*time.Minute {
				d.Errorf(n, p, "%v: give a delay from 0s to 5m", s.Delay)
			}
		},
		"drain": func(n *yaml.Node, p string) {
			before := len(d.Errs)
			if s.Drain = d.Duration(n, p); len(d.Errs) == before && (s.Drain < time.Second || s.Drain > 10*time.Minute) {
				d.Errorf(n, p, "%v: give a drain from 1s to 10m", s.Drain)
			}
		},
	})
}

// timeout decodes a positive timeout of at least a millisecond: a shorter
// one ends every request (or call) it bounds before it can be answered.
func (d *decoder) timeout(n *yaml.Node, p string) time.Duration {
	before := len(d.Errs)
	v := d.Duration(n, p)
	if len(d.Errs) == before && v < time.Millisecond {
		d.Errorf(n, p, "%v: a timeout under 1ms ends everything it bounds; give at least 1ms", v)
	}
	return v
}

// durationOrNone decodes a duration of which 0 means none, written in any
// unit (0, 0s, 0ms); a negative one is an error.
func (d *decoder) durationOrNone(n *yaml.Node, p string) time.Duration {
	if v, err := yamlcheck.ParseDuration(n.Value); n.Kind == yaml.ScalarNode && err == nil && v <= 0 {
		if v < 0 {
			d.Errorf(n, p, "%q is negative: give 0 for none, or a positive duration", n.Value)
		}
		return 0
	}
	return d.Duration(n, p)
}

func (d *decoder) designer(n *yaml.Node, path string, g *Designer) {
	d.Mapping(n, path, map[string]field{
		"concurrency":  func(n *yaml.Node, p string) { g.Concurrency = int(d.Int(n, p, 0, 1024)) },
		"max_arrivals": func(n *yaml.Node, p string) { g.MaxArrivals = int(d.Int(n, p, 1, 100_000_000)) },
		"timeout":      func(n *yaml.Node, p string) { g.Timeout = d.timeout(n, p) },
	})
}
