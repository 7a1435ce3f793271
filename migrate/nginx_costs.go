package migrate

import (
	"maps"
	"slices"
	"strings"
)

// nginxCosts sets the cost of the paths of scopes' locations, when only
// some locations are limited ("/" costs 0): a limited location's paths
// cost 1, and a location without limits that lies under a limited one's
// prefix costs 0 (ServeMux would give it the prefix's cost), and is free.
// A path's cost holds on every host, so a location without limits is free
// only when no other server gives its paths to a limited location: it
// then keeps the cost of that server's location, and the rules that match
// it on its own server's hosts leave it out instead (nginxOverlaps). With
// rules false (the zones are plan limits, which no rule can narrow) that
// is a difference.
func (t *Translation) nginxCosts(scopes []nginxScope, rules bool) {
	for _, s := range scopes {
		if s.pattern != nil && len(s.uses) > 0 {
			for _, p := range s.pattern {
				t.Costs[p] = 1
			}
		}
	}
	for i := range scopes {
		s := &scopes[i]
		if s.pattern == nil || len(s.uses) > 0 || !underLimited(s.pattern, scopes) {
			continue
		}
		other := nginxLimitedElsewhere(s, scopes)
		switch {
		case other == nil:
			for _, p := range s.pattern {
				t.Costs[p] = 0
			}
			s.free = true
			t.same(s.where, "it lies under a limited location's prefix and sets no limit_req or limit_conn: it costs 0, so nothing counts it, as in nginx.")
		case rules:
			t.same(s.where, "it sets no limit_req or limit_conn, but another server's %s limits %s, and a path's cost holds on every host: its paths keep cost 1, and the rules that match them on this server's hosts leave them out (except_paths, or except: on its hosts), so nothing counts them here, as in nginx.", other.where, strings.Join(s.pattern, " "))
		default:
			t.differs(s.where, "it sets no limit_req or limit_conn, but another server's %s limits %s, and a path's cost holds on every host: its requests count against the imported limits too. Give the servers names (server_name) a rule can match, so that each server's limits become rules of its hosts.", other.where, strings.Join(s.pattern, " "))
			continue
		}
		t.nginxUnlimitedPrefix(s, scopes)
	}
}

// nginxUnlimitedPrefix reports s, a location without limits that the
// import frees or leaves out, when it is a prefix without a final slash
// (location /api, patterns /api and /api/) under a limited location that
// holds the other names starting so: nginx gives it /apix too, unlimited,
// where the patterns hold the path and what lies below it only, so a
// request of /apix… counts against the enclosing limit in sluice.
func (t *Translation) nginxUnlimitedPrefix(s *nginxScope, scopes []nginxScope) {
	if len(s.pattern) != 2 || !underLimited([]string{s.pattern[0] + "x"}, scopes) {
		return
	}
	p := s.pattern[0]
	t.differs(s.where, "nginx's prefix %s is a string prefix, which also takes %sx…, unlimited, as this location sets no limit_req or limit_conn; the patterns %s and %s, which cost 0 or are left out, hold the path and what lies below it only, so a request of %sx… counts against the limited location whose prefix holds it. Write the location as %s/ (and location = %s) if it means the path and what lies below it.", p, p, p, s.pattern[1], p, p, p)
}

// nginxLimitedElsewhere returns a limited location of another server than
// s's that nginx gives a path of s's patterns, or nil: for each server,
// the location of the longest pattern at or above the path (nested ones
// included). With only some locations limited, a server's own level has
// no limits, so a server without such a location gives the path none.
func nginxLimitedElsewhere(s *nginxScope, scopes []nginxScope) *nginxScope {
	for _, q := range s.pattern {
		best := map[int]*nginxScope{} // by server: the location nginx gives q
		longest := map[int]int{}
		for i := range scopes {
			o := &scopes[i]
			if o.server == s.server || o.pattern == nil {
				continue
			}
			for _, p := range o.pattern {
				if (p == q || below(q, p)) && len(p) > longest[o.server] {
					best[o.server], longest[o.server] = o, len(p)
				}
			}
		}
		for _, sv := range slices.Sorted(maps.Keys(best)) {
			if len(best[sv].uses) > 0 {
				return best[sv]
			}
		}
	}
	return nil
}

// nginxLeaveOutFree leaves s, a location without limits that is not
// free, out of r, the rule of setting st whose patterns own are its
// locations' (on its hosts), where r matches it: nginx applies no limit
// there. On hosts r's all lie among, its paths become r's except_paths;
// on some of r's hosts only, an except: entry of s's hosts and paths
// (nginxExceptOnHosts). What cannot be left out is reported.
func (t *Translation) nginxLeaveOutFree(r *Rule, st *nginxSetting, s *nginxScope, own []string) {
	inside := nginxInside(r, s)
	if len(inside) == 0 {
		return
	}
	where := strings.Join(inside, " ")
	switch {
	case covers(s.hosts, nil, r.Hosts, nil):
		if slices.ContainsFunc(inside, func(q string) bool { return slices.Contains(own, q) }) {
			return // a location of r's own on the same hosts: nginx's server is r's
		}
		if r.leaveOut(s.pattern, own) {
			t.same(s.where, "nginx applies no limit on %s; rule %s, whose paths hold it, leaves it out (except_paths).", where, r.Name)
			return
		}
	case s.hosts == nil:
		return // a server without names: nginx gives r's hosts to r's server
	case nginxExceptOnHosts(r, st, s, inside):
		t.same(s.where, "nginx applies no limit on %s of %s; rule %s matches those paths there too and leaves them out on those hosts (except:).", where, strings.Join(s.hosts, ", "), r.Name)
		return
	}
	t.differs(s.where, "nginx applies no limit on %s; sluice's rule %s matches it too, and cannot leave it out without leaving out a location below it that uses the rule's zone: its requests count against that rule.", where, r.Name)
}

// nginxInside returns the patterns of location s that r's paths match: at
// or below one of them (all, for a rule of every path).
func nginxInside(r *Rule, s *nginxScope) []string {
	var inside []string
	for _, q := range s.pattern {
		if r.Paths == nil || slices.ContainsFunc(r.Paths, func(p string) bool { return p == q || below(q, p) }) {
			inside = append(inside, q)
		}
	}
	return inside
}

// nginxExceptOnHosts leaves inside, patterns of location s, out of r on
// s's hosts (an except: entry), where nginx gives them to s's server, and
// reports whether it could: not when a location of setting st, r's (of
// any alternative of r), on named hosts meeting s's lies at or below one
// of them, which the entry would leave out too (a location of a server
// without names takes none of s's hosts, which nginx gives s's server).
func nginxExceptOnHosts(r *Rule, st *nginxSetting, s *nginxScope, inside []string) bool {
	if slices.ContainsFunc(st.all(), func(o *nginxScope) bool {
		return o.hosts != nil && !disjoint(o.hosts, nil, s.hosts, nil) && slices.ContainsFunc(o.pattern, func(p string) bool {
			return slices.ContainsFunc(inside, func(q string) bool { return p == q || below(p, q) })
		})
	}) {
		return false
	}
	r.exceptMatch(RuleMatch{Paths: slices.Clone(inside), Hosts: slices.Clone(s.hosts)})
	return true
}
