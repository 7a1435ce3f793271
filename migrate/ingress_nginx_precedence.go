package migrate

// ingress-nginx's precedence between Ingresses: which of several Ingresses
// of one host and path applies (the oldest), which hosts read every path
// as a regular expression's prefix (use-regex, rewrite-target), and a
// canary's annotations, which ingress-nginx ignores.

import (
	"slices"
	"strings"
	"time"
)

// ingressName names ing as the report does: namespace/name, or its name
// without a namespace.
func ingressName(ing *k8sIngress) string {
	if ing.Metadata.Namespace != "" {
		return ing.Metadata.Namespace + "/" + ing.Metadata.Name
	}
	return ing.Metadata.Name
}

// ingressCanary reports whether ing is a canary Ingress, whose limits
// ingress-nginx does not read: it serves the main Ingress's location of
// the same host and path, with that Ingress's limits, to some requests.
func ingressCanary(ing *k8sIngress) bool {
	return strings.TrimSpace(ing.Metadata.Annotations[ingressAnnotation+"canary"]) == "true"
}

// ingressRegexHosts returns the hosts ("" for the default server) on
// which an Ingress sets use-regex or rewrite-target, each with that
// Ingress's name: ingress-nginx then writes every location of the host, of
// every Ingress, as a case-insensitive regular expression ~* "^<path>",
// a string prefix of the path (enforceRegexModifier), Exact ones too, and
// tries them longest path first.
func ingressRegexHosts(ingresses []k8sIngress) map[string]string {
	out := map[string]string{}
	for i := range ingresses {
		ing := &ingresses[i]
		a := ing.Metadata.Annotations
		if ingressCanary(ing) || a[ingressAnnotation+"use-regex"] != "true" && strings.TrimSpace(a[ingressAnnotation+"rewrite-target"]) == "" {
			continue
		}
		for _, r := range ing.Spec.Rules {
			if h := strings.ToLower(r.Host); out[h] == "" {
				out[h] = ingressName(ing)
			}
		}
	}
	return out
}

// ingressLimited reports whether ing has an annotation of a limit the
// import writes (limit-rps, limit-rpm, limit-connections).
func ingressLimited(ing *k8sIngress) bool {
	for _, k := range []string{"limit-rps", "limit-rpm", "limit-connections"} {
		if _, ok := ing.Metadata.Annotations[ingressAnnotation+k]; ok {
			return true
		}
	}
	return false
}

// ingressOldest keeps each host and path (and pathType) that several
// Ingresses serve in the places of the oldest of them alone (by
// metadata.creationTimestamp), as ingress-nginx serves it from the oldest
// Ingress's location with that Ingress's limits; a canary Ingress, which
// shares the main one's location, is not one of them. Without the
// timestamps of both, or with equal ones, both keep it, reported.
func (t *Translation) ingressOldest(ingresses []k8sIngress, places [][]ingressPlace) {
	created := make([]time.Time, len(ingresses))
	for i := range ingresses {
		created[i], _ = time.Parse(time.RFC3339, strings.TrimSpace(ingresses[i].Metadata.CreationTimestamp))
	}
	type location struct{ host, path, pathType string }
	var order []location
	servedBy := map[location][]int{} // the Ingresses of each host and path, in the file's order
	for i := range ingresses {
		if ingressCanary(&ingresses[i]) {
			continue
		}
		for _, p := range places[i] {
			l := location{p.host, p.path, p.pathType}
			if p.pathType == "" || slices.Contains(servedBy[l], i) {
				continue
			}
			if servedBy[l] == nil {
				order = append(order, l)
			}
			servedBy[l] = append(servedBy[l], i)
		}
	}
	for _, l := range order {
		in := servedBy[l]
		if len(in) < 2 {
			continue
		}
		oldest := in[0]
		for _, i := range in[1:] {
			if created[i].Before(created[oldest]) {
				oldest = i
			}
		}
		known := !slices.ContainsFunc(in, func(i int) bool {
			return created[i].IsZero() || i != oldest && created[i].Equal(created[oldest])
		})
		if !known {
			if slices.ContainsFunc(in, func(i int) bool { return ingressLimited(&ingresses[i]) }) {
				var names []string
				for _, i := range in[1:] {
					names = append(names, ingressName(&ingresses[i]))
				}
				t.differs("Ingress "+ingressName(&ingresses[in[0]]), "Ingress %s serves %s%s too: ingress-nginx serves a host and path from the oldest of its Ingresses alone, with that one's limits, and the file does not say which is older (metadata.creationTimestamp, or two the same): each rule counts it. Remove the path from the newer Ingresses' rules, or import the Ingresses as kubectl get -o yaml prints them.", strings.Join(names, ", Ingress "), l.host, l.path)
			}
			continue
		}
		for _, i := range in {
			if i != oldest {
				t.ingressDropPlace(ingresses, places, oldest, i, ingressPlace{host: l.host, path: l.path, pathType: l.pathType})
			}
		}
	}
}

// ingressDropPlace removes from places[newer] the host and path of p,
// which Ingress older serves: ingress-nginx applies that Ingress's limits
// there.
func (t *Translation) ingressDropPlace(ingresses []k8sIngress, places [][]ingressPlace, older, newer int, p ingressPlace) {
	places[newer] = slices.DeleteFunc(places[newer], func(q ingressPlace) bool {
		return q.host == p.host && q.path == p.path && q.pathType == p.pathType
	})
	if !ingressLimited(&ingresses[newer]) {
		return
	}
	o := &ingresses[older]
	t.same("Ingress "+ingressName(&ingresses[newer])+" path "+p.path, "Ingress %s, created earlier (%s), serves %s%s too: ingress-nginx serves a host and path from the oldest of its Ingresses, with that one's limits, so this Ingress's rule leaves it out.", ingressName(o), o.Metadata.CreationTimestamp, p.host, p.path)
}
