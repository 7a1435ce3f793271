package migrate

import (
	"slices"
	"strings"
)

// kongPluginOwners moves each top-level plugin of f that names the entity
// it applies to (Kong's declarative configuration: service, route,
// consumer or consumer_group, by name or id) into that entity's plugins,
// where the translation reads it as Kong runs it. A rate-limiting plugin
// that names a consumer and a service, at the top level or nested in
// either, goes to f.consumerServices (kongConsumerServices). Another
// rate-limiting or authentication plugin that names two entities (a
// consumer's plugin on one route), which Kong runs on their requests
// together and no plan or rule of the import says, or one the file does
// not hold, is reported and not imported.
func (t *Translation) kongPluginOwners(f *kongFile) {
	var global []kongPlugin
	for _, p := range f.Plugins {
		refs := 0
		for _, r := range []kongServiceRef{p.Service, p.Route, p.Consumer, p.ConsumerGroup} {
			if r != "" {
				refs++
			}
		}
		if refs == 0 {
			global = append(global, p)
			continue
		}
		reported := p.Name == "rate-limiting" || p.Name == "rate-limiting-advanced" || slices.Contains(kongAuthPlugins, p.Name)
		where := "plugin " + p.Name
		if refs == 2 && p.Consumer != "" && p.Service != "" && isKongLimit(p) {
			f.consumerServices = append(f.consumerServices, kongConsumerService{consumer: p.Consumer, service: p.Service, plugin: p,
				where: "plugin " + p.Name + " of consumer " + string(p.Consumer) + " on service " + string(p.Service)})
			continue
		}
		if refs > 1 {
			if reported {
				t.differs(where, "it names its service, route, consumer or consumer group together (%s): Kong runs it only on their requests together, which neither a plan nor a rule of the import says: not imported.", kongRefs(p))
			}
			continue
		}
		if !t.kongOwn(f, p) && reported {
			t.differs(where, "it names %s, which the file does not hold: not imported (import the file with it).", kongRefs(p))
		}
	}
	f.Plugins = global
	for i := range f.Services {
		s := &f.Services[i]
		s.Plugins = t.kongNestedOwn(f, s.Plugins, "service "+s.Name, "service", kongServiceRef(s.Name))
		for j := range s.Routes {
			r := &s.Routes[j]
			r.Plugins = t.kongNestedOwn(f, r.Plugins, "route "+r.Name, "route", "")
		}
	}
	for j := range f.Routes {
		r := &f.Routes[j]
		r.Plugins = t.kongNestedOwn(f, r.Plugins, "route "+r.Name, "route", "")
	}
	for i := range f.Consumers {
		c := &f.Consumers[i]
		c.Plugins = t.kongNestedOwn(f, c.Plugins, "consumer "+c.Username, "consumer", kongServiceRef(c.Username))
	}
	for i := range f.ConsumerGroups {
		g := &f.ConsumerGroups[i]
		g.Plugins = t.kongNestedOwn(f, g.Plugins, "consumer group "+g.Name, "consumer group", "")
	}
}

// kongNestedOwn returns the plugins ps of an entity (named where, of kind,
// and ref by name) without those that also name an entity of another kind
// (a service's plugin of one consumer), which Kong runs only on the
// requests of both. A rate-limiting plugin of a service that names one
// consumer, or of a consumer that names one service, goes to
// f.consumerServices; another rate-limiting or authentication plugin is
// reported and not imported.
func (t *Translation) kongNestedOwn(f *kongFile, ps []kongPlugin, where, kind string, ref kongServiceRef) []kongPlugin {
	return slices.DeleteFunc(ps, func(p kongPlugin) bool {
		if p.Route == "" && p.ConsumerGroup == "" && isKongLimit(p) {
			switch {
			case kind == "service" && p.Consumer != "" && (p.Service == "" || p.Service == ref):
				f.consumerServices = append(f.consumerServices, kongConsumerService{consumer: p.Consumer, service: ref, plugin: p,
					where: "plugin " + p.Name + " of consumer " + string(p.Consumer) + " on service " + string(ref)})
				return true
			case kind == "consumer" && p.Service != "" && (p.Consumer == "" || p.Consumer == ref):
				f.consumerServices = append(f.consumerServices, kongConsumerService{consumer: ref, service: p.Service, plugin: p,
					where: "plugin " + p.Name + " of consumer " + string(ref) + " on service " + string(p.Service)})
				return true
			}
		}
		for _, r := range []struct {
			kind string
			ref  kongServiceRef
		}{{"service", p.Service}, {"route", p.Route}, {"consumer", p.Consumer}, {"consumer group", p.ConsumerGroup}} {
			if r.ref != "" && r.kind != kind {
				if p.Name == "rate-limiting" || p.Name == "rate-limiting-advanced" || slices.Contains(kongAuthPlugins, p.Name) {
					t.differs("plugin "+p.Name+" on "+where, "it also names %s: Kong runs it only on the requests of both, which neither a plan nor a rule of the import says: not imported.", kongRefs(p))
				}
				return true
			}
		}
		return false
	})
}

// kongOwn adds p to the plugins of the one entity of f it names, and
// reports whether f holds it.
func (t *Translation) kongOwn(f *kongFile, p kongPlugin) bool {
	is := func(name, id string, ref kongServiceRef) bool {
		return string(ref) == name && name != "" || string(ref) == id && id != ""
	}
	switch {
	case p.Service != "":
		if i := slices.IndexFunc(f.Services, func(s kongService) bool { return is(s.Name, s.ID, p.Service) }); i >= 0 {
			f.Services[i].Plugins = append(f.Services[i].Plugins, p)
			return true
		}
	case p.Route != "":
		for i := range f.Services {
			if j := slices.IndexFunc(f.Services[i].Routes, func(r kongRoute) bool { return is(r.Name, r.ID, p.Route) }); j >= 0 {
				f.Services[i].Routes[j].Plugins = append(f.Services[i].Routes[j].Plugins, p)
				return true
			}
		}
		if j := slices.IndexFunc(f.Routes, func(r kongRoute) bool { return is(r.Name, r.ID, p.Route) }); j >= 0 {
			f.Routes[j].Plugins = append(f.Routes[j].Plugins, p)
			return true
		}
	case p.Consumer != "":
		if i := slices.IndexFunc(f.Consumers, func(c kongConsumer) bool { return is(c.Username, c.ID, p.Consumer) }); i >= 0 {
			f.Consumers[i].Plugins = append(f.Consumers[i].Plugins, p)
			return true
		}
	case p.ConsumerGroup != "":
		if i := slices.IndexFunc(f.ConsumerGroups, func(g kongConsumerGroup) bool { return is(g.Name, g.ID, p.ConsumerGroup) }); i >= 0 {
			f.ConsumerGroups[i].Plugins = append(f.ConsumerGroups[i].Plugins, p)
			return true
		}
	}
	return false
}

// kongRefs writes the entities p names ("service orders, consumer alice").
func kongRefs(p kongPlugin) string {
	var out []string
	for _, r := range []struct {
		kind string
		ref  kongServiceRef
	}{{"service", p.Service}, {"route", p.Route}, {"consumer", p.Consumer}, {"consumer group", p.ConsumerGroup}} {
		if r.ref != "" {
			out = append(out, r.kind+" "+string(r.ref))
		}
	}
	return strings.Join(out, ", ")
}
