package migrate

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"
)

// eachDocument decodes the YAML documents of src in turn, each into a new
// T, and passes it to use; an error names source and, for YAML, the line.
// A Kubernetes List (kind: List, as kubectl get -o yaml prints several
// resources) is its items, each decoded as a document of its own.
func eachDocument[T any](src, source string, use func(*T) error) error {
	dec := yaml.NewDecoder(strings.NewReader(src))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %s", source, strings.TrimPrefix(err.Error(), "yaml: "))
		}
		for _, n := range kubernetesItems(&doc) {
			var d T
			if err := n.Decode(&d); err != nil {
				return fmt.Errorf("%s: %s", source, strings.TrimPrefix(err.Error(), "yaml: "))
			}
			if err := use(&d); err != nil {
				return fmt.Errorf("%s: %w", source, err)
			}
		}
	}
}

// kubernetesItems returns the items of doc when it is a Kubernetes List
// (kind: List, or a kind ending in List, with a sequence of items), and
// doc alone otherwise.
func kubernetesItems(doc *yaml.Node) []*yaml.Node {
	m := doc
	if m.Kind == yaml.DocumentNode && len(m.Content) == 1 {
		m = m.Content[0]
	}
	if m.Kind != yaml.MappingNode {
		return []*yaml.Node{doc}
	}
	var kind string
	var items *yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		switch m.Content[i].Value {
		case "kind":
			kind = m.Content[i+1].Value
		case "items":
			items = m.Content[i+1]
		}
	}
	if !strings.HasSuffix(kind, "List") || items == nil || items.Kind != yaml.SequenceNode {
		return []*yaml.Node{doc}
	}
	return items.Content
}
