package migrate

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/sluice-dev/sluice"
)

// nginxSetting is one setting of a zone (a limit_req's zone, burst, delay
// and nodelay, or a limit_conn's number, and whether it only reports: its
// dry run) and the places that use it.
type nginxSetting struct {
	use    nginxUse
	dryRun bool
	scopes []*nginxScope
	// servers are scopes by server, one alternative of the rule each, for
	// a setting used in locations of servers of different hosts; nil: one
	// match of every scope.
	servers [][]*nginxScope
	// every, for the setting of one alternative, are the scopes of every
	// alternative of its rule; nil: scopes.
	every []*nginxScope
}

// all returns the scopes of st's rule, of every alternative.
func (st *nginxSetting) all() []*nginxScope {
	if st.every != nil {
		return st.every
	}
	return st.scopes
}

// nginxRules makes a rule of each setting of a zone in use: it matches
// the paths of the locations that use the setting (every path when a
// server or http block does), counts by the zone's key, and charges the
// request's cost, which is 0 where nothing is limited. nginx applies the
// limit_req of one location, the longest prefix; a rule applies wherever
// its patterns match, so it leaves out the limited locations below its
// paths that do not use its setting (nginxOverlaps).
func (t *Translation) nginxRules(zones map[string]*nginxZone, scopes []nginxScope) {
	var settings []*nginxSetting
	for i := range scopes {
		s := &scopes[i]
		for _, u := range s.uses {
			dry := s.dryRunOf(u)
			k := slices.IndexFunc(settings, func(st *nginxSetting) bool {
				return st.use.zone == u.zone && st.use.burst == u.burst && st.use.delay == u.delay && st.use.nodelay == u.nodelay && st.use.n == u.n && st.dryRun == dry
			})
			if k < 0 {
				settings, k = append(settings, &nginxSetting{use: u, dryRun: dry}), len(settings)
			}
			settings[k].scopes = append(settings[k].scopes, s)
		}
	}
	distinct := map[string]int{} // settings of each zone, before a rule per server splits them
	for _, st := range settings {
		distinct[st.use.zone]++
	}
	settings = t.nginxPerServer(settings, zones)
	perZone := map[string]int{} // rules of each zone
	for _, st := range settings {
		perZone[st.use.zone]++
	}
	keyed := map[string]bool{} // zones whose key the report has compared
	for _, st := range settings {
		z := zones[st.use.zone]
		r := Rule{Name: t.ruleName(z.name)}
		where := "zone " + z.name
		if perZone[z.name] > 1 {
			where = fmt.Sprintf("zone %s as at line %d", z.name, st.use.line)
		}
		name, shadow := defaultLimitName(z.window), st.dryRun
		if z.conn {
			name = "concurrent"
		}
		l := t.nginxLimit(z, st.use, name, where)
		l.Shadow = shadow
		r.Limits = []Limit{l}
		t.nginxRuleKey(z, &r, !keyed[z.name])
		keyed[z.name] = true
		if st.servers == nil {
			r.Paths, r.Hosts = nginxMatchOf(st.scopes)
			t.nginxOverlaps(&r, st, scopes)
		} else {
			for _, sc := range st.servers {
				a := Rule{Name: r.Name}
				a.Paths, a.Hosts = nginxMatchOf(sc)
				t.nginxOverlaps(&a, &nginxSetting{use: st.use, dryRun: st.dryRun, scopes: sc, every: st.scopes}, scopes)
				r.Any = append(r.Any, RuleMatch{Paths: a.Paths, Hosts: a.Hosts, Methods: r.Methods, ExceptPaths: a.ExceptPaths})
				for _, e := range a.Except {
					r.exceptMatch(e)
				}
			}
			r.Methods = nil
		}
		t.SluiceRules = append(t.SluiceRules, r)
	}
	for _, name := range slices.Sorted(maps.Keys(distinct)) {
		if distinct[name] > 1 {
			t.differs("zone "+name, "it is used with %d settings (burst, delay, nodelay, limit_conn's number, or a dry run): sluice makes a rule of each, each with its own count, where nginx's uses of one zone share one count per key.", distinct[name])
		}
	}
}

// nginxMatchOf returns the paths and hosts of a rule of scopes: their
// locations' patterns (nil, every path, when one is a server or http
// block) on their servers' hosts (nil, every host, when one has none).
func nginxMatchOf(scopes []*nginxScope) (paths, hosts []string) {
	everywhere := false
	for _, s := range scopes {
		if s.pattern == nil {
			everywhere = true
		}
		for _, p := range s.pattern {
			if !slices.Contains(paths, p) {
				paths = append(paths, p)
			}
		}
	}
	if everywhere {
		paths = nil
	}
	hosts = slices.Clone(scopes[0].hosts)
	for _, s := range scopes {
		if s.hosts == nil {
			return paths, nil
		}
		for _, h := range s.hosts {
			if !slices.Contains(hosts, h) {
				hosts = append(hosts, h)
			}
		}
	}
	return paths, hosts
}

