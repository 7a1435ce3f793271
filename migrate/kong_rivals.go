package migrate

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// kongPlace is a route of the file and what a rule matches of it
// (kongRouteMatch, unreported: the reports are its plugins' to make).
type kongPlace struct {
	route kongRoute
	match kongMatch
	// patterns are the ServeMux patterns of each of match.paths
	// (kongPathPatterns).
	patterns [][]string
}

// kongRivals returns the routes of all but those skip reports (by their
// number, kongRoute.at), with their matches.
func kongRivals(all []kongRoute, skip func(at int) bool) []kongPlace {
	var out []kongPlace
	for _, r := range all {
		if !skip(r.at) {
			p := kongPlace{route: r, match: (&Translation{}).kongRouteMatch(r, "")}
			for _, q := range p.match.paths {
				p.patterns = append(p.patterns, kongPathPatterns(q))
			}
			out = append(out, p)
		}
	}
	return out
}

// kongRival is what Kong's router gives route o of what a rule's match a
// (made of the routes of a plugin that does not run on o) matches too.
type kongRival struct {
	// theirs are the ServeMux patterns of o's paths that lie below a's
	// (a longer prefix, or a regular expression of a literal path, which
	// Kong tries before the prefixes), which a may leave out.
	theirs []string
	// prefixes are o's paths among theirs that Kong matches as a string
	// prefix: it also takes the names that start the same way.
	prefixes []string
	// regexes are o's regular-expression paths, which Kong tries before
	// a's prefixes and a rule cannot match.
	regexes []string
	// above are o's paths at or above a's, which Kong gives o where o
	// matches by more of a request (hosts, methods, headers) than a.
	above []string
	// partial: o matches on some of a's hosts or methods only, or by
	// headers, so that a cannot leave out its paths (except_paths leaves
	// them out on every host and method).
	partial bool
}

// empty reports whether o takes none of a's requests.
func (v kongRival) empty() bool {
	return len(v.theirs) == 0 && len(v.regexes) == 0 && len(v.above) == 0
}

// kongRivalOf returns what Kong's router gives route place p of the
// requests a rule's match a matches. Kong prefers the route that matches
// by more of a request's attributes (hosts, methods, headers), then a
// regular expression, then the longer prefix.
func kongRivalOf(p kongPlace, a RuleMatch) kongRival {
	var v kongRival
	o, m := p.route, p.match
	if len(a.Paths) == 0 || disjoint(m.hosts, m.methods, a.Hosts, a.Methods) {
		return v
	}
	count := func(b ...bool) int {
		n := 0
		for _, x := range b {
			if x {
				n++
			}
		}
		return n
	}
	mine, its := count(len(a.Hosts) > 0, len(a.Methods) > 0), count(len(o.Hosts) > 0, len(o.Methods) > 0, len(o.Headers) > 0)
	if its < mine {
		return v // a's routes match more of the requests both match: Kong gives them those
	}
	for i, q := range m.paths {
		pats := p.patterns[i]
		regex := strings.HasPrefix(q, "~") || !strings.HasPrefix(q, "/")
		if len(pats) == 0 {
			if regex {
				v.regexes = append(v.regexes, q)
			}
			continue
		}
		for _, pat := range pats {
			switch {
			case slices.ContainsFunc(a.Paths, func(p string) bool { return below(pat, p) || regex && pat == p }):
				if !slices.Contains(v.theirs, pat) {
					v.theirs = append(v.theirs, pat)
				}
				if !regex && !strings.HasSuffix(q, "/") && !slices.Contains(o.segmented, q) && !slices.Contains(v.prefixes, q) {
					v.prefixes = append(v.prefixes, q)
				}
			case its > mine && slices.ContainsFunc(a.Paths, func(p string) bool { return p == pat || below(p, pat) }):
				if !slices.Contains(v.above, q) {
					v.above = append(v.above, q)
				}
			}
		}
	}
	v.partial = len(o.Headers) > 0 || !covers(m.hosts, m.methods, a.Hosts, a.Methods)
	return v
}

// kongHasRivals reports whether a route of rivals takes some of the
// requests the rule of s's plugin would match.
func kongHasRivals(s kongScope, rivals []kongPlace) bool {
	for _, a := range kongAlternatives(s) {
		for _, o := range rivals {
			if !kongRivalOf(o, a.RuleMatch).empty() {
				return true
			}
		}
	}
	return false
}

