package config

import (
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// countAt is one count: read from a limit or a rule, or a limit that says
// none (said false, count all, at its name).
type countAt struct {
	name  string   // the limit's name (a rule's limit as "<rule>.<limit>"), or the rule's
	ids   []string // the store's IDs of the limits it counts that Redis may lease (see leasable)
	count string
	node  *yaml.Node
	path  string
	said  bool
}

// countValue reads a count: all, successes, failures, header:<Name>
// (httplimit.CountHeader) or status:<list> (httplimit.CountStatus); the
// name and the list are judged with the middleware's options.
func (d *decoder) countValue(n *yaml.Node, path string) string {
	s := d.Str(n, path)
	switch {
	case s == httplimit.CountAll, s == httplimit.CountSuccesses, s == httplimit.CountFailures,
		strings.HasPrefix(s, httplimit.CountHeader), strings.HasPrefix(s, httplimit.CountStatus):
		return s
	case s != "" || n.Kind == yaml.ScalarNode:
		d.Errorf(n, path, "%q is not one of all, successes, failures, header:<Name>, status:<list>", s)
	}
	return ""
}

// countOf records the count: of the limit (or rule) called name.
func (d *decoder) countOf(n *yaml.Node, path, name, count string, ids ...string) {
	d.counts = append(d.counts, countAt{name: name, ids: ids, count: count, node: n, path: path, said: true})
}

// countUnsaid records that the limit called name, whose name was read at n,
// says no count:, so that resolveCounts can tell it from one that does.
func (d *decoder) countUnsaid(n *yaml.Node, path, name string) {
	d.counts = append(d.counts, countAt{name: name, count: httplimit.CountAll, node: n, path: path})
}

// resolveCounts turns the count: settings into c.Count, by name, as
// httplimit.Options.Count takes them: limits of one name (in several plans,
// say) must not count differently, and a limit that says no count: is not
// counted by another's of its name without a word. A limit counted by
// response cannot be leased from Redis: a unit admitted from a lease
// carries no receipt to refund, and its lease may be given back before the
// answer is known.
func (d *decoder) resolveCounts(c *Config, raw *rawConfig) {
	c.counts = d.counts
	saidAt := map[string]string{} // a counted limit's name: where its count: was read
	for _, ca := range d.counts {
		if !ca.said {
			continue
		}
		if was, ok := c.Count[ca.name]; ok && was != ca.count {
			d.Errorf(ca.node, ca.path, "%q: another limit named %q says count: %s, and limits of one name count alike", ca.count, ca.name, was)
			continue
		}
		if ca.count != httplimit.CountAll && c.Store.Type == "redis" && leased(&c.Store.Redis, ca.ids) {
			d.Errorf(ca.node, ca.path, "%s needs exact refunds, which leased quota cannot give (a unit admitted from a lease "+
				"carries no receipt, and its lease may be given back before the answer is known): set lease: off on the limit", ca.count)
			continue
		}
		if c.Count == nil {
			c.Count = map[string]string{}
		}
		c.Count[ca.name] = ca.count
		saidAt[ca.name] = ca.path
		raw.at(fmt.Sprintf("Count[%q]", ca.name), ca.node, ca.path)
	}
	for _, ca := range d.counts {
		if count := c.Count[ca.name]; !ca.said && count != "" && count != httplimit.CountAll {
			of := "another limit of its name"
			if at := saidAt[ca.name]; strings.HasPrefix(at, "rules[") && !strings.Contains(at, ".limits[") {
				of = "the limits of rule " + ca.name // a rule's count: names its limits by the rule's name
			}
			d.Errorf(ca.node, ca.path, "%q would count %s, as %s says of %s: a count belongs to a name, and limits of one name "+
				"count alike (say count: %q here too, or name one of them apart)", ca.name, countWords(count), saidAt[ca.name], of, count)
		}
	}
}

// countWords says in words what a count other than all counts.
func countWords(count string) string {
	if header, ok := strings.CutPrefix(count, httplimit.CountHeader); ok {
		return "what header " + header + " reports"
	}
	if statuses, ok := strings.CutPrefix(count, httplimit.CountStatus); ok {
		return "only answers of status " + statuses
	}
	return "only " + count
}

// CountsLeasedBy judges c's count: settings against the lease settings of
// the store section inForce (that of the configuration a running store was
// opened with, whose leases hold until the next start) as Parse judges them
// against c's own: it returns an *Error at each count: other than all on a
// limit inForce leases from Redis, joined, or nil.
func (c *Config) CountsLeasedBy(inForce Store) error {
	if inForce.Type != "redis" {
		return nil
	}
	var errs []error
	for _, ca := range c.counts {
		if ca.count != httplimit.CountAll && leased(&inForce.Redis, ca.ids) {
			errs = append(errs, &Error{File: c.File, Line: ca.node.Line, Col: ca.node.Column, Path: ca.path,
				Msg: fmt.Sprintf("%s needs exact refunds, which leased quota cannot give, and the running store leases "+
					"this limit from Redis: its lease settings change at the next start (restart to apply lease: off)", ca.count)})
		}
	}
	return errors.Join(errs...)
}

// leasable returns the IDs, as the store has them (idPrefix and the
// limit's ID: see limitsUnder), of the limits of ls that Redis's leased
// quota may decide: the fixed windows and sliding counters that are not
// shadows (redis.LeaseOptions; buckets may be leased too, but cannot count
// by response at all).
func leasable(idPrefix string, ls ...sluice.Limit) []string {
	var ids []string
	for _, l := range ls {
		if a := l.Algorithm(); !l.Shadow() && (a == sluice.AlgorithmFixedWindow || a == sluice.AlgorithmSlidingCounter) {
			ids = append(ids, idPrefix+l.ID())
		}
	}
	return ids
}

// leased reports whether a limit of ids leases from Redis: by its own
// lease:, else by the store's.
func leased(r *Redis, ids []string) bool {
	for _, id := range ids {
		lease := r.Lease
		if own, ok := r.Leases[id]; ok {
			lease = own
		}
		if lease == "auto" {
			return true
		}
	}
	return false
}