// nginxPerServer splits a setting used in several servers into one per
// server where its zone is keyed by $server_name (nginx counts each server
// apart), and gives it an alternative per server (st.servers) where it is
// used in some locations of servers of different hosts: one match would
// take each location's paths on every server's hosts, and one rule of an
// alternative per server counts a key once across them, as nginx's zone
// does. A setting used in whole servers only stays one match, of their
// hosts.
func (t *Translation) nginxPerServer(settings []*nginxSetting, zones map[string]*nginxZone) []*nginxSetting {
	var out []*nginxSetting
	for _, st := range settings {
		var servers []int
		located, unhosted := false, false
		for _, s := range st.scopes {
			if !slices.Contains(servers, s.server) {
				servers = append(servers, s.server)
			}
			located = located || s.pattern != nil
			unhosted = unhosted || s.hosts == nil
		}
		byName := strings.Contains(zones[st.use.zone].key, "server_name")
		if len(servers) < 2 || !byName && (!located || unhosted) {
			out = append(out, st)
			continue
		}
		var parts []*nginxSetting
		for _, sv := range servers {
			part := &nginxSetting{use: st.use, dryRun: st.dryRun}
			for _, s := range st.scopes {
				if s.server == sv {
					part.scopes = append(part.scopes, s)
				}
			}
			parts = append(parts, part)
		}
		z := "zone " + st.use.zone
		if byName {
			out = append(out, parts...)
			t.same(z, "its key holds $server_name, one value per server: a rule per server (%d), each its own count.", len(servers))
			continue
		}
		for _, part := range parts {
			st.servers = append(st.servers, part.scopes)
		}
		out = append(out, st)
		t.same(z, "it is used in locations of %d servers of different hosts: one rule with an alternative per server (match: a list), each matching its server's hosts and locations, one count across them, as nginx's zone counts a key once across the servers.", len(servers))
	}
	return out
}

// nginxRuleKey sets the key of r, a rule of zone z, and compares it with
// nginx's for the first rule of a zone (first).
func (t *Translation) nginxRuleKey(z *nginxZone, r *Rule, first bool) {
	where := "zone " + z.name + " key"
	note := func(same bool, format string, args ...any) {
		switch {
		case !first:
		case same:
			t.same(where, format, args...)
		default:
			t.differs(where, format, args...)
		}
	}
	switch kind, attrs := z.keyKind(); kind {
	case keyAddress:
		r.Key = []string{"ip/32/128"}
		if len(z.methods) > 0 {
			r.Methods = z.methods
			note(true, "%s: a map of $request_method, the address for %s and empty for the other methods, which nginx does not count: the rule matches %s (match.methods), one count per address (key ip/32/128: IPv4 and IPv6 addresses whole).", z.key, strings.Join(z.methods, ", "), strings.Join(z.methods, ", "))
			if slices.Contains(z.methods, "GET") && !slices.Contains(z.methods, "HEAD") {
				note(false, "%s counts GET and not HEAD; sluice's rule of GET matches HEAD too, so HEAD requests count against it.", z.key)
			}
			break
		}
		note(true, "%s: one count per address (key ip/32/128: IPv4 and IPv6 addresses whole).", z.key)
	case keyAttrs:
		r.Key = attrs
		if slices.ContainsFunc(attrs, func(a string) bool { return strings.HasPrefix(a, "header:") }) {
			r.HeaderFrom = "any"
		}
		switch {
		case len(attrs) == 1 && (attrs[0] == "host" || attrs[0] == "path"):
			r.Fallback = "shared"
			note(true, "%s: one count per %s; a request without a Host header counts in one shared count, as nginx then keys it by the server's name.", z.key, attrDescription(attrs[0]))
		case len(attrs) == 1 && z.orAddress != "":
			r.Fallback, t.IPv6Prefix = "ip", 128
			note(true, "%s: a map of %s when it is set, else the client address: one count per value of %s, whoever sends it (header_from: any for a header), and one per address for a request without it, or with it empty (fallback: ip; ipv6_prefix: 128 keeps IPv6 addresses whole), as nginx keys it.", z.key, z.orAddress, attrDescription(attrs[0]))
		case len(attrs) == 1:
			r.Fallback = "skip"
			note(true, "%s: one count per value of %s, whoever sends it (header_from: any for a header, as nginx reads it); a request without it, or with it empty, is not counted (fallback: skip), as nginx does not count an empty key.", z.key, attrDescription(attrs[0]))
		default:
			r.Fallback = "shared"
			note(true, "%s: one count per value of %s together; a part a request lacks counts as one shared value (fallback: shared), as nginx joins an empty variable into the key.", z.key, strings.Join(attrs, " and "))
			if !slices.Contains(attrs, "ip/32/128") && !slices.Contains(attrs, "path") && !slices.Contains(attrs, "host") {
				note(false, "nginx does not count a request whose every part of %s is empty; sluice counts such requests together in one shared count.", z.key)
			}
		}
		if strings.Contains(z.key, "request_uri") {
			note(false, "$request_uri holds the query string too; the key path is the path alone, so URLs that differ only by their query share a count.")
		}
	case keyConstant:
		r.Key = []string{"rule"}
		note(true, "%s is one value for every request: the key rule is one count for every request the rule matches.", z.key)
	default:
		r.Key = []string{"ip/32/128"}
		note(false, "sluice cannot key a limit on %s: the rule counts per client address instead. Key on an address, a header, a query parameter, a cookie, the host or the path, or keep this limit in nginx.", z.key)
	}
}

