package envoy

import (
	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/internal/yamlcheck"
	"github.com/sluice-dev/sluice/internal/yamlexpand"
)

// Rules files are read as envoyproxy/ratelimit reads them (with
// gopkg.in/yaml.v2), anchors, aliases and merge keys included, by
// yamlexpand (its package comment states the rules), with rate_limit
// overlaid: envoyproxy/ratelimit decodes it into a pointer to a struct,
// which yaml.v2 allocates once and then decodes every later rate_limit
// mapping of the descriptor into, so a later rate_limit mapping changes
// only the fields it names and keeps the others of the earlier one; a
// later null clears it.

// rateLimitKey is the field that envoyproxy/ratelimit decodes into a
// pointer to a struct (YamlDescriptor.RateLimit), the only one of its
// format whose later value yaml.v2 merges into the earlier one. It is a
// field of descriptors only; elsewhere the decoder refuses it as unknown.
const rateLimitKey = "rate_limit"

// expandAliases returns doc with its aliases and merge keys expanded, or
// false after recording, as a located *Error, why it cannot be.
func (d *decoder) expandAliases(doc *yaml.Node) (*yaml.Node, bool) {
	x := yamlexpand.New(yamlexpand.Options{
		Overlaid: []string{rateLimitKey},
		Report:   func(n *yaml.Node, path *yamlcheck.Path, msg string) { d.ErrorfAt(n, path, "%s", msg) },
	})
	return x.Expand(doc)
}
