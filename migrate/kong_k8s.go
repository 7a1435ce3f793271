package migrate

import (
	"encoding/base64"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// kongAPIGroup is the API group of the Kong Ingress Controller's
// resources (KongPlugin, KongClusterPlugin, KongConsumer).
const kongAPIGroup = "configuration.konghq.com/"

// kongPluginsAnnotation names, on an Ingress, a Service or a KongConsumer,
// the plugins that apply to it.
const kongPluginsAnnotation = "konghq.com/plugins"

// kongMethodsAnnotation lists, on an Ingress, the methods (comma-separated)
// its routes match; without it they match every method.
const kongMethodsAnnotation = "konghq.com/methods"

// kongHostAliasesAnnotation lists, on an Ingress, further hosts
// (comma-separated) of each route the controller writes of a rule with a
// host; kongSNIsAnnotation the TLS server names its routes match
// (kongRouteSNIs); kongRegexPriorityAnnotation their regex_priority.
const (
	kongHostAliasesAnnotation   = "konghq.com/host-aliases"
	kongSNIsAnnotation          = "konghq.com/snis"
	kongRegexPriorityAnnotation = "konghq.com/regex-priority"
)

// kongUnreadAnnotations are an Ingress's annotations that shape its
// routes in ways the import does not read: reported.
var kongUnreadAnnotations = map[string]string{
	"konghq.com/protocols": "its routes take requests of those protocols only; the rules match every protocol",
	"konghq.com/override":  "it names a KongIngress, whose route settings (paths, hosts, methods, protocols, regex_priority…) the import does not read: the rules match the Ingress's own",
}

// kongHeadersAnnotation starts, on an Ingress, the annotations
// konghq.com/headers.<name> whose comma-separated values its routes match
// (a request carrying header <name> with one of them).
const kongHeadersAnnotation = "konghq.com/headers."

// k8sObject is the part of the Kubernetes resources the Kong Ingress
// Controller reads that the import needs.
type k8sObject struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name        string            `yaml:"name"`
		Namespace   string            `yaml:"namespace"`
		Annotations map[string]string `yaml:"annotations"`
		Labels      map[string]string `yaml:"labels"`
	} `yaml:"metadata"`
	// KongPlugin, KongClusterPlugin.
	Plugin   string     `yaml:"plugin"`
	Disabled bool       `yaml:"disabled"`
	Config   kongConfig `yaml:"config"`
	// KongConsumer.
	Username       string   `yaml:"username"`
	Credentials    []string `yaml:"credentials"`
	ConsumerGroups []string `yaml:"consumerGroups"`
	// Secret.
	Data       map[string]string `yaml:"data"`
	StringData map[string]string `yaml:"stringData"`
	// Ingress.
	Spec struct {
		DefaultBackend *k8sBackend `yaml:"defaultBackend"`
		// Backend is the default backend of networking.k8s.io/v1beta1
		// and extensions/v1beta1, which v1 calls defaultBackend.
		Backend *k8sBackend `yaml:"backend"`
		Rules   []struct {
			Host string `yaml:"host"`
			HTTP *struct {
				Paths []struct {
					Path     string     `yaml:"path"`
					PathType string     `yaml:"pathType"`
					Backend  k8sBackend `yaml:"backend"`
				} `yaml:"paths"`
			} `yaml:"http"`
		} `yaml:"rules"`
	} `yaml:"spec"`
}

// k8sBackend is an Ingress's backend: service.name (networking.k8s.io/v1),
// or serviceName (v1beta1 and extensions/v1beta1).
type k8sBackend struct {
	Service struct {
		Name string `yaml:"name"`
	} `yaml:"service"`
	ServiceName string `yaml:"serviceName"`
}

// service returns the name of b's Service, "" for none.
func (b *k8sBackend) service() string {
	if b == nil {
		return ""
	}
	return or(b.Service.Name, b.ServiceName)
}

// namespace is o's namespace, "default" when the file leaves it out.
func (o *k8sObject) namespace() string { return or(o.Metadata.Namespace, "default") }

// isKongK8s reports whether src holds the Kong Ingress Controller's
// resources rather than a decK file.
func isKongK8s(src string) bool { return strings.Contains(src, kongAPIGroup) }