// attrDescription says what a rule key attribute reads: "X-Api-Key",
// "the host", "query parameter page".
func attrDescription(attr string) string {
	switch {
	case attr == "host":
		return "host name (without port, in lower case, as nginx's $host)"
	case attr == "path":
		return "the path"
	case strings.HasPrefix(attr, "header:"):
		return strings.TrimPrefix(attr, "header:")
	case strings.HasPrefix(attr, "query:"):
		return "query parameter " + strings.TrimPrefix(attr, "query:")
	case strings.HasPrefix(attr, "cookie:"):
		return "cookie " + strings.TrimPrefix(attr, "cookie:")
	case strings.HasPrefix(attr, "claim:"):
		return "claim " + strings.TrimPrefix(attr, "claim:") + " of the verified token"
	case attr == "user":
		return "the verified token's subject (sub)"
	}
	return attr
}

// nginxOverlaps leaves out of r, the rule of setting st, the locations its
// paths match though nginx does not apply st there: a location below one
// of r's prefixes (or anywhere, for a rule of every path) that sets limits
// of its own without st, and a location without limits that does not cost
// 0 (nginxLeaveOutFree). One it cannot leave out (a location below it
// uses st) is reported.
func (t *Translation) nginxOverlaps(r *Rule, st *nginxSetting, scopes []nginxScope) {
	var own []string // the patterns of the locations that use st
	for _, s := range st.scopes {
		own = append(own, s.pattern...)
	}
	for i := range scopes {
		s := &scopes[i]
		if s.pattern == nil || slices.Contains(st.all(), s) || disjoint(s.hosts, nil, r.Hosts, nil) {
			continue
		}
		if len(s.uses) == 0 {
			if !s.free {
				t.nginxLeaveOutFree(r, st, s, own)
			}
			continue
		}
		if !covers(s.hosts, nil, r.Hosts, nil) {
			inside := nginxInside(r, s)
			switch {
			case len(inside) == 0:
			case s.hosts != nil && nginxExceptOnHosts(r, st, s, inside):
				t.same(s.where, "nginx applies only this location's limits on %s of %s; rule %s matches those paths there too and leaves them out on those hosts (except:).", strings.Join(inside, " "), strings.Join(s.hosts, ", "), r.Name)
			default:
				t.differs(s.where, "nginx applies only this location's limits on %s of its server; sluice's rule %s matches its paths on other hosts too, and cannot leave them out on this server's hosts alone: its requests also count against that rule.", strings.Join(s.pattern, " "), r.Name)
			}
			continue
		}
		for _, q := range s.pattern {
			if r.Paths != nil && !slices.ContainsFunc(r.Paths, func(p string) bool { return below(q, p) }) {
				continue
			}
			if r.leaveOut(s.pattern, own) {
				t.same(s.where, "nginx applies only this location's limit_req on %s; rule %s, whose paths hold it, leaves it out (except_paths).", strings.Join(s.pattern, " "), r.Name)
			} else {
				t.differs(s.where, "nginx applies only this location's limit_req on %s; sluice's rule %s matches it too, and cannot leave it out (except_paths) without leaving out a location below it that uses the rule's zone: its requests also count against that rule.", q, r.Name)
			}
			break
		}
	}
}

// underLimited reports whether a pattern of patterns lies below a pattern
// of a limited location of scopes.
func underLimited(patterns []string, scopes []nginxScope) bool {
	for _, s := range scopes {
		if len(s.uses) == 0 {
			continue
		}
		for _, p := range s.pattern {
			if slices.ContainsFunc(patterns, func(q string) bool { return below(q, p) }) {
				return true
			}
		}
	}
	return false
}

// defaultLimitName names a rule's one limit after its window, as sluice
// names limits: "per-second", "per-minute", "per-10s".
func defaultLimitName(w time.Duration) string { return sluice.FixedWindow(1, w).Name() }
