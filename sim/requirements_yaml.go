package sim

import (
	"encoding"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/internal/yamlcheck"
)

// maxRequirements is the most bytes of YAML readYAML reads.
const maxRequirements = 1 << 20

// source is where requirements were read: the file's name, the node each
// field's value was read from (by field path, as fieldError names it), and
// the requirements as read, to tell a value still the file's from one a
// caller set since (a flag of sluice design).
type source struct {
	file  string
	nodes map[string]*yaml.Node
	read  reflect.Value
}

// readYAML decodes one YAML document of at most 1 MiB into a T, strictly:
// an unknown field, a key set twice or a value of the wrong type is an
// error at its file:line:col naming its field; an empty document is an
// error that asks for least, and a longer one an error.
func readYAML[T any](r io.Reader, name, least string) (T, *source, error) {
	var v T
	data, err := io.ReadAll(io.LimitReader(r, maxRequirements+1))
	if err != nil {
		return v, nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(data) > maxRequirements {
		return v, nil, fmt.Errorf("%s: longer than 1 MiB: requirements are a short YAML file", name)
	}
	root, err := yamlcheck.Parse(name, data)
	if errors.Is(err, io.EOF) {
		return v, nil, fmt.Errorf("%s: empty requirements (want at least %s)", name, least)
	}
	if err != nil {
		return v, nil, err
	}
	d := structDecoder{Decoder: yamlcheck.Decoder{File: name}, nodes: map[string]*yaml.Node{}}
	d.value(root, reflect.ValueOf(&v).Elem(), "")
	if err := d.Err(); err != nil {
		return v, nil, err
	}
	return v, &source{file: name, nodes: d.nodes, read: reflect.ValueOf(v)}, nil
}

// locate returns err located in the file when it refuses the value of a
// field read from it that current (the requirements refused) still holds:
// a *yamlcheck.Error naming file:line:col and the field. Any other error
// is returned as it is.
func (s *source) locate(current any, err error) error {
	var fe *fieldError
	if s == nil || !errors.As(err, &fe) {
		return err
	}
	n, ok := s.nodes[fe.path]
	if !ok {
		return err
	}
	was, ok1 := fieldAt(s.read, fe.path)
	is, ok2 := fieldAt(reflect.ValueOf(current), fe.path)
	if !ok1 || !ok2 || !reflect.DeepEqual(was.Interface(), is.Interface()) {
		return err // set since it was read
	}
	return &yamlcheck.Error{File: s.file, Line: n.Line, Col: n.Column, Path: fe.path, Msg: fe.err.Error()}
}

// fieldAt returns the value at path in v, a struct whose fields are named
// by their yaml tags, and whether there is one.
func fieldAt(v reflect.Value, path string) (reflect.Value, bool) {
	for path != "" {
		var seg string
		if path[0] == '[' {
			end := strings.IndexByte(path, ']')
			i, err := strconv.Atoi(path[1:max(end, 1)])
			if end < 0 || err != nil || v.Kind() != reflect.Slice || i < 0 || i >= v.Len() {
				return v, false
			}
			v, path = v.Index(i), path[end+1:]
			continue
		}
		path = strings.TrimPrefix(path, ".")
		if v.Kind() == reflect.Map {
			// A key may hold a dot (a plan "pro.v2"): the longest key
			// that the path starts with, whole, is the one.
			var key reflect.Value
			for _, k := range v.MapKeys() {
				ks := k.String()
				if rest, ok := strings.CutPrefix(path, ks); ok && (rest == "" || rest[0] == '.' || rest[0] == '[') &&
					(!key.IsValid() || len(ks) > len(key.String())) {
					key = k
				}
			}
			if !key.IsValid() {
				return v, false
			}
			v, path = v.MapIndex(key), path[len(key.String()):]
			continue
		}
		end := strings.IndexAny(path, ".[")
		if end < 0 {
			end = len(path)
		}
		seg, path = path[:end], path[end:]
		if v.Kind() != reflect.Struct {
			return v, false
		}
		f, ok := fieldByTag(v.Type(), seg)
		if !ok {
			return v, false
		}
		v = v.FieldByIndex(f.Index)
	}
	return v, true
}

// fieldByTag returns the exported field of t whose yaml tag names it.
func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); f.IsExported() && tag == name && tag != "-" {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// yamlFields lists the fields of t a file may set.
func yamlFields(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		if tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); f.IsExported() && tag != "" && tag != "-" {
			names = append(names, tag)
		}
	}
	return names
}

// structDecoder decodes a node tree into Go values by their yaml tags,
// recording each value's node by its field path.
type structDecoder struct {
	yamlcheck.Decoder
	nodes map[string]*yaml.Node
}

// value decodes n into v; a null leaves v as it is.
func (d *structDecoder) value(n *yaml.Node, v reflect.Value, path string) {
	if path != "" {
		d.nodes[path] = n
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return
	}
	if u, ok := v.Addr().Interface().(encoding.TextUnmarshaler); ok && v.Kind() != reflect.Struct {
		if d.Scalar(n, path, "a duration") {
			if err := u.UnmarshalText([]byte(n.Value)); err != nil {
				d.Errorf(n, path, "%v", err)
			}
		}
		return
	}
	switch v.Kind() {
	case reflect.String:
		if d.Scalar(n, path, "a string") {
			v.SetString(n.Value)
		}
	case reflect.Bool:
		v.SetBool(d.Bool(n, path))
	case reflect.Int, reflect.Int64:
		lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
		if v.Kind() == reflect.Int {
			lo, hi = math.MinInt, math.MaxInt
		}
		v.SetInt(d.Int(n, path, lo, hi))
	case reflect.Uint64:
		d.uint(n, v, path)
	case reflect.Float64:
		v.SetFloat(d.Float(n, path, -math.MaxFloat64, math.MaxFloat64))
	case reflect.Pointer:
		e := reflect.New(v.Type().Elem())
		d.value(n, e.Elem(), path)
		v.Set(e)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 0, len(n.Content))
		d.List(n, path, func(i int, e *yaml.Node, p string) {
			s = reflect.Append(s, reflect.Zero(v.Type().Elem()))
			d.value(e, s.Index(i), p)
		})
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		d.Entries(n, path, func(k, e *yaml.Node, p string) {
			val := reflect.New(v.Type().Elem()).Elem()
			d.value(e, val, p)
			m.SetMapIndex(reflect.ValueOf(k.Value), val)
		})
		v.Set(m)
	case reflect.Struct:
		d.Entries(n, path, func(k, e *yaml.Node, p string) {
			f, ok := fieldByTag(v.Type(), k.Value)
			if !ok {
				d.Errorf(k, p, "unknown field (known: %s)", strings.Join(yamlFields(v.Type()), ", "))
				return
			}
			d.value(e, v.FieldByIndex(f.Index), p)
		})
	default:
		d.Errorf(n, path, "cannot be read from YAML")
	}
}

// uint decodes an unsigned integer into v.
func (d *structDecoder) uint(n *yaml.Node, v reflect.Value, path string) {
	if !d.Scalar(n, path, "an integer") {
		return
	}
	u, err := strconv.ParseUint(strings.ReplaceAll(n.Value, "_", ""), 10, 64)
	if err != nil || n.Tag != "!!int" {
		d.Errorf(n, path, "%q is not an integer in [0, %d]", n.Value, uint64(math.MaxUint64))
		return
	}
	v.SetUint(u)
}
