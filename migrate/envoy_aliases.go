package migrate

import (
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/internal/yamlcheck"
	"github.com/sluice-dev/sluice/internal/yamlexpand"
)

// envoyproxy/ratelimit reads its rules files with gopkg.in/yaml.v2, and
// sluice's Envoy service (package envoy) expands anchors, aliases and merge
// keys as yaml.v2 reads them, with yamlexpand, before it reads a
// descriptor. The import expands a rules file with yamlexpand too, with
// the service's options, so that the rules it lists, and the descriptors
// the shadow import writes shadow_mode in, are the service's.

// expandEnvoy returns the expansion of the rules document root and the
// Expander that made it (whose Written names each expanded node's place in
// root), or the first problem, located in source at its line.
func expandEnvoy(root *yaml.Node, source string) (*yaml.Node, *yamlexpand.Expander, error) {
	var err error
	x := yamlexpand.New(yamlexpand.Options{
		// A descriptor's later rate_limit mapping changes only the fields
		// it names of the earlier one, as yaml.v2 decodes both into one
		// struct.
		Overlaid: []string{"rate_limit"},
		Report: func(n *yaml.Node, p *yamlcheck.Path, msg string) {
			if err == nil {
				if path := p.String(); path != "" {
					msg = path + ": " + msg
				}
				err = fmt.Errorf("%s:%d: %s", source, n.Line, msg)
			}
		},
	})
	expanded, _ := x.Expand(root)
	return expanded, x, err
}

// envoyTrue reports whether n (nil: unset), an expanded scalar, is true as
// envoyproxy/ratelimit's yaml.v2 reads a boolean, and so sluice's service
// (yamlcheck.YAML11Bool).
func envoyTrue(n *yaml.Node) bool {
	v, ok := yamlcheck.YAML11Bool(n)
	return ok && v
}

// eachEnvoyDescriptor calls f for each descriptor of the expanded rules
// document root, down to the depth the import reads, once each however
// many places aliases put it in.
func eachEnvoyDescriptor(root *yaml.Node, f func(d *yaml.Node)) {
	seen := map[*yaml.Node]bool{}
	var walk func(list *yaml.Node, depth int)
	walk = func(list *yaml.Node, depth int) {
		if list == nil || list.Kind != yaml.SequenceNode || depth > maxEnvoyDepth || seen[list] {
			return
		}
		seen[list] = true
		for _, d := range list.Content {
			if d.Kind != yaml.MappingNode || seen[d] {
				continue
			}
			seen[d] = true
			f(d)
			walk(mapValue(d, "descriptors"), depth+1)
		}
	}
	walk(mapValue(root, "descriptors"), 0)
}

// hasEnvoyRule reports whether the expanded descriptor d has a rule: a
// rate_limit mapping (a null rate_limit is none).
func hasEnvoyRule(d *yaml.Node) bool {
	rl := mapValue(d, "rate_limit")
	return rl != nil && rl.Kind == yaml.MappingNode
}
