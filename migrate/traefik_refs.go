package migrate

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// traefikMiddlewareRef is a reference to a middleware: its name, with its
// provider after "@" when it gives one, and for a Kubernetes resource's
// the namespace it names, when not the referring resource's.
type traefikMiddlewareRef struct {
	Name      string `yaml:"name"`
	Namespace string `yaml:"namespace"`
}

// UnmarshalYAML reads a reference written as a name alone (the file
// provider's) or as a mapping of name and namespace (Kubernetes').
func (r *traefikMiddlewareRef) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		r.Name = n.Value
		return nil
	}
	type plain traefikMiddlewareRef
	return n.Decode((*plain)(r))
}

// traefikRef is a router's or chain's reference to a middleware as
// written (with its provider after "@" when it gives one) and, for a
// Kubernetes resource's (crd), the namespace it names the middleware in.
type traefikRef struct {
	name, namespace string
	crd             bool
}

// traefikRead is what the import reads of a Traefik file. A middleware is
// keyed by its name (the file provider's), or by namespace/name (a
// Kubernetes Middleware's; its name alone when it gives no namespace).
type traefikRead struct {
	all     []traefikMiddleware
	routers []traefikRouter
	chains  map[string][]traefikRef // a chain middleware's middlewares
	defined map[string]bool         // the key of every middleware, of any kind
	// crdNames are the keys of the Kubernetes Middlewares of each name, and
	// crdFull their keys by Traefik's name of them (<namespace>-<name>, as
	// in <namespace>-<name>@kubernetescrd).
	crdNames map[string][]string
	crdFull  map[string]string
}

