package migrate

import (
	"fmt"
	"slices"
	"strings"
)

// haproxyAllow is an http-request allow: it lets the requests of its
// condition (nil: every request) pass, and stops the evaluation of the
// section's http-request rules after it for them.
type haproxyAllow struct {
	cond *haproxyCond
	line int
}

// splitCounterDefs returns terms with each atom whose ACL is defined on
// several lines, one of which compares a counter, written out: HAProxy's
// ACL matches when any of its definitions does, so a term holding it
// becomes one term per definition (A || B), and a term holding it negated
// gets every definition negated (!(A || B) is !A && !B). ok is false when
// that makes more than maxOrTerms terms.
func splitCounterDefs(terms [][]haproxyAtom) ([][]haproxyAtom, bool) {
	var out [][]haproxyAtom
	for _, term := range terms {
		expanded := [][]haproxyAtom{nil}
		for _, at := range term {
			if len(at.defs) < 2 || !slices.ContainsFunc(at.defs, func(d haproxyACL) bool { _, ok := counterOf(d.fetch); return ok }) {
				for k := range expanded {
					expanded[k] = append(slices.Clip(expanded[k]), at)
				}
				continue
			}
			one := func(d haproxyACL) haproxyAtom {
				return haproxyAtom{neg: at.neg, name: at.name, defs: []haproxyACL{d}, text: fmt.Sprintf("%s (line %d: %s %s)", at.text, d.line, d.fetch, strings.Join(d.values, " "))}
			}
			if at.neg {
				for k := range expanded {
					for _, d := range at.defs {
						expanded[k] = append(slices.Clip(expanded[k]), one(d))
					}
				}
				continue
			}
			var next [][]haproxyAtom
			for _, prefix := range expanded {
				for _, d := range at.defs {
					next = append(next, append(slices.Clip(prefix), one(d)))
				}
			}
			expanded = next
		}
		if out = append(out, expanded...); len(out) > maxOrTerms {
			return nil, false
		}
	}
	return out, true
}

// haproxyAllowed leaves out of rule r, made of refusal d of proxy p, the
// requests an earlier http-request allow of p lets pass: HAProxy never
// runs d for them. An allow on client addresses (src) returns them, to be
// exempt addresses; one on what sluice's rules match (paths, methods,
// hosts, headers) becomes except: entries, a term each. It reports false,
// having said why, when d never runs (an allow of every request) or an
// allow's condition is neither.
func (t *Translation) haproxyAllowed(r *Rule, p *haproxyProxy, d haproxyDeny, tr haproxyTrack, where string) ([]string, bool) {
	var exempt []string
	for _, a := range p.allows {
		if a.line > d.line {
			continue
		}
		at := fmt.Sprintf("http-request allow (line %d)", a.line)
		if a.cond == nil {
			t.differs(where, "not imported: %s lets every request pass before it, so HAProxy never runs it.", at)
			return nil, false
		}
		terms, ok := a.cond.orTerms()
		if !ok {
			t.differs(where, "not imported: %s has a condition of more than %d terms, which the rule cannot leave out.", at, maxOrTerms)
			return nil, false
		}
		var texts []string
		for _, term := range terms {
			texts = append(texts, termText(term))
			if addrs, ok := srcTerm(term); ok {
				exempt = append(exempt, addrs...)
				continue
			}
			var q Rule
			if _, ok := t.haproxyMatch(&q, term, where+", "+at); !ok {
				return nil, false
			}
			if len(q.ExceptPaths) > 0 || len(q.Any) > 0 || len(q.Paths)+len(q.Methods)+len(q.Hosts)+len(q.Headers) == 0 {
				t.differs(where, "not imported: %s lets the requests of %s pass before it, which sluice can neither exempt (addresses) nor leave out of the rule (except: paths, methods, hosts, headers).", at, termText(term))
				return nil, false
			}
			r.Except = append(r.Except, RuleMatch{Paths: q.Paths, Methods: q.Methods, Hosts: q.Hosts, Headers: q.Headers})
			if !tr.before && tr.line < a.line {
				t.differs(where, "HAProxy still counts the requests of %s (track-sc%d, line %d, runs before %s) though it never refuses them; sluice leaves them out of the rule, so they do not count toward the client's limit here.", termText(term), max(tr.sc, 0), tr.line, at)
			}
		}
		t.same(where, "%s lets the requests of %s pass before this rule runs: they are left out of it, never counted or refused by it.", at, strings.Join(texts, " || "))
	}
	return exempt, true
}

// srcTerm returns the addresses of a term that is one src ACL (an
// address or prefix each value), and false for any other term.
func srcTerm(term []haproxyAtom) ([]string, bool) {
	if len(term) != 1 || term[0].neg {
		return nil, false
	}
	var out []string
	for _, d := range term[0].defs {
		if d.fetch != "src" || d.method == "file" || len(d.values) == 0 {
			return nil, false
		}
		for _, v := range d.values {
			pfx, err := parsePrefix(v)
			if err != nil {
				return nil, false
			}
			out = append(out, pfx)
		}
	}
	return out, true
}

// haproxyFallback sets what rule r counts the requests by that tracker k
// of trackers (of stick counter sc, conditional) leaves out: HAProxy
// tracks them by the next track-sc of the counter before refusal d. A
// first tracker of "<key> -m found" followed by track-sc src is a key
// with its address as fallback (fallback: ip); any other pair is
// reported, the requests the first leaves out then not counted.
func (t *Translation) haproxyFallback(r *Rule, trackers []haproxyTrack, k int, d haproxyDeny, where string) {
	first := trackers[k]
	next := slices.IndexFunc(trackers[k+1:], func(o haproxyTrack) bool { return o.sc == first.sc && (o.before || o.line < d.line) })
	if next < 0 {
		return
	}
	second := trackers[k+1+next]
	found := len(first.cond.terms) == 1 && !first.cond.unless && len(first.cond.terms[0]) == 1 && func(at haproxyAtom) bool {
		return !at.neg && len(at.defs) == 1 && at.defs[0].fetch == first.fetch && at.defs[0].method == "found"
	}(first.cond.terms[0][0])
	if found && r.Fallback == "skip" && second.cond == nil && second.fetch == "src" && first.table == second.table {
		r.Fallback = ""
		t.Differences = slices.DeleteFunc(t.Differences, func(x Difference) bool {
			return x.Same && x.Where == where+" key" && strings.Contains(x.Text, "(fallback: skip)")
		})
		t.same(where+" key", "a request without %s is tracked by the next track-sc%d (line %d), by its address: fallback: ip, as sluice counts a request without the key's value by its address (an IPv6 client by the configuration's IPv6 prefix, /64 unless set, where HAProxy keeps each address).", first.fetch, first.sc, second.line)
		return
	}
	t.differs(where+" key", "the requests track-sc%d's condition (line %d) leaves out are tracked by the next track-sc%d (line %d, %s) in HAProxy, and refused over the limit too; sluice's rule does not count them. Write a rule for them keyed as that tracker keys, or keep this limit in HAProxy.", first.sc, first.line, first.sc, second.line, second.fetch)
}
