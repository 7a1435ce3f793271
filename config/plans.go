// The plans section: each plan's limits, costs and upgrade.

package config

import (
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

func (d *decoder) plans(n *yaml.Node, path string) []rawPlan {
	var out []rawPlan
	d.Entries(n, path, func(k, v *yaml.Node, p string) {
		rp := rawPlan{plan: &httplimit.Plan{Name: k.Value}, node: k, path: p}
		pl := rp.plan
		isMapping := d.Mapping(v, p, map[string]field{
			"limits": func(n *yaml.Node, p string) {
				before := len(d.Errs)
				pl.Limits, rp.limitsNode = d.limits(n, p), n
				rp.limitsRefused = len(d.Errs) > before
			},
			"costs": func(n *yaml.Node, p string) { pl.Costs, rp.costNodes = d.costs(n, p) },
			"upgrade": func(n *yaml.Node, path string) {
				pl.Upgrade = &httplimit.Upgrade{}
				rp.upgradeNode = n
				d.Mapping(n, path, map[string]field{
					"plan": func(n *yaml.Node, p string) {
						if pl.Upgrade.Plan = d.Str(n, p); pl.Upgrade.Plan == pl.Name && n.Kind == yaml.ScalarNode {
							d.Errorf(n, p, "%q is this plan: a client refused on it would be told to upgrade to the plan it has", pl.Name)
						}
					},
					"url": func(n *yaml.Node, p string) { pl.Upgrade.URL = d.Str(n, p) },
				})
			},
		})
		if !isMapping || hasMergeKey(v) {
			rp.limitsRefused = true // not all were read: the plan's own error says why
		}
		out = append(out, rp)
	})
	return out
}

// costs reads a plan's costs; the patterns are judged by httplimit.
func (d *decoder) costs(n *yaml.Node, path string) (map[string]int64, map[string]*yaml.Node) {
	out, nodes := map[string]int64{}, map[string]*yaml.Node{}
	d.Entries(n, path, func(k, v *yaml.Node, p string) {
		d.patternMethod(k, p, k.Value)
		d.patternHost(k, p, k.Value)
		out[k.Value], nodes[k.Value] = d.Int(v, p, 0, sluice.MaxQuantity), k
	})
	return out, nodes
}

// resolvePlans puts the plans read into c's policy, in file order, records
// where each of their fields was read, and returns them by name.
func (d *decoder) resolvePlans(c *Config, raw *rawConfig, root *yaml.Node) map[string]*httplimit.Plan {
	byName := map[string]*httplimit.Plan{}
	for i, rp := range raw.plans {
		c.Policy.Plans = append(c.Policy.Plans, rp.plan)
		if byName[rp.plan.Name] == nil {
			byName[rp.plan.Name] = rp.plan
		}
		field := fmt.Sprintf("Plans[%d]", i)
		raw.at(field, rp.node, rp.path)
		raw.at(field+".Name", rp.node, rp.path)
		raw.at(field+".Limits", rp.node, rp.path+".limits")
		raw.refused(field+".Limits", rp.limitsRefused)
		raw.eachAt(field+".Limits", rp.limitsNode, rp.path+".limits", rp.limitsRefused)
		for ep, n := range rp.costNodes {
			raw.at(fmt.Sprintf("%s.Costs[%q]", field, ep), n, rp.path+".costs."+ep)
		}
		if rp.upgradeNode != nil {
			raw.at(field+".Upgrade.Plan", rp.upgradeNode, rp.path+".upgrade.plan")
			raw.at(field+".Upgrade.URL", rp.upgradeNode, rp.path+".upgrade.url")
		}
	}
	if raw.plansNode != nil {
		raw.at("Plans", raw.plansNode, "plans")
	} else {
		raw.at("Plans", root, "plans")
	}
	return byName
}