// crdKey is the key of the Kubernetes Middleware name of namespace ns.
func crdKey(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// middleware reads the middleware key, called name, in the namespace ns
// for a Kubernetes resource (crd). Traefik refuses a middleware of two
// kinds.
func (x *traefikRead) middleware(key, name string, sp *traefikSpec, ns string, crd bool) error {
	x.defined[key] = true
	if crd {
		x.crdNames[name] = append(x.crdNames[name], key)
		x.crdFull[cmp.Or(ns, "default")+"-"+name] = key
	}
	kinds := 0
	for _, set := range []bool{sp.RateLimit != nil, sp.InFlightReq != nil, sp.Chain != nil} {
		if set {
			kinds++
		}
	}
	if kinds > 1 {
		return fmt.Errorf("middleware %s: more than one kind (rateLimit, inFlightReq, chain), which Traefik refuses: declare each in a middleware of its own", name)
	}
	switch {
	case sp.RateLimit != nil:
		x.all = append(x.all, traefikMiddleware{key: key, name: name, rl: sp.RateLimit})
	case sp.InFlightReq != nil:
		x.all = append(x.all, traefikMiddleware{key: key, name: name, inFlight: sp.InFlightReq})
	case sp.Chain != nil:
		x.chains[key] = x.refs(sp.Chain.Middlewares, ns, crd)
	}
	return nil
}

// refs returns the references ms of a resource of namespace ns (crd: a
// Kubernetes resource).
func (x *traefikRead) refs(ms []traefikMiddlewareRef, ns string, crd bool) []traefikRef {
	out := make([]traefikRef, len(ms))
	for i, m := range ms {
		out[i] = traefikRef{name: m.Name, namespace: cmp.Or(m.Namespace, ns), crd: crd}
	}
	return out
}

// doc reads d, one document of the file.
func (x *traefikRead) doc(t *Translation, d *traefikDoc) error {
	for _, name := range slices.Sorted(maps.Keys(d.HTTP.Middlewares)) {
		sp := d.HTTP.Middlewares[name]
		if err := x.middleware(name, name, &sp, "", false); err != nil {
			return err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(d.HTTP.Routers)) {
		r := d.HTTP.Routers[name]
		x.routers = append(x.routers, traefikRouter{name: name, rule: r.Rule, refs: x.refs(r.Middlewares, "", false),
			priority: traefikPriority(r.Priority, r.Rule), entryPoints: r.EntryPoints})
	}
	ns := d.Metadata.Namespace
	switch d.Kind {
	case "Ingress":
		if names := d.Metadata.Annotations[traefikIngressMiddlewares]; names != "" {
			t.differs("Ingress "+d.Metadata.Name, "its %s annotation names %s, which Traefik runs on its router only; the import reads routers from http.routers and IngressRoutes, not from Ingresses: write the Ingress as an IngressRoute to import where its limits apply.", traefikIngressMiddlewares, names)
		}
	case "Middleware":
		return x.middleware(crdKey(ns, d.Metadata.Name), d.Metadata.Name, &d.Spec.traefikSpec, ns, true)
	case "IngressRoute":
		for i, rt := range d.Spec.Routes {
			name := d.Metadata.Name
			if len(d.Spec.Routes) > 1 {
				name = fmt.Sprintf("%s-%d", name, i+1)
			}
			x.routers = append(x.routers, traefikRouter{name: name, rule: rt.Match, refs: x.refs(rt.Middlewares, ns, true),
				priority: traefikPriority(rt.Priority, rt.Match), entryPoints: d.Spec.EntryPoints})
		}
	}
	return nil
}

// resolve returns the key of the middleware r names, as Traefik finds it:
// name@file is the file provider's, <namespace>-<name>@kubernetescrd a
// Kubernetes Middleware, a name without a provider the referring
// resource's own provider's (for a Kubernetes resource, of the namespace
// the reference gives, else of its own; a Middleware written without a
// namespace is taken to be in it, and a resource without one names the
// only Middleware of that name). A middleware the file does not define
// keeps r's name, which no key is (see traefikRouter.unknown).
func (x *traefikRead) resolve(r traefikRef) string {
	name, provider, qualified := strings.Cut(r.name, "@")
	switch {
	case qualified && provider == "kubernetescrd":
		if k, ok := x.crdFull[name]; ok {
			return k
		}
		return r.name
	case qualified && provider != "file":
		return r.name // another provider's
	case qualified || !r.crd:
		return name
	}
	if k := crdKey(r.namespace, name); x.defined[k] {
		return k
	}
	keys := x.crdNames[name]
	switch {
	case slices.Contains(keys, name):
		return name // a Middleware without a namespace, applied in r's
	case r.namespace == "" && len(keys) == 1:
		return keys[0]
	}
	return crdKey(r.namespace, name)
}

// resolveAll returns the keys of the middlewares refs name.
func (x *traefikRead) resolveAll(refs []traefikRef) []string {
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = x.resolve(r)
	}
	return out
}

// resolveRouters sets each router's middlewares: the keys its references
// resolve to, chains expanded (inChains), and the names of those the file
// does not define (unknown).
func (x *traefikRead) resolveRouters() {
	chains := map[string][]string{}
	for k, refs := range x.chains {
		chains[k] = x.resolveAll(refs)
	}
	steps := maxChainSteps
	for i := range x.routers {
		rt := &x.routers[i]
		rt.middlewares = inChains(x.resolveAll(rt.refs), chains, 0, &steps)
		for _, m := range rt.middlewares {
			if !x.defined[m] && !slices.Contains(rt.unknown, m) {
				rt.unknown = append(rt.unknown, m)
			}
		}
	}
}

// names makes the report's name of each limiting middleware its key where
// another of another namespace has the same name.
func (x *traefikRead) names() {
	keys := map[string]map[string]bool{}
	for _, m := range x.all {
		if keys[m.name] == nil {
			keys[m.name] = map[string]bool{}
		}
		keys[m.name][m.key] = true
	}
	for i := range x.all {
		if len(keys[x.all[i].name]) > 1 {
			x.all[i].name = x.all[i].key
		}
	}
}

// maxChainDepth bounds the nesting of chain middlewares, and
// maxChainSteps the names a file's chains are expanded into, all routers
// together.
const (
	maxChainDepth = 16
	maxChainSteps = 100_000
)

// inChains returns the middlewares names run: each chain middleware's
// middlewares in its place, in order, as Traefik runs them. A chain nested
// deeper than maxChainDepth (or in itself), or met once *steps names have
// been read, is left as its name.
func inChains(names []string, chains map[string][]string, depth int, steps *int) []string {
	var out []string
	for _, n := range names {
		*steps--
		if c, ok := chains[n]; ok && depth < maxChainDepth && *steps > 0 {
			out = append(out, inChains(c, chains, depth+1, steps)...)
		} else {
			out = append(out, n)
		}
	}
	return out
}

// traefikUnknown reports each middleware router rt names that the file
// does not define: another provider's (ratelimit@docker) or another
// file's, which may limit, and whose limit the import cannot read.
func (t *Translation) traefikUnknown(rt *traefikRouter) {
	for _, m := range rt.unknown {
		t.differs("router "+rt.name+" middleware "+m, "the file does not define %s (another provider's or another file's middleware, which may be a rateLimit or an inFlightReq): the import cannot read it, so router %s's requests are imported as unlimited by it. Import it with the file that defines it (one file of both), or add its limit to router %s's rule by hand.", m, rt.name, rt.name)
	}
}
