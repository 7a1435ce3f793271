package config

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/internal/redact"
)

// Notify is the notify section: a webhook told when a client has used a
// share of a quota (a fixed-window limit: a day's, a month's).
type Notify struct {
	// URL receives each notification as a POST of JSON (https, or http to
	// loopback); "" turns notifications off.
	URL string
	// Secret, read from secret_file, signs each body: the header
	// Sluice-Signature is "sha256=" and the hex HMAC-SHA256 of the body
	// under it. Nil: unsigned.
	Secret     []byte
	SecretFile string
	// At are the shares of a limit's quota, in percent (1 to 100), whose
	// crossing is notified, ascending; default [100]: when it is used up.
	At []int
	// Limits names the limits notified: fixed-window limits (plans',
	// global or rules', or of the envoy rules by their labels), by name,
	// that count every request and are not leased from Redis.
	Limits []string
}

// notify decodes the notify section:
//
//	notify:
//	  url: https://billing.example.com/hooks/sluice
//	  secret_file: notify.secret     # optional: Sluice-Signature: sha256=<hex HMAC of the body>
//	  at: [80, 100]                  # percent of the quota used (default [100])
//	  limits: [per-month]            # fixed-window limits, by name
func (d *decoder) notify(n *yaml.Node, path string, nt *Notify) {
	var urlNode, limitsNode *yaml.Node
	d.Mapping(n, path, map[string]field{
		"url": func(n *yaml.Node, p string) { nt.URL, urlNode = d.Str(n, p), n },
		"secret_file": func(n *yaml.Node, p string) {
			if nt.SecretFile = d.file(n, p); nt.SecretFile == "" {
				return // refused by file
			}
			s, err := d.secret(nt.SecretFile)
			if err != nil {
				d.Errorf(n, p, "%v", err)
			}
			nt.Secret = []byte(s)
		},
		"at": func(n *yaml.Node, p string) {
			d.emptyList(n, p, "100", "list the percentages of the quota used to notify at, or leave at out")
			d.List(n, p, func(_ int, e *yaml.Node, p string) {
				v := int(d.Int(e, p, 1, 100))
				if slices.Contains(nt.At, v) {
					d.Errorf(e, p, "%d is listed twice", v)
				}
				nt.At = append(nt.At, v)
			})
			slices.Sort(nt.At)
		},
		"limits": func(n *yaml.Node, p string) { nt.Limits, limitsNode = d.Strings(n, p), n },
	})
	if n.Kind != yaml.MappingNode {
		return
	}
	switch u, err := url.Parse(nt.URL); {
	case urlNode == nil:
		d.Errorf(n, path+".url", "missing: where notifications are posted")
	case err != nil || u.Host == "" || (u.Scheme != "https" && !(u.Scheme == "http" && loopbackHost(u.Hostname()))):
		d.Errorf(urlNode, path+".url", "%q is not an https:// URL (http:// only to a loopback host)", redact.URL(nt.URL))
	}
	if limitsNode == nil || len(nt.Limits) == 0 {
		d.Errorf(n, path+".limits", "missing: the fixed-window limits whose quota is notified, by name")
	}
	if len(nt.At) == 0 {
		nt.At = []int{100}
	}
	d.notifyNode = limitsNode
}

