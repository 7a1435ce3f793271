package config

import (
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/internal/yamlcheck"
)

// decoder is the shared YAML decoder plus the configuration's own fields
// (limits, plans, identity …), which are methods in the files of each topic.
type decoder struct {
	*yamlcheck.Decoder
	// leases maps a limit's ID as the store decides it (a rule's limit as
	// "<rule>.<id>") to the lease: of the limits that say one (see
	// leaseOf); the store section's Redis.Leases is this map.
	leases map[string]string
	// counts are the count: settings read, in order (see resolveCounts).
	counts []countAt
	// notifyNode is notify.limits, checked once the limits are known
	// (resolveNotify).
	notifyNode *yaml.Node
	// leaseAuto holds where each limit says lease: auto, in the
	// configuration and the keys file (whose decoder shares it), checked
	// once the store's type is known (leaseBoundsApply).
	leaseAuto *[]leaseAt
	// leaseBounds are the nodes of store.redis.lease_max_units and
	// lease_max_age, by field path, checked once every limit's lease: is
	// known (leaseBoundsApply).
	leaseBounds map[string]*yaml.Node
	// listens maps the field path of each listener address read (listen,
	// admin.listen, envoy.listen) to its node (see listenersDiffer).
	listens map[string]*yaml.Node
	// read is Config.Read: the files read, the keys file's decoder's
	// shared with the configuration's.
	read map[string][32]byte
	// unread is set when no file the configuration names is opened, nor
	// its content checked (see CheckWithoutFiles).
	unread bool
}

// field decodes one value of a mapping.
type field = yamlcheck.Field

// leaseAt is where a limit's lease: auto was read.
type leaseAt struct {
	file string
	node *yaml.Node
	path string
}

// emptyList refuses n, a list whose empty value httplimit reads as its
// default (def): written empty, it would say the opposite of what is done.
// instead says what to write.
func (d *decoder) emptyList(n *yaml.Node, path, def, instead string) {
	if n.Kind == yaml.SequenceNode && len(n.Content) == 0 {
		d.Errorf(n, path, "an empty list is read as the default, %s: %s", def, instead)
	}
}

// emptyEntry refuses e, an entry of a list, when it is nothing ("-"
// alone, as a template renders an empty value), which would otherwise be
// left out without a word; what names what to write instead.
func (d *decoder) emptyEntry(e *yaml.Node, path, what string) bool {
	if e.Kind != yaml.ScalarNode || e.Tag != "!!null" {
		return false
	}
	d.Errorf(e, path, "an empty entry: write %s, or remove the line", what)
	return true
}

// written reports whether n, a value read, was written out as a scalar,
// "" included, rather than left empty (nothing, null) or absent (nil).
func written(n *yaml.Node) bool {
	return n != nil && n.Kind == yaml.ScalarNode && n.Tag != "!!null"
}

// label reads the name of a caller, a key or an issuer, which logs, check's
// tables and the dashboard show: a string with no control character (a
// line break, a tab), which would split their lines or forge one.
func (d *decoder) label(n *yaml.Node, path string) string {
	s := d.Str(n, path)
	if strings.ContainsFunc(s, unicode.IsControl) {
		d.Errorf(n, path, "%q holds a control character: a name is written to logs and tables, whose lines it would split", s)
	}
	return s
}

// keyNode returns the node of key in the mapping n, or n without one.
func keyNode(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i]
		}
	}
	return n
}

// valueOf returns the value of key in the mapping n, nil without one.
func valueOf(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// hasMergeKey reports whether the mapping n has a merge key (<<), which
// the decoder refuses.
func hasMergeKey(n *yaml.Node) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Tag == "!!merge" {
			return true
		}
	}
	return false
}

func hasKey(n *yaml.Node, key string) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}