// kongFromK8s builds the decK view of the Kong Ingress Controller's
// resources in src: a KongClusterPlugin labelled global: "true" is a
// global plugin; the plugins an Ingress's konghq.com/plugins annotation
// names (KongPlugins of its namespace, else KongClusterPlugins) apply to a
// route of each backend Service and host of it (its paths to that Service
// on that host; every host for a rule without one; the methods of its
// konghq.com/methods annotation, every method without it; the headers of
// its konghq.com/headers.<name> annotations; its spec.defaultBackend, or
// the spec.backend of v1beta1, a route of / on every host, the first
// Ingress's that has one; a backend names its Service by service.name, or
// serviceName in v1beta1), and those a Service's
// annotation names to that Service's routes; a KongConsumer's apply to it,
// with the key-auth keys of the Secrets it lists, when the file holds them,
// and a KongConsumerGroup's to the consumers that name it.
func (t *Translation) kongFromK8s(src, source string) (*kongFile, error) {
	var objs []k8sObject
	if err := eachDocument(src, source, func(o *k8sObject) error {
		objs = append(objs, *o)
		return nil
	}); err != nil {
		return nil, err
	}
	plugins := map[string]kongPlugin{} // "namespace/name" of KongPlugins, "/name" of KongClusterPlugins
	services := map[string][]string{}  // "namespace/name" of a Service → the plugins it names
	secrets := map[string]*k8sObject{} // "namespace/name"
	f := &kongFile{}
	for i := range objs {
		o := &objs[i]
		key := o.namespace() + "/" + o.Metadata.Name
		switch {
		case strings.HasPrefix(o.APIVersion, kongAPIGroup) && (o.Kind == "KongPlugin" || o.Kind == "KongClusterPlugin"):
			enabled := !o.Disabled
			p := kongPlugin{Name: o.Plugin, Enabled: &enabled, Config: o.Config}
			if o.Kind == "KongClusterPlugin" {
				key = "/" + o.Metadata.Name
				if o.Metadata.Labels["global"] == "true" {
					f.Plugins = append(f.Plugins, p)
				}
			}
			plugins[key] = p
		case o.Kind == "Service" && o.Metadata.Annotations[kongPluginsAnnotation] != "":
			services[key] = splitNames(o.Metadata.Annotations[kongPluginsAnnotation])
		case o.Kind == "Secret":
			secrets[key] = o
		}
	}
	// pluginKey returns the key of plugin name as seen from namespace ns:
	// a KongPlugin of ns, else a KongClusterPlugin.
	pluginKey := func(ns, name string) (string, bool) {
		for _, k := range []string{ns + "/" + name, "/" + name} {
			if _, ok := plugins[k]; ok {
				return k, true
			}
		}
		return "", false
	}
	combos := newKongK8sCombos(objs, pluginKey, func(k string) bool { return isKongLimit(plugins[k]) })
	resolve := func(ns string, names []string, where string) []kongPlugin {
		var out []kongPlugin
		for _, n := range names {
			p, ok := plugins[ns+"/"+n]
			if !ok {
				p, ok = plugins["/"+n]
			}
			if !ok {
				t.differs(where, "names plugin %s, which the file does not hold (a KongPlugin of namespace %s or a KongClusterPlugin): not imported.", n, ns)
				continue
			}
			out = append(out, p)
		}
		return out
	}
	serviceAt := map[string]int{} // "namespace/name" → index in f.Services
	// addRoute adds r to Service svc ("namespace/name") of namespace ns.
	addRoute := func(ns, svc string, r kongRoute) {
		at, ok := serviceAt[svc]
		if !ok {
			at = len(f.Services)
			serviceAt[svc] = at
			rest, combined := combos.split(ns, services[svc], pluginKey)
			combos.add(combined, svc, "")
			f.Services = append(f.Services, kongService{Name: strings.ReplaceAll(svc, "/", "."), Plugins: resolve(ns, rest, "Service "+svc)})
		}
		f.Services[at].Routes = append(f.Services[at].Routes, r)
	}
	// defaultFrom names the Ingress whose spec.defaultBackend is imported,
	// defaultNS its namespace, defaultSvc its Service and defaultRoute its
	// route.
	var defaultFrom, defaultNS, defaultSvc string
	var defaultRoute kongRoute
	var defaultCombined []string // the plugins its Ingress names that a KongConsumer names too
	for i := range objs {
		o := &objs[i]
		if o.Kind != "Ingress" {
			continue
		}
		ns, where := o.namespace(), "Ingress "+o.namespace()+"/"+o.Metadata.Name
		rest, combined := combos.split(ns, splitNames(o.Metadata.Annotations[kongPluginsAnnotation]), pluginKey)
		own := resolve(ns, rest, where)
		methods := t.kongIngressMethods(o.Metadata.Annotations[kongMethodsAnnotation], where)
		headers := kongIngressHeaders(o.Metadata.Annotations)
		aliases, snis, priority := t.kongIngressRouting(o.Metadata.Annotations, where)
		// The controller writes a route per backend Service and host of
		// the Ingress ("": none, every host), of that host's paths to the
		// Service.
		type routeKey struct{ svc, host string }
		byRoute, segmented := map[routeKey][]string{}, map[routeKey][]string{}
		var order []routeKey
		for _, r := range o.Spec.Rules {
			if r.HTTP == nil {
				continue
			}
			for _, p := range r.HTTP.Paths {
				path := or(p.Path, "/")
				switch p.PathType {
				case "Exact":
					path = "~" + path + "$" // as the controller writes it: a regular expression
				}
				k := routeKey{ns + "/" + p.Backend.service(), r.Host}
				if p.PathType == "Prefix" {
					segmented[k] = append(segmented[k], path)
				}
				if _, ok := byRoute[k]; !ok {
					order = append(order, k)
				}
				byRoute[k] = append(byRoute[k], path)
			}
		}
		for _, k := range order {
			route := kongRoute{Name: ns + "." + o.Metadata.Name + "." + strings.TrimPrefix(k.svc, ns+"/"), Paths: byRoute[k], Methods: methods, Headers: headers, Plugins: own, segmented: segmented[k],
				SNIs: snis, RegexPriority: priority}
			if k.host != "" {
				route.Name += "." + strings.ReplaceAll(k.host, "*", "_") // '*' as the controller names it
				route.Hosts = append([]string{k.host}, slices.DeleteFunc(slices.Clone(aliases), func(a string) bool { return a == k.host })...)
			}
			addRoute(ns, k.svc, route)
			combos.add(combined, k.svc, route.Name)
		}
		// The controller writes the default backend of one Ingress (the
		// oldest) as a route of path / on every host, under the Ingress's
		// plugins and annotations: the requests no other route takes.
		if b := or(o.Spec.DefaultBackend.service(), o.Spec.Backend.service()); b != "" {
			if defaultFrom != "" {
				t.differs(where, "its spec.defaultBackend is not imported: the Kong Ingress Controller routes the requests no route takes to one Ingress's default backend, the oldest Ingress's, and the import takes the first in the file (%s).", defaultFrom)
				continue
			}
			defaultFrom, defaultNS, defaultSvc, defaultCombined = "Ingress "+ns+"/"+o.Metadata.Name, ns, ns+"/"+b, combined
			defaultRoute = kongRoute{Name: ns + "." + o.Metadata.Name, Paths: []string{"/"}, Methods: methods, Headers: headers, Plugins: own, SNIs: snis, RegexPriority: priority}
		}
	}
	if defaultFrom != "" {
		addRoute(defaultNS, defaultSvc, defaultRoute)
		combos.add(defaultCombined, defaultSvc, defaultRoute.Name)
	}
	combos.emit(t, f, plugins, serviceAt)
	// groupName names a KongConsumerGroup: its name in the default
	// namespace, else "<namespace>.<name>".
	groupName := func(ns, name string) string {
		if ns == "default" {
			return name
		}
		return ns + "." + name
	}
	for i := range objs {
		o := &objs[i]
		if o.Kind != "KongConsumerGroup" || !strings.HasPrefix(o.APIVersion, kongAPIGroup) {
			continue
		}
		ns := o.namespace()
		f.ConsumerGroups = append(f.ConsumerGroups, kongConsumerGroup{Name: groupName(ns, o.Metadata.Name),
			Plugins: resolve(ns, splitNames(o.Metadata.Annotations[kongPluginsAnnotation]), "KongConsumerGroup "+ns+"/"+o.Metadata.Name)})
	}
	for i := range objs {
		o := &objs[i]
		if o.Kind != "KongConsumer" || !strings.HasPrefix(o.APIVersion, kongAPIGroup) {
			continue
		}
		ns := o.namespace()
		// A plugin it names beside a route or a Service is theirs together
		// (kongK8sCombos), none of the consumer alone.
		names := slices.DeleteFunc(splitNames(o.Metadata.Annotations[kongPluginsAnnotation]), func(n string) bool {
			k, ok := pluginKey(ns, n)
			return ok && combos.combined(k)
		})
		c := kongConsumer{Username: or(o.Username, o.Metadata.Name),
			Plugins: resolve(ns, names, "KongConsumer "+ns+"/"+o.Metadata.Name)}
		for _, g := range o.ConsumerGroups {
			c.Groups = append(c.Groups, kongName{Name: groupName(ns, g)})
		}
		for _, name := range o.Credentials {
			if key, ok := keyAuthSecret(secrets[ns+"/"+name]); ok {
				c.Credentials = append(c.Credentials, kongCredential{Key: key})
			}
		}
		f.Consumers = append(f.Consumers, c)
	}
	t.differs("Kubernetes resources", "read as the Kong Ingress Controller applies them: the plugins of an Ingress's konghq.com/plugins annotation on its paths, of a Service's on every route to it, KongClusterPlugins labelled global: \"true\" everywhere; a route per host of an Ingress and backend Service, matching that host (every host for a rule without one) and the methods of the Ingress's konghq.com/methods, as the controller writes them; its konghq.com/headers.<name> annotations are the routes' headers too, which the rules do not match (reported per route); an Ingress's spec.defaultBackend (spec.backend in v1beta1) is a route of / on every host, under the Ingress's plugins (one Ingress's: the first in the file). HTTPRoutes (the Gateway API) are not read.")
	return f, nil
}

