package migrate

import (
	"slices"
	"strings"
)

// kongK8sCombos are the rate-limiting KongPlugins (and KongClusterPlugins)
// that a KongConsumer names beside an Ingress or a Service. The Kong
// Ingress Controller makes one plugin of each consumer and each route (or
// Service) that name it (its ForeignRelations.GetCombinations), and none
// of the consumer alone or the route alone: Kong runs it on that
// consumer's requests to those routes only.
type kongK8sCombos struct {
	// consumers are the usernames of the KongConsumers naming each
	// plugin, by its key ("namespace/name", "/name" for a cluster one).
	consumers map[string][]string
	// routes are the names of the Ingress routes that name each plugin, by
	// plugin key and Service ("namespace/name"); services, whether the
	// Service itself names it. order lists them as met.
	routes   map[[2]string][]string
	services map[[2]string]bool
	order    [][2]string
}

// newKongK8sCombos finds the plugins of objs that KongConsumers name:
// key returns the key of plugin name of namespace ns, as the controller
// resolves it, and whether the file holds it; limit, whether the plugin
// of a key is a rate-limiting one.
func newKongK8sCombos(objs []k8sObject, key func(ns, name string) (string, bool), limit func(key string) bool) *kongK8sCombos {
	c := &kongK8sCombos{consumers: map[string][]string{}, routes: map[[2]string][]string{}, services: map[[2]string]bool{}}
	for i := range objs {
		o := &objs[i]
		if o.Kind != "KongConsumer" || !strings.HasPrefix(o.APIVersion, kongAPIGroup) {
			continue
		}
		for _, n := range splitNames(o.Metadata.Annotations[kongPluginsAnnotation]) {
			if k, ok := key(o.namespace(), n); ok && limit(k) {
				c.consumers[k] = append(c.consumers[k], or(o.Username, o.Metadata.Name))
			}
		}
	}
	return c
}

// split parts names, the plugins an Ingress or a Service of namespace ns
// names, into those a KongConsumer names too (their keys) and the others.
func (c *kongK8sCombos) split(ns string, names []string, key func(ns, name string) (string, bool)) (rest, combined []string) {
	for _, n := range names {
		if k, ok := key(ns, n); ok && len(c.consumers[k]) > 0 {
			combined = append(combined, k)
			continue
		}
		rest = append(rest, n)
	}
	return rest, combined
}

// add notes that route (its name; "" for the Service itself) of Service
// svc names the plugins of keys.
func (c *kongK8sCombos) add(keys []string, svc, route string) {
	for _, k := range keys {
		at := [2]string{k, svc}
		if _, ok := c.routes[at]; !ok && !c.services[at] {
			c.order = append(c.order, at)
		}
		if route == "" {
			c.services[at] = true
		} else {
			c.routes[at] = append(c.routes[at], route)
		}
	}
}

// combined reports whether the plugin of key is a KongConsumer's beside a
// route or a Service, and so no plugin of the consumer alone.
func (c *kongK8sCombos) combined(key string) bool {
	return slices.ContainsFunc(c.order, func(at [2]string) bool { return at[0] == key })
}

// emit adds to f.consumerServices a plugin of each consumer and Service
// the combinations name (services: Service key → index in f.Services),
// which kongConsumerServices makes a rule of that consumer's requests to
// the Service's routes. Where the combination names some of the Service's
// routes only, it is reported and not imported; where it names several
// routes, whose plugins the controller makes one each (each a count), the
// one count across them is reported.
func (c *kongK8sCombos) emit(t *Translation, f *kongFile, plugins map[string]kongPlugin, services map[string]int) {
	for _, at := range c.order {
		key, svc := at[0], at[1]
		i, ok := services[svc]
		if !ok {
			continue // a Service no route goes to: Kong runs no plugin of it
		}
		s := &f.Services[i]
		where := "KongPlugin " + strings.TrimPrefix(key, "/") + " of KongConsumer " + strings.Join(c.consumers[key], ", KongConsumer ") + " on Service " + svc
		named := c.routes[at]
		if !c.services[at] {
			if slices.ContainsFunc(s.Routes, func(r kongRoute) bool { return !slices.Contains(named, r.Name) }) {
				t.differs(where, "the Kong Ingress Controller runs it on the consumers' requests to route %s only; other routes to Service %s, which the import cannot tell apart from those, run other plugins: not imported (name the plugin on the Service, or give the routes a Service of their own).", strings.Join(named, ", route "), svc)
				continue
			}
			if len(named) > 1 {
				t.differs(where, "the Kong Ingress Controller makes a plugin of each consumer and route (%s), each counting apart; the import counts the consumer's requests on them together, one count for Service %s.", strings.Join(named, ", "), svc)
			}
		}
		for _, u := range c.consumers[key] {
			f.consumerServices = append(f.consumerServices, kongConsumerService{consumer: kongServiceRef(u), service: kongServiceRef(s.Name), plugin: plugins[key],
				where: "KongPlugin " + strings.TrimPrefix(key, "/") + " of KongConsumer " + u + " on Service " + svc})
		}
	}
}