// kongLeaveOutRivals makes each match of rule t.SluiceRules[at], the rule
// of a plugin (reported at where), leave out (except_paths) the paths that
// Kong's router gives to one of rivals, routes the plugin does not run on:
// a longer prefix, or a regular expression of a literal path. What it
// cannot leave out is reported: a route of some of the match's hosts or
// methods only, or of headers, or that matches by more of a request than
// the match, a regular expression, the names a string prefix takes besides
// its path, and a path below which the match covers a route of its own.
// Each kind of report is one line: of its route, or of all the routes it
// concerns, counting them and naming the first kongNamed.
func (t *Translation) kongLeaveOutRivals(at int, rivals []kongPlace, where string) {
	const (
		regexes = iota
		above
		split
		partial
		leftOut
		excepted
		prefixes
		kept
		kinds
	)
	// notes, by kind, are the "route (paths)" of each route it concerns,
	// and ones what is said of the first alone.
	var notes [kinds][]string
	var ones [kinds]string
	var prefix string // the first of the string prefixes noted
	note := func(kind int, name string, paths []string, format string, args ...any) {
		item := name + " (" + strings.Join(paths, " ") + ")"
		if !slices.Contains(notes[kind], item) {
			notes[kind] = append(notes[kind], item)
		}
		if ones[kind] == "" {
			ones[kind] = fmt.Sprintf(format, args...)
		}
	}
	r := &t.SluiceRules[at]
	// A match split by host or method (kongSplitMatch) is one more
	// alternative, weighed in turn.
	for k := 0; k < max(len(r.Any), 1); k++ {
		for _, p := range rivals {
			alt := k
			if len(r.Any) == 0 {
				alt = -1
			}
			a := r.alternatives()[k]
			v := kongRivalOf(p, a)
			if v.empty() {
				continue
			}
			o := p.route
			name := o.Name
			if name == "" {
				name = strings.Join(routePaths(o), " ")
			}
			if len(v.regexes) > 0 {
				note(regexes, name, v.regexes, "route %s's path %s is a regular expression, which Kong's router tries before the prefixes of this plugin's routes, and gives it the requests it matches, where this plugin does not run; a rule cannot match a regular expression to leave it out: those requests count against it too.", name, strings.Join(v.regexes, " "))
			}
			plain := kongPlain(o)
			if len(v.above) > 0 && plain {
				var pats []string
				for i, q := range p.match.paths {
					if slices.Contains(v.above, q) {
						pats = append(pats, p.patterns[i]...)
					}
				}
				if r.kongExcept(alt, overlapping(pats, a.Paths), p.match.hosts, p.match.methods, a.Paths, true) {
					note(excepted, name, v.above, "Kong's router gives route %s the requests on %s of its own hosts and methods, where this plugin does not run: the rule leaves them out (except: its paths on its hosts and methods).", name, strings.Join(v.above, " "))
					v.above = nil
				}
			}
			if len(v.above) > 0 {
				note(above, name, v.above, "route %s matches by more of a request (hosts, methods or headers) than this plugin's routes, so Kong's router gives it the requests on %s that both match, where this plugin does not run; a rule cannot leave out a path on some hosts or methods only: those requests count against it too.", name, strings.Join(v.above, " "))
			}
			if len(v.theirs) == 0 {
				continue
			}
			switch {
			case v.partial && kongSplitMatch(r, k, p):
				note(split, name, v.theirs, "route %s takes the requests on %s of its hosts or methods alone: the rule's match of those is an alternative of its own (match: a list), which leaves them out (except_paths), one count with the others.", name, strings.Join(v.theirs, " "))
			case v.partial && plain && r.kongExcept(alt, v.theirs, p.match.hosts, p.match.methods, a.Paths, kongPoints(p.match.hosts, p.match.methods) > kongPoints(a.Hosts, a.Methods)):
				note(excepted, name, v.theirs, "Kong's router gives route %s the requests on %s of its own hosts and methods, where this plugin does not run: the rule leaves them out (except: its paths on its hosts and methods).", name, strings.Join(v.theirs, " "))
				if len(v.prefixes) > 0 {
					p := v.prefixes[0]
					note(prefixes, name, v.prefixes, "route %s's path %s is a string prefix in Kong, which also takes %sx…, where this plugin does not run; the rule leaves out %s and %s/ only: requests on other names that start the same way count against it.", name, p, p, p, p)
					prefix = cmp.Or(prefix, p)
				}
			case v.partial:
				note(partial, name, v.theirs, "Kong's router gives the requests on %s of route %s's hosts, methods or headers to route %s, where this plugin does not run; a rule cannot leave out a path on some hosts, methods or headers only (except_paths leaves it out on all): those requests count against it too.", strings.Join(v.theirs, " "), name, name)
			case r.leaveOutAt(alt, v.theirs, a.Paths):
				note(leftOut, name, v.theirs, "Kong's router gives the requests on %s to route %s, of a longer prefix or a regular expression of the path, where this plugin does not run: the rule leaves them out (except_paths).", strings.Join(v.theirs, " "), name)
				if len(v.prefixes) > 0 {
					p := v.prefixes[0]
					note(prefixes, name, v.prefixes, "route %s's path %s is a string prefix in Kong, which also takes %sx…, where this plugin does not run; the rule leaves out %s and %s/ only: requests on other names that start the same way count against it.", name, p, p, p, p)
					prefix = cmp.Or(prefix, p)
				}
			default:
				note(kept, name, v.theirs, "Kong's router gives the requests on %s to route %s, of a longer prefix or a regular expression of the path, where this plugin does not run; the rule cannot leave them out (except_paths) without leaving out a route below them that it covers: they count against it too.", strings.Join(v.theirs, " "), name)
			}
		}
	}
	say := func(same bool, kind int, format string) {
		switch rs := notes[kind]; {
		case len(rs) == 1:
			t.Differences = append(t.Differences, Difference{Where: where, Same: same, Text: ones[kind]})
		case len(rs) > 1:
			t.Differences = append(t.Differences, Difference{Where: where, Same: same, Text: fmt.Sprintf(format, kongCounted(rs))})
		}
	}
	say(false, regexes, "the paths of %s are regular expressions, which Kong's router tries before the prefixes of this plugin's routes, and gives them the requests they match, where this plugin does not run; a rule cannot match a regular expression to leave it out: those requests count against it too.")
	say(false, above, "%s match by more of a request (hosts, methods or headers) than this plugin's routes, so Kong's router gives them the requests on those paths that both match, where this plugin does not run; a rule cannot leave out a path on some hosts or methods only: those requests count against it too.")
	say(true, split, "%s take the requests on those paths of their hosts or methods alone: the rule's match of those is an alternative of its own (match: a list), which leaves them out (except_paths), one count with the others.")
	say(false, partial, "Kong's router gives the requests on the paths of %s of their own hosts, methods or headers to them, where this plugin does not run; a rule cannot leave out a path on some hosts, methods or headers only (except_paths leaves it out on all): those requests count against it too.")
	say(true, leftOut, "Kong's router gives the requests on the paths of %s to them, of a longer prefix or a regular expression of the path, where this plugin does not run: the rule leaves them out (except_paths).")
	say(true, excepted, "Kong's router gives each of %s the requests on its paths of its own hosts and methods, where this plugin does not run: the rule leaves them out (except: their paths on their hosts and methods).")
	say(false, prefixes, "the paths of %s are string prefixes in Kong, each of which also takes the names that start the same way ("+prefix+" takes "+prefix+"x…), where this plugin does not run; the rule leaves out each path and what lies below it only ("+prefix+" and "+prefix+"/): requests on other names that start the same way count against it.")
	say(false, kept, "Kong's router gives the requests on the paths of %s to them, of a longer prefix or a regular expression of the path, where this plugin does not run; the rule cannot leave them out (except_paths) without leaving out a route below them that it covers: they count against it too.")
}