// kongIngressMethods returns the methods of an Ingress's
// konghq.com/methods annotation (value), in upper case, as the controller
// writes them into the Ingress's routes; nil (every method) for none. As
// the controller does, it ignores the whole annotation when one of them is
// not a method (letters alone), reporting so at where.
func (t *Translation) kongIngressMethods(value, where string) []string {
	var out []string
	for _, m := range splitNames(value) {
		m = strings.ToUpper(m)
		if strings.Trim(m, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
			t.differs(where, "its %s annotation names %q, not a method: the Kong Ingress Controller ignores the annotation, so its routes, and the rules, match every method.", kongMethodsAnnotation, m)
			return nil
		}
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// kongIngressRouting returns what an Ingress's annotations add to its
// routes, as the controller writes them: the hosts of its
// konghq.com/host-aliases (added to each route of a rule with a host), the
// TLS server names of konghq.com/snis and the regex_priority of
// konghq.com/regex-priority (0 when not a whole number, reported at
// where). The annotations that shape its routes otherwise
// (kongUnreadAnnotations) are reported.
func (t *Translation) kongIngressRouting(annotations map[string]string, where string) (aliases, snis []string, priority int) {
	aliases, snis = splitNames(annotations[kongHostAliasesAnnotation]), splitNames(annotations[kongSNIsAnnotation])
	if aliases != nil {
		t.same(where, "its %s annotation (%s): the controller adds those hosts to each route of a rule with a host, and so do the rules.", kongHostAliasesAnnotation, strings.Join(aliases, ", "))
	}
	if v, ok := annotations[kongRegexPriorityAnnotation]; ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			t.differs(where, "its %s annotation %q is not a whole number: read as 0.", kongRegexPriorityAnnotation, v)
		}
		priority = n
	}
	for _, name := range slices.Sorted(maps.Keys(kongUnreadAnnotations)) {
		if v, ok := annotations[name]; ok {
			t.differs(where, "its %s annotation (%s) is not read: %s.", name, v, kongUnreadAnnotations[name])
		}
	}
	return aliases, snis, priority
}

