package migrate

import (
	"net/http"
	"slices"
	"strings"
)

// traefikRoute is a router with what its rule matches (ok: the rule was
// read, see traefikMatch) and whether it names a rate-limiting middleware.
type traefikRoute struct {
	router *traefikRouter
	traefikMatcher
	ok, limited bool
}

// traefikMeet reports whether a request may match both m and o: their
// hosts, methods and headers meet, and so do their paths (none: every
// path; else one lies at or below the other).
func traefikMeet(m, o *traefikMatcher) bool {
	if m.apart(o) {
		return false
	}
	if len(m.paths) == 0 || len(o.paths) == 0 {
		return true
	}
	return slices.ContainsFunc(m.paths, func(p string) bool {
		return slices.ContainsFunc(o.paths, func(q string) bool { return p == q || below(p, q) || below(q, p) })
	})
}

// traefikServes reports whether router b serves every entry point router
// a serves (nil: every one), so that it may take any of a's requests.
func traefikServes(b, a *traefikRouter) bool {
	return len(b.entryPoints) == 0 || len(a.entryPoints) > 0 && !slices.ContainsFunc(a.entryPoints, func(e string) bool { return !slices.Contains(b.entryPoints, e) })
}

// traefikFree sets cost 0 on the paths of the routers without a rate
// limit that lie below a limited router's path, where such a router takes
// every request of its path from every limited router: it matches any
// host, method and headers, and has more priority than each limited
// router whose paths hold it, on each one's entry points. It returns those paths; the routers' other
// paths are left to traefikLeaveOut.
func (t *Translation) traefikFree(routes []traefikRoute) map[string]bool {
	var limited []string // the limited routers' paths
	for p, c := range t.Costs {
		if c == 1 {
			limited = append(limited, p)
		}
	}
	free := map[string]bool{}
	for _, u := range routes {
		if u.limited || !u.ok || u.narrow() {
			continue
		}
		for _, q := range u.paths {
			if !slices.ContainsFunc(limited, func(p string) bool { return below(q, p) }) {
				continue
			}
			outranked := slices.ContainsFunc(routes, func(a traefikRoute) bool {
				return a.limited && (a.router.priority >= u.router.priority || !traefikServes(u.router, a.router)) &&
					(!a.ok || len(a.paths) == 0 || slices.ContainsFunc(a.paths, func(p string) bool { return p == q || below(q, p) }))
			})
			if !outranked {
				t.Costs[q], free[q] = 0, true
			}
		}
	}
	return free
}

// traefikLeaveOut leaves out of each rule of uses, for each router it
// counts, the requests that another router of more priority, serving its
// entry points, takes from it, as Traefik sends a request to the matching
// router of the highest priority (a router serving only some of them is
// left in, reported by traefikEntryPoints): a router that matches every request of the rule's hosts,
// methods and headers by its paths, out of the router's match
// (except_paths); another, by all it matches (except:). Paths free costs
// 0 on already. What it cannot leave out (another router of the rule that
// the router does not outrank matches the same requests), and routers of
// the same priority matching the same requests, whose order Traefik does
// not set, are reported.
func (t *Translation) traefikLeaveOut(routes []traefikRoute, uses []traefikUse, free map[string]bool) {
	places := traefikPlaces(uses)
	type member struct {
		rule   int
		router *traefikRouter
	}
	inRule := map[member]bool{}        // the routers each rule counts
	byRule := map[int][]traefikPlace{} // the places of each rule
	for _, c := range places {
		inRule[member{c.rule, c.router}] = true
		byRule[c.rule] = append(byRule[c.rule], c)
	}
	type pair struct {
		rule, alt int
		to        *traefikRouter
	}
	done := map[pair]bool{}
	unread := map[*traefikRouter]bool{}
	for _, a := range places {
		if a.rule < 0 || a.router == nil || !a.matchable {
			continue
		}
		for i := range routes {
			b := &routes[i]
			switch {
			case b.router == a.router || b.router.priority < a.router.priority || !traefikServes(b.router, a.router) ||
				inRule[member{a.rule, b.router}] || done[pair{a.rule, a.alt, b.router}]:
			case !b.ok:
				if !b.limited && !unread[b.router] {
					unread[b.router] = true
					t.differs("router "+b.router.name, "its rule %q is not only Host, Path, PathPrefix, Method and Header terms joined by &&, and its priority (%d) is not below router %s's (%d): the requests Traefik sends it of that router's are not left out of rule %s, which counts them.", b.router.rule, b.router.priority, a.router.name, a.router.priority, t.SluiceRules[a.rule].Name)
				}
			case traefikMeet(&a.traefikMatcher, &b.traefikMatcher):
				done[pair{a.rule, a.alt, b.router}] = true
				t.traefikOutranked(a, b, byRule[a.rule], free)
			}
		}
	}
}

