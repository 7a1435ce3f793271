package migrate

import (
	"fmt"
	"slices"
	"strings"
)

// kongSharedNamespaces reports the namespaces that several enabled
// rate-limiting-advanced plugins of ps share. Kong keys such a plugin's
// counters by its namespace, window size and identifier value, not by the
// plugin: plugins of one namespace and identifier with a window size in
// common count a client's requests to all their routes in one counter.
// The import makes each plugin its own rule or limit, one count each, so
// the client gets each plugin's limit apart.
func (t *Translation) kongSharedNamespaces(ps []kongPlugin) {
	type counter struct {
		namespace, identifier string
		window                float64
	}
	plugins := map[counter]int{}
	for _, p := range ps {
		if p.Name != "rate-limiting-advanced" || p.Enabled != nil && !*p.Enabled || p.Config.Namespace == "" {
			continue
		}
		var seen []float64
		for _, w := range p.Config.WindowSize {
			if !slices.Contains(seen, w) {
				seen = append(seen, w)
				plugins[counter{p.Config.Namespace, or(p.Config.Identifier, "consumer"), w}]++
			}
		}
	}
	shared := map[string][]string{}
	for c, n := range plugins {
		if n > 1 {
			shared[c.namespace] = append(shared[c.namespace], fmt.Sprintf("%d plugins with identifier %s and window_size %g", n, c.identifier, c.window))
		}
	}
	names := make([]string, 0, len(shared))
	for ns := range shared {
		names = append(names, ns)
	}
	slices.Sort(names)
	for _, ns := range names {
		slices.Sort(shared[ns])
		t.differs("rate-limiting-advanced namespace "+ns, "%s share this namespace: Kong counts a client's requests to all their routes in one counter, and sluice counts each plugin apart, so a client gets each plugin's limit on its routes. Make them one sluice rule by hand (match: a list of their routes, the shared limits) to count them together.", strings.Join(shared[ns], ", "))
	}
}

// consumerPlugins returns the plugins of consumers and consumer groups.
func consumerPlugins(cs []kongConsumer, gs []kongConsumerGroup) []kongPlugin {
	var out []kongPlugin
	for _, c := range cs {
		out = append(out, c.Plugins...)
	}
	for _, g := range gs {
		out = append(out, g.Plugins...)
	}
	return out
}