// kongIngressHeaders returns the headers of an Ingress's
// konghq.com/headers.<name> annotations, each name's values as the
// controller writes them into the Ingress's routes; nil for none. An
// annotation without a name or a value is left out.
func kongIngressHeaders(annotations map[string]string) map[string]any {
	var out map[string]any
	for k, v := range annotations {
		name, ok := strings.CutPrefix(k, kongHeadersAnnotation)
		if !ok || name == "" || splitNames(v) == nil {
			continue
		}
		if out == nil {
			out = map[string]any{}
		}
		out[name] = splitNames(v)
	}
	return out
}

// keyAuthSecret returns the key of a key-auth credential Secret (its
// kongCredType, or the konghq.com/credential label, says key-auth), from
// stringData or base64 data.
func keyAuthSecret(s *k8sObject) (string, bool) {
	if s == nil {
		return "", false
	}
	get := func(name string) string {
		if v, ok := s.StringData[name]; ok {
			return v
		}
		b, err := base64.StdEncoding.DecodeString(s.Data[name])
		if err != nil {
			return ""
		}
		return string(b)
	}
	if get("kongCredType") != "key-auth" && s.Metadata.Labels["konghq.com/credential"] != "key-auth" {
		return "", false
	}
	key := get("key")
	return key, key != ""
}

// splitNames splits a comma-separated annotation value.
func splitNames(s string) []string {
	var out []string
	for _, n := range strings.Split(s, ",") {
		if n = strings.TrimSpace(n); n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}
