package migrate

import (
	"slices"
	"strings"
)

// egTargets returns the targets of policy p, each Gateway it targets
// replaced by the HTTPRoutes of the file attached to that Gateway (their
// parentRefs), as Envoy Gateway applies a Gateway's policy to each of its
// routes. A route that another BackendTrafficPolicy targets itself (owners
// maps a route to that policy's name) is left out: there the route's own
// policy is in force. A route and a Gateway are taken to be in one
// namespace unless both namespaces are given and differ. A Gateway none
// of whose routes is in the file stays a target, of every request (see
// egPolicy).
func (t *Translation) egTargets(p *egDoc, routes map[string]*egRoute, owners map[string]string) []egRef {
	var out []egRef
	add := func(ref egRef) {
		if !slices.Contains(out, ref) {
			out = append(out, ref)
		}
	}
	for _, ref := range p.targets() {
		if ref.Kind != "Gateway" {
			add(ref)
			continue
		}
		var attached, replaced []string
		for name, r := range routes {
			if !slices.ContainsFunc(r.gateways, func(g egRef) bool {
				return g.Name == ref.Name && (g.Namespace == "" || p.Metadata.Namespace == "" || g.Namespace == p.Metadata.Namespace)
			}) {
				continue
			}
			if owner := owners[name]; owner != "" && owner != p.Metadata.Name {
				replaced = append(replaced, name+" (policy "+owner+")")
				continue
			}
			attached = append(attached, name)
		}
		if len(attached)+len(replaced) == 0 {
			add(ref)
			continue
		}
		slices.Sort(attached)
		slices.Sort(replaced)
		where := "policy " + p.Metadata.Name
		if len(attached) > 0 {
			t.same(where, "it targets Gateway %s, whose HTTPRoutes in the file are %s: its limits apply to each of them, as Envoy Gateway applies a Gateway's policy to each of its routes.", ref.Name, strings.Join(attached, ", "))
		}
		if len(replaced) > 0 {
			t.same(where, "HTTPRoute %s of Gateway %s has a BackendTrafficPolicy of its own, which Envoy Gateway puts in force there in place of the Gateway's: the Gateway's limits leave it out.", strings.Join(replaced, ", "), ref.Name)
		}
		t.differs(where, "a route of Gateway %s that is not in the file is not limited by its limits here: import every route of the Gateway with the policy.", ref.Name)
		for _, name := range attached {
			add(egRef{Kind: "HTTPRoute", Name: name})
		}
	}
	return out
}

// targets returns a policy's targets: its targetRefs and its older
// targetRef, in a slice of its own.
func (d *egDoc) targets() []egRef {
	out := slices.Clone(d.Spec.TargetRefs)
	if d.Spec.TargetRef != nil {
		out = append(out, *d.Spec.TargetRef)
	}
	return out
}