// resolveNotify checks that every limit notify names is a fixed-window
// limit of c, wherever a limit of that name is: in every plan, the global
// limits, a rule, a key's own limits and the Envoy rules. The server
// notifies only fixed windows, so one of another algorithm would never be
// told. A notified limit may not count by the answer, nor lease from
// Redis: a leased status's Remaining is the shared remainder and this
// instance's units, so the units other instances lease and have not spent
// would be told as used.
func (d *decoder) resolveNotify(c *Config) {
	if c.Notify.URL == "" || d.notifyNode == nil {
		return
	}
	type found struct {
		alg   sluice.Algorithm
		where string
		ids   []string // its ID in the store if Redis may lease it (see leasable)
	}
	kinds := map[string][]found{}
	add := func(where string, ls []sluice.Limit) {
		for _, l := range ls {
			kinds[l.Name()] = append(kinds[l.Name()], found{l.Algorithm(), where, leasable("", l)})
		}
	}
	for _, p := range c.Policy.Plans {
		add("plan "+p.Name, p.Limits)
	}
	add("the global limits", c.Policy.Global)
	for _, r := range c.Rules {
		for _, l := range r.Limits {
			name := r.Name + "." + l.Name()
			kinds[name] = append(kinds[name], found{l.Algorithm(), "rule " + r.Name, leasable(r.Name+".", l)})
		}
	}
	for _, h := range slices.SortedFunc(maps.Keys(c.Keys), func(a, b [32]byte) int { return bytes.Compare(a[:], b[:]) }) {
		if k := c.Keys[h]; k.Plan != nil && c.Policy.Plan(k.Plan.Name) != k.Plan {
			add("the limits of key "+k.Name, k.Plan.Limits) // a key's own limits
		}
	}
	where := "a plan, a rule (rule.limit) or global"
	if c.Envoy.Enabled {
		// The Envoy rules' limits, by label; rule files that do not load
		// are the server's to refuse (sluice check, sluice serve).
		if rules, err := envoy.LoadRuleFiles(c.Envoy.Rules...); err == nil {
			add(envoyRules, rules.Limits())
		}
		where += ", or of the envoy rules"
	}
	for i, name := range c.Notify.Limits {
		e, p := d.notifyNode, "notify.limits"
		if d.notifyNode.Kind == yaml.SequenceNode && i < len(d.notifyNode.Content) {
			e, p = d.notifyNode.Content[i], fmt.Sprintf("notify.limits[%d]", i)
		}
		all, ok := kinds[name]
		if !ok {
			d.Errorf(e, p, "%q is no limit of %s", name, where)
			continue
		}
		for _, f := range all {
			if f.alg != sluice.AlgorithmFixedWindow {
				d.Errorf(e, p, "%q is %v in %s: a share of a quota is a fixed window's (a day's, a month's)", name, f.alg, f.where)
				break
			}
		}
		for _, f := range all {
			if len(f.ids) > 0 {
				c.notified = append(c.notified, countAt{name: name, ids: f.ids, node: e, path: p})
			}
		}
		for _, f := range all {
			if c.Store.Type == "redis" && leased(&c.Store.Redis, f.ids) {
				fix := "set lease: off on the limit"
				if f.where == envoyRules {
					fix = "set store.redis.lease: off (a limit of the envoy rules has no lease: of its own)"
				}
				d.Errorf(e, p, "%q is leased from Redis (lease: auto) in %s: a leased status counts the units other instances "+
					"hold and have not spent as used, so a share would be told before the client used it; %s", name, f.where, fix)
				break
			}
		}
		if count := countedByAnswer(c, name); count != "" {
			d.Errorf(e, p, "%q counts %s: a share is told as each request is decided, when such a limit's count "+
				"holds the requests in flight that their answers may give back; notify it from the upstream", name, count)
		}
	}
}

// envoyRules is where resolveNotify finds the Envoy rules' limits.
const envoyRules = "the envoy rules"

// countedByAnswer returns the count: of the limit called name (a rule's
// as "<rule>.<limit>", which takes its rule's unless it says its own) when
// it counts by the answer, else "".
func countedByAnswer(c *Config, name string) string {
	count, said := c.Count[name]
	if rule, _, ok := strings.Cut(name, "."); ok && !said {
		count = c.Count[rule]
	}
	if count == httplimit.CountAll {
		return ""
	}
	return count
}

// loopbackHost says whether host (no port) is "localhost" or a loopback
// address: 127.0.0.0/8, ::1.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// NotifiedLeasedBy judges the limits c's notify names against the lease
// settings of the store section inForce (that of the configuration a
// running store was opened with, whose leases hold until the next start)
// as Parse judges them against c's own: it returns an *Error at each
// notify.limits entry naming a limit inForce leases from Redis, joined,
// or nil.
func (c *Config) NotifiedLeasedBy(inForce Store) error {
	if inForce.Type != "redis" {
		return nil
	}
	var errs []error
	for _, n := range c.notified {
		if leased(&inForce.Redis, n.ids) {
			errs = append(errs, &Error{File: c.File, Line: n.node.Line, Col: n.node.Column, Path: n.path,
				Msg: fmt.Sprintf("%q is leased from Redis by the running store, whose lease settings change at the next start: "+
					"a leased status counts the units other instances hold and have not spent as used (restart to apply lease: off)", n.name)})
		}
	}
	return errors.Join(errs...)
}
