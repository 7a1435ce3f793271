// The penalty section: the penalty box's three required fields.

package config

import (
	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// penalty decodes the penalty section, whose three fields are required: a
// section without one is refused rather than read as no penalty box.
func (d *decoder) penalty(n *yaml.Node, path string, pen *httplimit.Penalty, raw *rawConfig) {
	raw.at("Penalty", n, path)
	read := map[string]bool{}
	at := func(name, field string, f func(n *yaml.Node, p string)) field {
		return func(n *yaml.Node, p string) {
			read[name] = true
			raw.at("Penalty."+field, n, p)
			f(n, p)
		}
	}
	if !d.Mapping(n, path, map[string]field{
		"refusals": at("refusals", "Refusals", func(n *yaml.Node, p string) { pen.Refusals = d.Int(n, p, 1, sluice.MaxQuantity) }),
		"within":   at("within", "Within", func(n *yaml.Node, p string) { pen.Within = d.Duration(n, p) }),
		"for":      at("for", "For", func(n *yaml.Node, p string) { pen.For = d.Duration(n, p) }),
	}) {
		return
	}
	for _, name := range []string{"refusals", "within", "for"} {
		if !read[name] {
			d.Errorf(n, path+"."+name, "missing: a penalty box needs refusals, within and for (e.g. {refusals: 20, within: 1m, for: 10m})")
		}
	}
}
