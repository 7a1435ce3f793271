package migrate

import (
	"fmt"
	"slices"
)

// haproxyEarlier returns, as except: entries, the requests that the
// use_backend lines of frontend f tried before route r send to other
// backends than backend: HAProxy takes the first use_backend whose
// condition holds, and default_backend when none does, so those requests
// never reach backend by r. A condition an entry cannot say (not one
// conjunction, or an ACL sluice's rules do not match) is reported at
// where: the backend's rules count those requests too.
func (t *Translation) haproxyEarlier(f *haproxyProxy, r haproxyRoute, backend, where string) []RuleMatch {
	var except []RuleMatch
	for _, o := range f.routes {
		if r.cond != nil && o.line >= r.line {
			break
		}
		if o.cond == nil || o.backend == backend {
			continue
		}
		m, expressible := haproxyRouteMatch(o.cond)
		if !expressible {
			t.differs(where, "use_backend %s (line %d) comes first and sends some of these requests to backend %s; sluice cannot leave out the requests of its condition, so the rules count them too: add them to the rules' except: entries.", o.backend, o.line, o.backend)
			continue
		}
		if !slices.ContainsFunc(except, func(e RuleMatch) bool { return sameRuleMatch(e, m) }) {
			except = append(except, m)
		}
	}
	return except
}

// haproxyRouteMatch returns the requests of use_backend condition cond as
// one except: entry, and whether one can say them: cond must be one
// conjunction of paths, methods, the Host and headers (haproxyMatch),
// without negated paths or addresses.
func haproxyRouteMatch(cond *haproxyCond) (RuleMatch, bool) {
	if len(cond.terms) != 1 || cond.unless {
		return RuleMatch{}, false
	}
	var scratch Translation
	var r Rule
	exempt, ok := scratch.haproxyMatch(&r, cond.terms[0], "")
	if !ok || len(exempt) > 0 || len(r.ExceptPaths) > 0 || len(r.Any) > 0 {
		return RuleMatch{}, false
	}
	m := RuleMatch{Paths: r.Paths, Hosts: r.Hosts, Methods: r.Methods, Headers: r.Headers}
	return m, len(m.Paths)+len(m.Hosts)+len(m.Methods)+len(m.Headers) > 0
}

// sameRuleMatch reports whether a and b match the same requests as
// written.
func sameRuleMatch(a, b RuleMatch) bool {
	return slices.Equal(a.Paths, b.Paths) && slices.Equal(a.Hosts, b.Hosts) && slices.Equal(a.Methods, b.Methods) &&
		slices.Equal(a.Headers, b.Headers) && slices.Equal(a.ExceptPaths, b.ExceptPaths)
}

// haproxyLeaveOutEarlier adds except to the rules t.SluiceRules[from:],
// those a backend's refusals made for one route, and says so at where.
func (t *Translation) haproxyLeaveOutEarlier(from int, except []RuleMatch, where string) {
	if len(except) == 0 || from == len(t.SluiceRules) {
		return
	}
	for i := from; i < len(t.SluiceRules); i++ {
		t.SluiceRules[i].Except = append(t.SluiceRules[i].Except, except...)
	}
	t.same(where, "the requests that the use_backend lines HAProxy tries first send to other backends never reach this one by this route: the rules leave them out (except: %s).", fmt.Sprint(len(except))+" entries")
}
