package migrate

import (
	"slices"
	"strings"
)

// egTargets returns the targets of policy p, each Gateway it targets
// replaced by the HTTPRoutes of the file attached to that Gateway (their
// parentRefs), as Envoy Gateway applies a Gateway's policy to each of its
// routes. A route that another BackendTrafficPolicy targets itself (owners
// maps a route's key to that policy's namespace/name) is left out: there
// the route's own policy is in force. An HTTPRoute target is resolved in
// the policy's namespace (egRoutes.resolve). A route and a Gateway are
// taken to be in one namespace unless both namespaces are given and
// differ. A Gateway none
// of whose routes is in the file stays a target, of every request (see
// egPolicy).
func (t *Translation) egTargets(p *egDoc, routes *egRoutes, owners map[string]string) []egRef {
	var out []egRef
	add := func(ref egRef) {
		if !slices.Contains(out, ref) {
			out = append(out, ref)
		}
	}
	for _, ref := range p.targets() {
		if ref.Kind == "HTTPRoute" {
			ref.key = routes.resolve(p.Metadata.Namespace, ref.Name)
		}
		if ref.Kind != "Gateway" {
			add(ref)
			continue
		}
		var attached, replaced []string
		for key, r := range routes.byKey {
			if !slices.ContainsFunc(r.gateways, func(g egRef) bool {
				return g.Name == ref.Name && (g.Namespace == "" || p.Metadata.Namespace == "" || g.Namespace == p.Metadata.Namespace)
			}) {
				continue
			}
			if owner := owners[key]; owner != "" && owner != crdKey(p.Metadata.Namespace, p.Metadata.Name) {
				replaced = append(replaced, key+" (policy "+owner+")")
				continue
			}
			attached = append(attached, key)
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
		for _, key := range attached {
			add(egRef{Kind: "HTTPRoute", Name: routes.byKey[key].name, key: key})
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

// egRoutes are a file's HTTPRoutes, keyed by namespace/name (crdKey: the
// name alone for a route written without a namespace), and the keys of
// each name.
type egRoutes struct {
	byKey  map[string]*egRoute
	byName map[string][]string
}

// add adds route r, called name in namespace ns; a later route of the same
// key replaces it.
func (rs *egRoutes) add(ns, name string, r *egRoute) {
	r.name = name
	key := crdKey(ns, name)
	if rs.byKey[key] == nil {
		rs.byName[name] = append(rs.byName[name], key)
	}
	rs.byKey[key] = r
}

// resolve returns the key of the HTTPRoute name that a policy of namespace
// ns targets: the route of its namespace (a policy's targetRefs name
// resources of its own namespace); a route written without a namespace is
// taken to be in it, and a policy without one names the only route of
// that name. A route the file does not hold keeps a key no route has.
func (rs *egRoutes) resolve(ns, name string) string {
	if k := crdKey(ns, name); rs.byKey[k] != nil {
		return k
	}
	keys := rs.byName[name]
	switch {
	case slices.Contains(keys, name):
		return name
	case ns == "" && len(keys) == 1:
		return keys[0]
	}
	return crdKey(ns, name)
}

// owners maps the key of each HTTPRoute that one of policies targets to
// that policy's namespace/name.
func (rs *egRoutes) owners(policies []*egDoc) map[string]string {
	out := map[string]string{}
	for _, d := range policies {
		for _, ref := range d.targets() {
			if ref.Kind == "HTTPRoute" {
				out[rs.resolve(d.Metadata.Namespace, ref.Name)] = crdKey(d.Metadata.Namespace, d.Metadata.Name)
			}
		}
	}
	return out
}