// traefikOutranked leaves router b's requests out of the rule of place a
// when b has more priority than a's router (see traefikLeaveOut); places
// are the places of that rule.
func (t *Translation) traefikOutranked(a traefikPlace, b *traefikRoute, places []traefikPlace, free map[string]bool) {
	r := &t.SluiceRules[a.rule]
	pa, pb := a.router.priority, b.router.priority
	where := "router " + b.router.name
	switch {
	case pb == pa:
		t.differs(where, "it and router %s have the same priority (%d) and match some requests alike: Traefik's order between them is not set, and rule %s of router %s counts those requests. Set a priority on one of them to choose.", a.router.name, pa, r.Name, a.router.name)
		return
	case !b.limited && len(b.paths) > 0 &&
		!slices.ContainsFunc(b.paths, func(q string) bool {
			return !free[q] || slices.ContainsFunc(a.paths, func(p string) bool { return below(p, q) })
		}):
		return // its paths cost 0, and no path of a's lies below them
	case len(b.paths) == 0 && !b.narrow():
		t.differs(where, "it matches every request, with more priority (%d) than router %s (%d): Traefik sends it none, but rule %s counts them. Remove the router, or its middleware.", pb, a.router.name, pa, r.Name)
		return
	}
	wide := len(b.paths) > 0 && covers(b.hosts, b.methods, a.hosts, a.methods) &&
		!slices.ContainsFunc(b.headers, func(h HeaderMatch) bool { return !slices.Contains(a.headers, h) })
	// Another router the rule counts on the same requests, which b does
	// not outrank, keeps them: in a's alternative for except_paths, in any
	// for except:.
	k := slices.IndexFunc(places, func(c traefikPlace) bool {
		return c.router != a.router && (!wide || c.alt == a.alt) && c.router.priority >= pb &&
			traefikMeet(&c.traefikMatcher, &b.traefikMatcher)
	})
	if k >= 0 {
		t.differs(where, "Traefik sends its requests to it alone (its priority, %d, is above router %s's, %d); rule %s matches them too, and cannot leave them out without leaving out router %s's, which keeps them: they also count against it.", pb, a.router.name, pa, r.Name, places[k].router.name)
		return
	}
	if wide {
		r.leaveOutAt(a.alt, b.paths, nil)
		t.same(where, "Traefik sends its requests to it alone (its priority, %d, is above router %s's, %d); rule %s of router %s leaves its paths out (except_paths).", pb, a.router.name, pa, r.Name, a.router.name)
		return
	}
	r.exceptMatch(RuleMatch{Paths: slices.Clone(b.paths), Hosts: slices.Clone(b.hosts), Methods: slices.Clone(b.methods), Headers: slices.Clone(b.headers)})
	t.same(where, "Traefik sends its requests to it alone (its priority, %d, is above router %s's, %d); rule %s of router %s leaves them out by its hosts, paths, methods and headers (except:).", pb, a.router.name, pa, r.Name, a.router.name)
}

// traefikHead leaves HEAD out of each rule whose every router matches
// GET and not HEAD: Traefik's Method(`GET`) takes GET alone, where a
// rule's GET matches HEAD too.
func (t *Translation) traefikHead(uses []traefikUse) {
	for _, u := range uses {
		if u.rule < 0 || !u.matchable {
			continue
		}
		scopes := u.scopes
		if len(scopes) == 0 {
			scopes = []traefikUse{u}
		}
		if slices.ContainsFunc(scopes, func(s traefikUse) bool {
			return !slices.Contains(s.methods, http.MethodGet) || slices.Contains(s.methods, http.MethodHead)
		}) {
			continue
		}
		r := &t.SluiceRules[u.rule]
		r.exceptMatch(RuleMatch{Methods: []string{http.MethodHead}})
		t.same("rule "+r.Name+" methods", "Traefik's Method(`GET`) takes GET requests alone, not HEAD; the rule's GET matches HEAD too, so it leaves HEAD out (except:).")
	}
}

// traefikEntryPoints reports the limited routers whose entry points
// differ from those of another router matching some of the same
// requests: Traefik gives a request only to the routers of the entry
// point (address and port) it came to, where sluice's rules match every
// port.
func (t *Translation) traefikEntryPoints(routes []traefikRoute) {
	for _, a := range routes {
		if !a.limited {
			continue
		}
		var others []string
		for _, b := range routes {
			if b.router == a.router || sameSet(a.router.entryPoints, b.router.entryPoints) || a.ok && b.ok && !traefikMeet(&a.traefikMatcher, &b.traefikMatcher) {
				continue
			}
			eps := "every entry point"
			if len(b.router.entryPoints) > 0 {
				eps = "entry point " + strings.Join(b.router.entryPoints, ", ")
			}
			others = append(others, "router "+b.router.name+" on "+eps)
		}
		if len(others) == 0 {
			continue
		}
		eps := "every entry point"
		if len(a.router.entryPoints) > 0 {
			eps = "entry point " + strings.Join(a.router.entryPoints, ", ")
		}
		t.differs("router "+a.router.name+" entryPoints", "it serves %s; %s match some of the same requests: Traefik gives a request only to the routers of the entry point (address and port) it came to, where sluice's rules match every port, so its rule also counts requests that came to the others. Run a sluice per entry point, each with the rules of its routers.", eps, strings.Join(others, "; "))
	}
}
