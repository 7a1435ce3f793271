// What YAML or a shell would expand and sluice does not: tags, variables, aliases as keys.

package config

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/internal/yamlcheck"
)

// unexpanded reports each value of n that asks for an expansion sluice does
// not make, which would otherwise be read as the literal text: a tag of
// its own (password: !env REDIS_PASSWORD), an environment variable
// (${REDIS_PASSWORD}, or a whole value of $REDIS_PASSWORD) or YAML's
// !!binary (the base64 of the bytes meant); none is expanded anywhere in
// the file. It reports too each key written as an alias (*name: …), which
// would be read as the anchor's name, not as the key it stands for.
//
// An error names the value's place and why it is refused, never the
// value, which may be a secret (a password, a token, a header's value)
// that sluice check prints and sluice serve logs on a reload it refuses:
// "$Xk9_aB2" is a password a generator writes as well as a variable.
func (d *decoder) unexpanded(n *yaml.Node, path string) {
	const instead = "write the value itself, or name a file that holds a secret (password_file, secret_file)"
	if strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") && n.Tag != "!" {
		d.Errorf(n, path, "the tag %s is not read here, and no variable is expanded: %s", n.Tag, instead)
		return
	}
	if n.Tag == "!!binary" {
		d.Errorf(n, path, "the tag !!binary is not decoded here: %s", instead)
		return
	}
	switch n.Kind {
	case yaml.ScalarNode:
		switch {
		case n.Tag != "!!str":
		case yamlcheck.EnvVariable(n.Value):
			d.Errorf(n, path, "environment variables (${NAME}) are not expanded: %s", instead)
		case yamlcheck.BareVariable(n.Value):
			d.Errorf(n, path, "environment variables are not expanded, and a whole value of $ and a name is taken for one: %s, "+
				"whose text is read as it is, a leading $ too", instead)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; k.Kind == yaml.AliasNode {
				d.Errorf(k, path, "a key written as an alias (*%s), which is not expanded here: write the key out", k.Value)
				continue
			}
			d.unexpanded(n.Content[i], path)
			d.unexpanded(n.Content[i+1], yamlcheck.Join(path, n.Content[i].Value))
		}
	case yaml.SequenceNode:
		for i, e := range n.Content {
			d.unexpanded(e, fmt.Sprintf("%s[%d]", path, i))
		}
	}
}
