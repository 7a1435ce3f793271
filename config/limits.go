package config

import (
	"maps"
	"slices"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/calendartext"
)

// limits decodes a list of limits:
//
//   - name: per-minute
//     algorithm: sliding-window-counter
//     quantity: 100
//     window: 1m
//     burst: 20        # token-bucket, leaky-bucket, gcra
//     max_wait: 2s     # leaky-bucket as a queue
//     shadow: true     # report, never refuse
//     id: per-minute   # the state's identity (default: the name): keep it to rename
//     lease: auto      # or off: overrides store.redis.lease for this limit (auto: a Redis store only)
//     count: failures  # or successes, all (default): which answers it counts
//
// A fixed window's window may be a calendar period instead of a duration
// (day, week, month, year), counted in the UTC calendar unless zone says
// otherwise, from the day starts says (a weekday for a week, a day of the
// month from 1 to 28 for a month):
//
//   - name: monthly
//     algorithm: fixed-window
//     quantity: 10000
//     window: month
//     zone: "+09:00"   # UTC (default), or a fixed offset from it
//     starts: 15       # months from the 15th
func (d *decoder) limits(n *yaml.Node, path string) []sluice.Limit {
	return d.limitsUnder(n, path, "")
}

// limitsUnder is limits for limits whose states the store keeps under
// idPrefix and their ID: "" for a plan's, a key's and the global limits,
// "<rule>." for a rule's (httplimit names a rule's limits so, in the store
// too). Their lease: is recorded, and their count: judged against the
// store's leases, under that ID, the one Redis's leases are looked up by.
func (d *decoder) limitsUnder(n *yaml.Node, path, idPrefix string) []sluice.Limit {
	var out []sluice.Limit
	names := map[string]bool{}
	d.List(n, path, func(_ int, e *yaml.Node, path string) {
		if d.emptyEntry(e, path, "the limit (name, algorithm, quantity, window)") {
			return
		}
		var (
			name, alg, id     string
			algNode, nameNode *yaml.Node
			idNode            *yaml.Node
			burstNode         *yaml.Node
			maxWaitNode       *yaml.Node
			leaseNode         *yaml.Node
			lease             string
			countNode         *yaml.Node
			count             string
			quantity, burst   int64
			window, maxWait   time.Duration
			windowNode        *yaml.Node
			period            sluice.Period
			zoneNode          *yaml.Node
			startsNode        *yaml.Node
			shadow            bool
			errsBefore        = len(d.Errs)
		)
		d.Mapping(e, path, map[string]field{
			"name":      func(n *yaml.Node, p string) { name, nameNode = d.Str(n, p), n },
			"algorithm": func(n *yaml.Node, p string) { alg, algNode = d.Str(n, p), n },
			"quantity":  func(n *yaml.Node, p string) { quantity = d.Int(n, p, 1, sluice.MaxQuantity) },
			"window": func(n *yaml.Node, p string) {
				windowNode = n
				if pd := calendarPeriod(n.Value); pd != 0 && n.Kind == yaml.ScalarNode {
					period = pd
					return
				}
				window = d.Duration(n, p)
			},
			"zone":     func(n *yaml.Node, p string) { zoneNode = n },
			"starts":   func(n *yaml.Node, p string) { startsNode = n },
			"burst":    func(n *yaml.Node, p string) { burst, burstNode = d.Int(n, p, 1, sluice.MaxQuantity), n },
			"max_wait": func(n *yaml.Node, p string) { maxWait, maxWaitNode = d.Duration(n, p), n },
			"shadow":   func(n *yaml.Node, p string) { shadow = d.Bool(n, p) },
			"id":       func(n *yaml.Node, p string) { id, idNode = d.Str(n, p), n },
			"lease":    func(n *yaml.Node, p string) { lease, leaseNode = d.OneOf(n, p, "auto", "off"), n },
			"count":    func(n *yaml.Node, p string) { count, countNode = d.countValue(n, p), n },
		})
		if e.Kind != yaml.MappingNode {
			return
		}
		for field, missing := range map[string]bool{"name": nameNode == nil, "algorithm": algNode == nil,
			"quantity": !hasKey(e, "quantity"), "window": !hasKey(e, "window")} {
			if missing {
				d.Errorf(e, path+"."+field, "missing")
			}
		}
		if nameNode != nil {
			if !sluice.ValidName(name) {
				d.Errorf(nameNode, path+".name", "%q must be 1-64 characters of A-Z a-z 0-9 . _ -", name)
			} else if names[name] {
				d.Errorf(nameNode, path+".name", "%q is already a limit of this list", name)
			}
			names[name] = true
		}
		if idNode != nil {
			if !sluice.ValidName(id) {
				d.Errorf(idNode, path+".id", "%q must be 1-64 characters of A-Z a-z 0-9 . _ -", id)
			} else if id != name && names[id] {
				d.Errorf(idNode, path+".id", "%q is the name of another limit of this list: the two would share one state", id)
			}
			names[id] = true
		}
		var a sluice.Algorithm
		if algNode != nil {
			var err error
			if a, err = sluice.ParseAlgorithm(alg); err != nil {
				d.Errorf(algNode, path+".algorithm", "%v", err)
			}
		}
		if burstNode != nil && a != 0 && a != sluice.AlgorithmTokenBucket && a != sluice.AlgorithmLeakyBucket && a != sluice.AlgorithmGCRA {
			d.Errorf(burstNode, path+".burst", "applies only to token-bucket, leaky-bucket and gcra, not %v", a)
		}
		if maxWaitNode != nil && a != 0 && a != sluice.AlgorithmLeakyBucket {
			d.Errorf(maxWaitNode, path+".max_wait", "applies only to leaky-bucket (as a queue), not %v", a)
		}
		if period != 0 && a != 0 && a != sluice.AlgorithmFixedWindow {
			d.Errorf(windowNode, path+".window", "a calendar %v applies only to fixed-window, not %v: "+
				"its windows differ in length (use a duration such as 30d for %v)", period, a, a)
		}
		d.microseconds(windowNode, path+".window", window, a)
		d.microseconds(maxWaitNode, path+".max_wait", maxWait, sluice.AlgorithmLeakyBucket)
		var offset time.Duration
		for _, f := range []struct {
			n    *yaml.Node
			name string
		}{{zoneNode, "zone"}, {startsNode, "starts"}} {
			if f.n != nil && period == 0 {
				d.Errorf(f.n, path+"."+f.name, "applies only to a calendar window (day, week, month or year)")
			}
		}
		if period != 0 {
			var east, start time.Duration
			if zoneNode != nil {
				east = d.zoneOffset(zoneNode, path+".zone")
			}
			if startsNode != nil {
				start = d.calendarStart(startsNode, path+".starts", period)
			}
			offset = calendartext.Offset(east, start)
		}
		if len(d.Errs) > errsBefore {
			return
		}
		l := sluice.NewLimit(a, quantity, window)
		if period != 0 {
			l = sluice.Calendar(quantity, period).WithOffset(offset)
		}
		l = l.Named(name).WithShadow(shadow).WithID(id)
		if burst != 0 {
			l = l.WithBurst(burst)
		}
		if maxWait != 0 {
			l = l.WithMaxWait(maxWait)
		}
		if err := l.Err(); err != nil {
			d.Errorf(e, path, "%v", err)
			return
		}
		if leaseNode != nil {
			d.leaseOf(leaseNode, path+".lease", idPrefix+l.ID(), lease)
			if lease == "auto" && d.leaseAuto != nil {
				*d.leaseAuto = append(*d.leaseAuto, leaseAt{d.File, leaseNode, path + ".lease"})
			}
		}
		if countNode != nil {
			d.countOf(countNode, path+".count", l.Name(), count, leasable(idPrefix, l)...)
		} else {
			d.countUnsaid(nameNode, path+".name", l.Name())
		}
		out = append(out, l)
	})
	return out
}

