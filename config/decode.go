package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// decoder walks a YAML node tree by hand so that every error can name the
// file, line, column and field path, and so that unknown fields, duplicate
// keys and wrong types are all errors.
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
	e := &Error{File: d.file, Path: path, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Col = n.Line, n.Column
	}
	d.errs = append(d.errs, e)
}

// field decodes one value of a mapping.
type field func(n *yaml.Node, path string)

// mapping decodes the mapping n by its known fields. Unknown and duplicate
// keys are errors; a null node is an empty mapping.
func (d *decoder) mapping(n *yaml.Node, path string, fields map[string]field) {
	if n == nil || n.Tag == "!!null" {
		return
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "want a mapping, got %s", describe(n))
		return
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
			d.errorf(k, p, "unknown field (known: %s)", known(fields))
			continue
		}
		f(v, p)
	}
}

// entries calls each for every key of the mapping n, in file order.
func (d *decoder) entries(n *yaml.Node, path string, each func(k, v *yaml.Node, path string)) {
	if n == nil || n.Tag == "!!null" {
		return
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "want a mapping, got %s", describe(n))
		return
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
		each(k, v, p)
	}
}

// list calls each for every element of the sequence n.
func (d *decoder) list(n *yaml.Node, path string, each func(i int, n *yaml.Node, path string)) {
	if n == nil || n.Tag == "!!null" {
		return
	}
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, path, "want a list, got %s", describe(n))
		return
	}
	for i, e := range n.Content {
		each(i, e, fmt.Sprintf("%s[%d]", path, i))
	}
}

func (d *decoder) scalar(n *yaml.Node, path, want string) bool {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		d.errorf(n, path, "want %s, got %s", want, describe(n))
		return false
	}
	return true
}

func (d *decoder) str(n *yaml.Node, path string) string {
	if !d.scalar(n, path, "a string") {
		return ""
	}
	return n.Value
}

func (d *decoder) strings(n *yaml.Node, path string) []string {
	if n.Kind == yaml.ScalarNode && n.Tag != "!!null" { // a single value
		return []string{d.str(n, path)}
	}
	var out []string
	d.list(n, path, func(_ int, e *yaml.Node, p string) { out = append(out, d.str(e, p)) })
	return out
}

func (d *decoder) int(n *yaml.Node, path string, lo, hi int64) int64 {
	if !d.scalar(n, path, "an integer") {
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
	if !d.scalar(n, path, "true or false") {
		return false
	}
	switch n.Value {
	case "true":
		return true
	case "false":
		return false
	}
	d.errorf(n, path, "%q is not true or false", n.Value)
	return false
}

func (d *decoder) duration(n *yaml.Node, path string) time.Duration {
	if !d.scalar(n, path, "a duration") {
		return 0
	}
	v, err := ParseDuration(n.Value)
	if err != nil {
		d.errorf(n, path, "%q is not a duration (use e.g. 30s, 1m, 24h, 7d)", n.Value)
		return 0
	}
	if v <= 0 {
		d.errorf(n, path, "%q must be positive", n.Value)
	}
	return v
}

func (d *decoder) oneOf(n *yaml.Node, path string, options ...string) string {
	s := d.str(n, path)
	for _, o := range options {
		if s == o {
			return s
		}
	}
	if s != "" || n.Kind == yaml.ScalarNode {
		d.errorf(n, path, "%q is not one of %s", s, strings.Join(options, ", "))
	}
	return ""
}

// ParseDuration is time.ParseDuration plus a day unit: "7d", "1d12h".
func ParseDuration(s string) (time.Duration, error) {
	if i := strings.IndexByte(s, 'd'); i > 0 {
		days, err := strconv.ParseInt(s[:i], 10, 32)
		if err != nil || days < 0 {
			return 0, fmt.Errorf("bad duration %q", s)
		}
		rest := time.Duration(0)
		if s[i+1:] != "" {
			if rest, err = time.ParseDuration(s[i+1:]); err != nil {
				return 0, err
			}
		}
		return time.Duration(days)*24*time.Hour + rest, nil
	}
	return time.ParseDuration(s)
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

func known(fields map[string]field) string {
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sortStrings(names)
	return strings.Join(names, ", ")
}
