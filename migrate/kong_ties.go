package migrate

import (
	"fmt"
	"slices"
	"strings"
)

// Kong's router gives a request to one route, the one of the most priority
// points (hosts, methods, headers), then a regular expression (of the
// highest regex_priority) before a prefix, then the longer prefix. Of
// routes of the same path, hosts and methods its documentation leaves
// undefined which one takes a request (the traditional_compatible router
// uses "either of them according to how its internal data structures are
// organized"), so nothing in a decK file says it, except a regex_priority
// between two regular expressions. The import gives such requests to the
// route listed last in the file (kongRoute.at), and reports it.

// kongPoints returns the priority points a rule's match of hosts and
// methods has in Kong's router (headers are not matched by rules).
func kongPoints(hosts, methods []string) int {
	n := 0
	if len(hosts) > 0 {
		n++
	}
	if len(methods) > 0 {
		n++
	}
	return n
}

// kongTied returns the routes numbered ats (places are all the file's
// routes, by kongRoute.at) that match Kong path p on exactly hosts and
// methods, by no header.
func kongTied(places []kongPlace, ats []int, p string, hosts, methods []string) []kongRoute {
	var out []kongRoute
	for _, at := range ats {
		if at < 0 || at >= len(places) {
			continue
		}
		pl := places[at]
		if len(pl.route.Headers) == 0 && slices.Contains(pl.match.paths, p) && sameSet(pl.match.hosts, hosts) && sameSet(pl.match.methods, methods) {
			out = append(out, pl.route)
		}
	}
	return out
}

// kongTieRank orders route r among routes of the same path p, hosts and
// methods as the import breaks their tie: a regular expression's
// regex_priority first, then the place in the file.
func kongTieRank(r kongRoute, p string) [2]int {
	prio := 0
	if strings.HasPrefix(p, "~") {
		prio = r.RegexPriority
	}
	return [2]int{prio, r.at}
}

// kongTieTaker returns the route of rs that takes the requests on path p.
func kongTieTaker(rs []kongRoute, p string) kongRoute {
	best := rs[0]
	for _, r := range rs[1:] {
		if a, b := kongTieRank(r, p), kongTieRank(best, p); a[0] > b[0] || a[0] == b[0] && a[1] > b[1] {
			best = r
		}
	}
	return best
}

// kongTies are the routes of the same path, hosts and methods the import
// weighed against each other, by that match, for one report each.
type kongTies struct {
	keys   []string // in the order met
	groups map[string]*kongTieGroup
}

// kongTieGroup is the routes of one path, hosts and methods.
type kongTieGroup struct {
	path   string
	routes []kongRoute
	in     map[int]bool // the numbers of routes (kongRoute.at)
}

// takenBy reports whether routes theirs (of another plugin, or of none)
// take from routes mine the requests on Kong path p that both match on
// hosts and methods, the same, and notes them for report.
func (ts *kongTies) takenBy(mine, theirs []kongRoute, p string, hosts, methods []string) bool {
	a, b := kongTieTaker(mine, p), kongTieTaker(theirs, p)
	ra, rb := kongTieRank(a, p), kongTieRank(b, p)
	h, m := slices.Clone(hosts), slices.Clone(methods)
	slices.Sort(h)
	slices.Sort(m)
	key := p + "\x00" + strings.Join(h, " ") + "\x00" + strings.Join(m, " ")
	if ts.groups == nil {
		ts.groups = map[string]*kongTieGroup{}
	}
	g := ts.groups[key]
	if g == nil {
		g = &kongTieGroup{path: p, in: map[int]bool{}}
		ts.groups[key], ts.keys = g, append(ts.keys, key)
	}
	for _, r := range slices.Concat(mine, theirs) {
		if !g.in[r.at] {
			g.in[r.at], g.routes = true, append(g.routes, r)
		}
	}
	return rb[0] > ra[0] || rb[0] == ra[0] && rb[1] > ra[1]
}