// microseconds refuses the duration v read at n (a window or a max wait)
// unless it is a whole number of microseconds no longer than a limit of
// algorithm a holds (sluice.MaxFixedWindow for a fixed window, else
// sluice.MaxWindow), at its field rather than at the limit. A v of 0 was
// not read, or was refused already.
func (d *decoder) microseconds(n *yaml.Node, path string, v time.Duration, a sluice.Algorithm) {
	if n == nil || v <= 0 {
		return
	}
	longest := sluice.MaxWindow
	if a == sluice.AlgorithmFixedWindow {
		longest = sluice.MaxFixedWindow
	}
	switch {
	case v%time.Microsecond != 0:
		d.Errorf(n, path, "%v is not a whole number of microseconds (the least is 1µs)", v)
	case v > longest:
		d.Errorf(n, path, "%v is longer than a limit holds (at most %v, about %d days)", v, longest, longest/(24*time.Hour))
	}
}

// leaseOf records the lease: mode of the limit with ID id (as the store
// has it: a rule's limit's prefixed by its rule's name); two limits of one
// ID (one state) must not say different modes.
func (d *decoder) leaseOf(n *yaml.Node, path, id, mode string) {
	if d.leases == nil {
		return
	}
	if was, ok := d.leases[id]; ok && was != mode {
		d.Errorf(n, path, "%q: another limit of id %q says lease: %s, and the two share one state", mode, id, was)
		return
	}
	d.leases[id] = mode
}

// leaseBound records the node of a lease bound (lease_max_units,
// lease_max_age) read at path.
func (d *decoder) leaseBound(n *yaml.Node, path string) {
	if d.leaseBounds == nil {
		d.leaseBounds = map[string]*yaml.Node{}
	}
	d.leaseBounds[path] = n
}

// leaseBoundsApply refuses a limit's lease: auto when the store is not
// Redis, which alone leases, and the lease bounds read when the store
// leases nothing: neither the store section nor any limit says lease: auto.
func (d *decoder) leaseBoundsApply(s *Store) {
	if s.Type != "redis" && d.leaseAuto != nil {
		for _, at := range *d.leaseAuto {
			d.errorfIn(at.file, at.node, at.path, "auto leases from Redis, and the store is %s: set store.type: redis, or remove it", s.Type)
		}
	}
	r := &s.Redis
	if r.Lease == "auto" || slices.Contains(slices.Collect(maps.Values(r.Leases)), "auto") {
		return
	}
	for _, p := range slices.Sorted(maps.Keys(d.leaseBounds)) {
		d.Errorf(d.leaseBounds[p], p, "applies only where a limit is leased: set lease: auto here or on a limit, or remove it")
	}
}