// kongNamed is how many routes a report names before saying how many more
// it concerns.
const kongNamed = 5

// kongCounted says how many routes items are ("route (paths)" each, at
// least two) and names the first kongNamed of them: "2 routes, a (/a /a/)
// and b (/b)", "7 routes, a (/a), …, e (/e) and 2 more".
func kongCounted(items []string) string {
	head := fmt.Sprintf("%d routes, ", len(items))
	if len(items) <= kongNamed {
		return head + strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
	}
	return head + strings.Join(items[:kongNamed], ", ") + fmt.Sprintf(" and %d more", len(items)-kongNamed)
}

// kongSplitMatch splits match k of rule r (its k-th alternative) by the
// hosts of route o (of place p) that it names, where o matches every
// method of it and no header, or else by the methods of o that it names,
// where o matches every host of it and no header: the match of the other
// hosts (or methods) stays at k, that of o's is appended (r becomes a rule
// of alternatives), so that it can leave out what o takes there. Wildcard
// hosts are not split. It reports whether it split.
func kongSplitMatch(r *Rule, k int, p kongPlace) bool {
	a := r.alternatives()[k]
	o, m := p.route, p.match
	if len(o.Headers) > 0 {
		return false
	}
	wild := func(h string) bool { return strings.HasPrefix(h, "*.") }
	part := func(mine, its []string) (theirs, rest []string) {
		for _, v := range mine {
			if slices.Contains(its, v) {
				theirs = append(theirs, v)
			} else {
				rest = append(rest, v)
			}
		}
		return theirs, rest
	}
	var theirs, rest []string
	byHost := len(m.hosts) > 0 && !slices.ContainsFunc(a.Hosts, wild) && !slices.ContainsFunc(m.hosts, wild) && covers(nil, m.methods, nil, a.Methods)
	if byHost {
		theirs, rest = part(a.Hosts, m.hosts)
	} else if len(m.methods) > 0 && covers(m.hosts, nil, a.Hosts, nil) {
		theirs, rest = part(a.Methods, m.methods)
	}
	if len(theirs) == 0 || len(rest) == 0 {
		return false
	}
	if len(r.Any) == 0 {
		r.Any = r.alternatives()
		r.Paths, r.Hosts, r.Methods, r.Headers, r.ExceptPaths = nil, nil, nil, nil, nil
	}
	split := r.Any[k]
	split.Paths, split.Hosts, split.Methods, split.Headers, split.ExceptPaths = slices.Clone(split.Paths), slices.Clone(split.Hosts), slices.Clone(split.Methods), slices.Clone(split.Headers), slices.Clone(split.ExceptPaths)
	if byHost {
		split.Hosts, r.Any[k].Hosts = theirs, rest
	} else {
		split.Methods, r.Any[k].Methods = theirs, rest
	}
	r.Any = append(r.Any, split)
	return true
}