// report says, for each path, hosts and methods of several routes, which
// route the import gives their requests to, naming them.
func (ts *kongTies) report(t *Translation) {
	name := func(r kongRoute) string { return "route " + or(r.Name, strings.Join(routePaths(r), " ")) }
	for _, key := range ts.keys {
		g := ts.groups[key]
		slices.SortFunc(g.routes, func(a, b kongRoute) int { return a.at - b.at })
		taker := kongTieTaker(g.routes, g.path)
		top := kongTieRank(taker, g.path)[0]
		decided := !slices.ContainsFunc(g.routes, func(r kongRoute) bool { return r.at != taker.at && kongTieRank(r, g.path)[0] == top })
		var names []string
		for _, r := range g.routes {
			names = append(names, name(r))
		}
		var which string
		switch len(names) {
		case 2:
			which = names[0] + " and " + names[1]
		default:
			which = kongCounted(names)
		}
		d := Difference{Where: "routes of " + g.path, Same: decided}
		if decided {
			d.Text = fmt.Sprintf("%s match the same requests on %s (the same path, hosts and methods); Kong's router gives them to the regular expression of the highest regex_priority, and so does the import: it gives them to %s, whose rate-limiting plugin (or none) alone counts them.", which, g.path, name(taker))
		} else {
			d.Text = fmt.Sprintf("%s match the same requests on %s (the same path, hosts and methods); Kong's router gives each to one of them, which one its documentation leaves undefined (either, as its internal data structures are organized). The import gives them to %s, the later in the file, whose rate-limiting plugin (or none) alone counts them: check which one Kong runs (its Kong-Debug header names it) and give the others another path, host or method, or move their plugins.", which, g.path, name(taker))
		}
		t.Differences = append(t.Differences, d)
	}
}

// kongUntied returns rivals less the paths on which one of them ties with
// a route of the rule of scope s (whose matches are alts), for
// kongLeaveOutRivals, having left out of that rule (t.SluiceRules[at])
// the paths the rival takes and reported each tie: rivals itself when
// none ties, which the caller must not modify.
func (t *Translation) kongUntied(at int, s kongScope, rivals, places []kongPlace, ties *kongTies) []kongPlace {
	var out []kongPlace // nil until a rival ties
	for i, p := range rivals {
		var tied []string
		if len(p.route.Headers) == 0 {
			for _, q := range p.match.paths {
				r := &t.SluiceRules[at]
				for k, a := range r.alternatives() {
					mine := kongTied(places, s.routes, q, a.Hosts, a.Methods)
					if len(mine) == 0 || !sameSet(p.match.hosts, a.Hosts) || !sameSet(p.match.methods, a.Methods) {
						continue
					}
					if !slices.Contains(tied, q) {
						tied = append(tied, q)
					}
					if !ties.takenBy(mine, []kongRoute{p.route}, q, a.Hosts, a.Methods) {
						continue
					}
					alt := k
					if len(r.Any) == 0 {
						alt = -1
					}
					if pats := kongPathPatterns(q); len(pats) > 0 && !r.leaveOutAt(alt, pats, a.Paths) {
						t.differs(s.where, "the rule cannot leave out %s (except_paths) without leaving out a route below it that it covers: the requests route %s takes there count against it too.", q, or(p.route.Name, strings.Join(routePaths(p.route), " ")))
					}
				}
			}
		}
		if len(tied) == 0 {
			if out != nil {
				out = append(out, p)
			}
			continue
		}
		if out == nil {
			out = append(make([]kongPlace, 0, len(rivals)), rivals[:i]...)
		}
		u := kongPlace{route: p.route, match: p.match}
		u.match.paths = nil
		for i, q := range p.match.paths {
			if !slices.Contains(tied, q) {
				u.match.paths, u.patterns = append(u.match.paths, q), append(u.patterns, p.patterns[i])
			}
		}
		if len(u.match.paths) > 0 {
			out = append(out, u)
		}
	}
	if out == nil {
		return rivals
	}
	return out
}

// kongHasTies reports whether a route other than s's matches one of the
// paths of s's routes on the same hosts and methods (places are all the
// file's routes).
func kongHasTies(s kongScope, places []kongPlace) bool {
	byPath := map[string][]kongMatch{} // the matches of the other routes, by each of their paths
	for _, o := range places {
		if !slices.Contains(s.routes, o.route.at) {
			for _, q := range o.match.paths {
				byPath[q] = append(byPath[q], o.match)
			}
		}
	}
	for _, at := range s.routes {
		if at < 0 || at >= len(places) {
			continue
		}
		m := places[at].match
		for _, q := range m.paths {
			if slices.ContainsFunc(byPath[q], func(o kongMatch) bool { return sameSet(o.hosts, m.hosts) && sameSet(o.methods, m.methods) }) {
				return true
			}
		}
	}
	return false
}
