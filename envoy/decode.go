package envoy

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/config"
)

// decoder walks a YAML node tree by hand, as package config does, so that
// every error names file:line:col and the field path, and unknown fields,
// duplicate keys and wrong types are all errors.
type decoder struct {
	file string
	errs []error
}

// maxErrors bounds how many problems one load reports.
const maxErrors = 50

func (d *decoder) errorf(n *yaml.Node, path, format string, args ...any) {
	if len(d.errs) >= maxErrors {
		return
	}
	e := &config.Error{File: d.file, Path: path, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Col = n.Line, n.Column
	}
	d.errs = append(d.errs, e)
}

type field func(n *yaml.Node, path string)

// mapping decodes the mapping n by its known fields. Unknown and duplicate
// keys are errors; a null node is an empty mapping. It reports whether n was
// a mapping.
func (d *decoder) mapping(n *yaml.Node, path string, fields map[string]field) bool {
	if n.Tag == "!!null" {
		return true
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "want a mapping, got %s", describe(n))
		return false
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		p := join(path, k.Value)
		if seen[k.Value] {
			d.errorf(k, p, "set twice")
			continue
		}
		seen[k.Value] = true
		f, ok := fields[k.Value]
		if !ok {
			names := make([]string, 0, len(fields))
			for name := range fields {
				names = append(names, name)
			}
			slices.Sort(names)
			d.errorf(k, p, "unknown field (known: %s)", strings.Join(names, ", "))
			continue
		}
		f(v, p)
	}
	return true
}

// list calls each for every element of the sequence n.
func (d *decoder) list(n *yaml.Node, path string, each func(n *yaml.Node, path string)) {
	if n.Tag == "!!null" {
		return
	}
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, path, "want a list, got %s", describe(n))
		return
	}
	for i, e := range n.Content {
		each(e, fmt.Sprintf("%s[%d]", path, i))
	}
}

func (d *decoder) str(n *yaml.Node, path string) string {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		d.errorf(n, path, "want a string, got %s", describe(n))
		return ""
	}
	return n.Value
}

func (d *decoder) int(n *yaml.Node, path string, lo, hi int64) int64 {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		d.errorf(n, path, "want an integer, got %s", describe(n))
		return 0
	}
	v, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 10, 64)
	if err != nil || n.Tag != "!!int" {
		d.errorf(n, path, "%q is not an integer", n.Value)
		return 0
	}
	if v < lo || v > hi {
		d.errorf(n, path, "%d is out of range [%d, %d]", v, lo, hi)
		return 0
	}
	return v
}

func (d *decoder) bool(n *yaml.Node, path string) bool {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!bool" {
		switch n.Value {
		case "true":
			return true
		case "false":
			return false
		}
	}
	d.errorf(n, path, "want true or false, got %s", describe(n))
	return false
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	if n.Tag == "!!null" {
		return "nothing"
	}
	return fmt.Sprintf("%q", n.Value)
}

// yamlError turns a yaml.v3 syntax error ("yaml: line N: msg") into a
// located *config.Error.
func yamlError(name string, err error) error {
	var line int
	if n, _ := fmt.Sscanf(err.Error(), "yaml: line %d:", &line); n == 1 {
		msg := strings.TrimPrefix(err.Error(), fmt.Sprintf("yaml: line %d: ", line))
		return &config.Error{File: name, Line: line, Col: 1, Msg: "YAML syntax: " + msg}
	}
	return &config.Error{File: name, Msg: "YAML syntax: " + strings.TrimPrefix(err.Error(), "yaml: ")}
}
