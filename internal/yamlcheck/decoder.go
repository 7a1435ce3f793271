// Package yamlcheck decodes YAML by walking its node tree by hand, so that
// every problem is an *Error naming the file, line, column and field path,
// and unknown fields, duplicate keys and wrong types are all errors. The
// configuration (package config) and the Envoy rules (package envoy) share it.
package yamlcheck

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// MaxErrors bounds how many problems one Decoder lists; those past it are
// counted, and Err says how many.
const MaxErrors = 50

// Decoder collects the problems of one file: the first MaxErrors in Errs,
// and a count of the rest.
type Decoder struct {
	File string
	Errs []error
	more int // problems past MaxErrors
	// binary holds the text of each scalar tagged !!binary that
	// YAML11Text has decoded.
	binary map[*yaml.Node]binaryText
}

// Field decodes the value of one key of a mapping; path names it.
type Field func(n *yaml.Node, path string)

// FieldAt is Field with the path as a *Path.
type FieldAt func(n *yaml.Node, p *Path)

// Errorf records a problem at n (nil: no single place). A problem past
// MaxErrors is only counted: its message is not made.
func (d *Decoder) Errorf(n *yaml.Node, path, format string, args ...any) {
	if len(d.Errs) >= MaxErrors {
		d.more++
		return
	}
	d.record(n, path, format, args...)
}

// ErrorfAt is Errorf with the path as a *Path, written out only if the
// problem is listed.
func (d *Decoder) ErrorfAt(n *yaml.Node, p *Path, format string, args ...any) {
	if len(d.Errs) >= MaxErrors {
		d.more++
		return
	}
	d.record(n, p.String(), format, args...)
}

// record lists a problem at n, at path.
func (d *Decoder) record(n *yaml.Node, path, format string, args ...any) {
	e := &Error{File: d.File, Path: path, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Col = n.Line, n.Column
	}
	d.Add(e)
}

// Add records problems already made, such as another file's.
func (d *Decoder) Add(errs ...error) {
	for _, err := range errs {
		if len(d.Errs) >= MaxErrors {
			d.more++
			continue
		}
		d.Errs = append(d.Errs, err)
	}
}

// Merge records the problems of o, those it only counted included.
func (d *Decoder) Merge(o *Decoder) {
	d.Add(o.Errs...)
	d.more += o.more
}

// Err returns the problems listed, joined, followed by one that says how
// many more were found, if any; or nil.
func (d *Decoder) Err() error {
	if d.more == 0 {
		return errors.Join(d.Errs...)
	}
	more := &Error{File: d.File, Msg: fmt.Sprintf("and %d more problems, not listed (only the first %d are)", d.more, MaxErrors)}
	return errors.Join(append(slices.Clip(d.Errs), error(more))...)
}

// IsNull reports whether n is null: nil, or a scalar tagged !!null (key:
// with nothing after it, ~, null, or a text tagged !!null). A mapping or a
// list tagged !!null is not null: YAML readers (gopkg.in/yaml.v2 and
// yaml.v3 alike) decode a collection by its kind, whatever its tag. A
// scalar tagged !!null whose text is not empty, ~, null, Null or NULL is
// null here but refused by those readers; NullAt records it as a problem.
func IsNull(n *yaml.Node) bool {
	return n == nil || n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// NullAt reports whether n is null (see IsNull), recording a problem if n
// is a text tagged !!null that is not a null text (empty, ~, null, Null,
// NULL), which YAML readers refuse ("cannot decode !!str `alice` as a
// !!null"): read as null, it would silently drop what was written.
func (d *Decoder) NullAt(n *yaml.Node, p *Path) bool {
	if !IsNull(n) {
		return false
	}
	if n != nil && !nullText(n.Value) {
		d.ErrorfAt(n, p, "%s, which is not null (YAML readers refuse it): remove the tag", Describe(n))
	}
	return true
}

// nullText reports whether s is a text that YAML resolves to null.
func nullText(s string) bool {
	switch s {
	case "", "~", "null", "Null", "NULL":
		return true
	}
	return false
}

// Mapping decodes the mapping n by its known fields. Unknown and duplicate
// keys are errors; a null (or nil) node is an empty mapping (see IsNull: a
// mapping tagged !!null is a mapping). It reports whether n was a mapping.
func (d *Decoder) Mapping(n *yaml.Node, path string, fields map[string]Field) bool {
	ok := true
	d.Entries(n, path, func(k, v *yaml.Node, p string) {
		if f, known := fields[k.Value]; known {
			f(v, p)
			return
		}
		d.Errorf(k, p, "unknown field (known: %s)", fieldNames(fields))
	}, &ok)
	return ok
}

// MappingAt is Mapping with the paths as *Path values: decoding a mapping
// nested d levels deep writes out no path unless a problem names it.
func (d *Decoder) MappingAt(n *yaml.Node, p *Path, fields map[string]FieldAt) bool {
	ok := true
	d.EntriesAt(n, p, func(k, v *yaml.Node, p *Path) {
		if f, known := fields[k.Value]; known {
			f(v, p)
			return
		}
		d.ErrorfAt(k, p, "unknown field (known: %s)", fieldNames(fields))
	}, &ok)
	return ok
}

// fieldNames returns the names of fields, sorted and joined by ", ".
func fieldNames[F any](fields map[string]F) string {
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// Entries calls each for every key of the mapping n, in file order;
// duplicate keys and merge keys (<<) are errors, as aliases are wherever a
// value is read: a file is read as written. isMapping, if given, is set to
// false when n is not a mapping.
func (d *Decoder) Entries(n *yaml.Node, path string, each func(k, v *yaml.Node, path string), isMapping ...*bool) {
	d.EntriesAt(n, PathOf(path), func(k, v *yaml.Node, p *Path) { each(k, v, p.String()) }, isMapping...)
}

// EntriesAt is Entries with the paths as *Path values.
func (d *Decoder) EntriesAt(n *yaml.Node, p *Path, each func(k, v *yaml.Node, p *Path), isMapping ...*bool) {
	if d.NullAt(n, p) {
		return
	}
	if n.Kind != yaml.MappingNode {
		d.ErrorfAt(n, p, "want a mapping, got %s", Describe(n))
		for _, m := range isMapping {
			*m = false
		}
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		kp := p.Key(k.Value)
		if k.Tag == "!!merge" {
			d.ErrorfAt(k, kp, "a merge key, which is not expanded here: write the keys out")
			continue
		}
		if k.Kind != yaml.ScalarNode {
			d.ErrorfAt(k, kp, "a key that is %s, not plain text: write the key out", Describe(k))
			continue
		}
		if seen[k.Value] {
			d.ErrorfAt(k, kp, "set twice")
			continue
		}
		seen[k.Value] = true
		each(k, v, kp)
	}
}

// List calls each for every element of the sequence n; a null (or nil)
// node is an empty list (see IsNull: a list tagged !!null is a list).
func (d *Decoder) List(n *yaml.Node, path string, each func(i int, n *yaml.Node, path string)) {
	d.ListAt(n, PathOf(path), func(i int, e *yaml.Node, p *Path) { each(i, e, p.String()) })
}

// ListAt is List with the paths as *Path values.
func (d *Decoder) ListAt(n *yaml.Node, p *Path, each func(i int, n *yaml.Node, p *Path)) {
	if d.NullAt(n, p) {
		return
	}
	if n.Kind != yaml.SequenceNode {
		d.ErrorfAt(n, p, "want a list, got %s", Describe(n))
		return
	}
	for i, e := range n.Content {
		each(i, e, p.Index(i))
	}
}

// Scalar reports whether n is a non-null scalar, recording a problem
// ("want <want>") if not.
func (d *Decoder) Scalar(n *yaml.Node, path, want string) bool {
	return d.ScalarAt(n, PathOf(path), want)
}

// ScalarAt is Scalar with the path as a *Path.
func (d *Decoder) ScalarAt(n *yaml.Node, p *Path, want string) bool {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		d.ErrorfAt(n, p, "want %s, got %s", want, Describe(n))
		return false
	}
	return true
}

// Str decodes a string.
func (d *Decoder) Str(n *yaml.Node, path string) string { return d.StrAt(n, PathOf(path)) }

// StrAt is Str with the path as a *Path.
func (d *Decoder) StrAt(n *yaml.Node, p *Path) string {
	if !d.ScalarAt(n, p, "a string") {
		return ""
	}
	return n.Value
}

// Strings decodes a list of strings, or a single string as a list of one.
func (d *Decoder) Strings(n *yaml.Node, path string) []string {
	if n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
		return []string{d.Str(n, path)}
	}
	var out []string
	d.List(n, path, func(_ int, e *yaml.Node, p string) { out = append(out, d.Str(e, p)) })
	return out
}

// Int decodes an integer in [lo, hi] (underscores allowed: 1_000_000). A
// leading zero (017, octal in YAML 1.1) is an error.
func (d *Decoder) Int(n *yaml.Node, path string, lo, hi int64) int64 {
	return d.IntAt(n, PathOf(path), lo, hi)
}

// IntAt is Int with the path as a *Path.
func (d *Decoder) IntAt(n *yaml.Node, path *Path, lo, hi int64) int64 {
	if !d.ScalarAt(n, path, "an integer") {
		return 0
	}
	digits := strings.ReplaceAll(n.Value, "_", "")
	if t := strings.TrimLeft(digits, "+-"); len(t) > 1 && t[0] == '0' && strings.Trim(t, "0123456789") == "" && n.Tag == "!!int" {
		plain := strings.TrimLeft(t, "0")
		if plain == "" {
			plain = "0"
		}
		d.ErrorfAt(n, path, "%q has a leading zero (octal in YAML 1.1): write %s%s", n.Value, digits[:len(digits)-len(t)], plain)
		return 0
	}
	v, err := strconv.ParseInt(digits, 10, 64)
	if errors.Is(err, strconv.ErrRange) && n.Tag != "!!str" {
		d.ErrorfAt(n, path, "%s is out of range [%d, %d]", n.Value, lo, hi)
		return 0
	}
	if err != nil || n.Tag != "!!int" {
		d.ErrorfAt(n, path, "%q is not an integer", n.Value)
		return 0
	}
	if v < lo || v > hi {
		d.ErrorfAt(n, path, "%d is out of range [%d, %d]", v, lo, hi)
		return 0
	}
	return v
}

// Float decodes a number in [lo, hi]; not-a-number is in no range.
func (d *Decoder) Float(n *yaml.Node, path string, lo, hi float64) float64 {
	if !d.Scalar(n, path, "a number") {
		return 0
	}
	v, err := strconv.ParseFloat(n.Value, 64)
	if err != nil || (n.Tag != "!!float" && n.Tag != "!!int") {
		d.Errorf(n, path, "%q is not a number", n.Value)
		return 0
	}
	if math.IsNaN(v) || v < lo || v > hi {
		d.Errorf(n, path, "%v is out of range [%v, %v]", v, lo, hi)
		return 0
	}
	return v
}

// Bool decodes a boolean of YAML 1.2, as yaml.v3 resolves one: true, True,
// TRUE, false, False or FALSE. YAML 1.1's yes, no, on and off are strings
// in YAML 1.2, and refused with a message that says so.
func (d *Decoder) Bool(n *yaml.Node, path string) bool {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!bool" {
		switch n.Value {
		case "true", "True", "TRUE":
			return true
		case "false", "False", "FALSE":
			return false
		}
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" && yaml11Only(n.Value) {
		d.Errorf(n, path, "want true or false, got %s (a string in YAML 1.2, not a boolean)", Describe(n))
		return false
	}
	d.Errorf(n, path, "want true or false, got %s", Describe(n))
	return false
}

// YAML11Bool returns the boolean that the scalar n is as gopkg.in/yaml.v2
// (YAML 1.1) reads one, and true; or false if n is none. A plain y, yes,
// true, on, n, no, false or off, in lower case, capitalized or upper case,
// is a boolean, and so is one tagged !!bool, quoted or not; any other
// quoted or tagged scalar is not.
func YAML11Bool(n *yaml.Node) (value, ok bool) {
	const quoted = yaml.DoubleQuotedStyle | yaml.SingleQuotedStyle | yaml.LiteralStyle | yaml.FoldedStyle | yaml.TaggedStyle
	if n == nil || n.Kind != yaml.ScalarNode || n.Style&quoted != 0 && n.Tag != "!!bool" {
		return false, false
	}
	switch n.Value {
	case "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON":
		return true, true
	case "n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF":
		return false, true
	}
	return false, false
}

// yaml11Only reports whether s is a boolean of YAML 1.1 only.
func yaml11Only(s string) bool {
	switch strings.ToLower(s) {
	case "y", "yes", "n", "no", "on", "off":
		return true
	}
	return false
}

// Duration decodes a positive duration (ParseDuration's syntax).
func (d *Decoder) Duration(n *yaml.Node, path string) time.Duration {
	if !d.Scalar(n, path, "a duration") {
		return 0
	}
	v, err := ParseDuration(n.Value)
	if errors.Is(err, ErrDurationRange) {
		d.Errorf(n, path, "%q is too long (at most 106751d)", n.Value)
		return 0
	}
	if err != nil {
		d.Errorf(n, path, "%q is not a duration (use e.g. 30s, 1m, 24h, 7d)", n.Value)
		return 0
	}
	if v <= 0 {
		d.Errorf(n, path, "%q must be positive", n.Value)
	}
	return v
}

// OneOf decodes a string that must be one of options.
func (d *Decoder) OneOf(n *yaml.Node, path string, options ...string) string {
	s := d.Str(n, path)
	if slices.Contains(options, s) {
		return s
	}
	if s != "" || n.Kind == yaml.ScalarNode {
		d.Errorf(n, path, "%q is not one of %s", s, strings.Join(options, ", "))
	}
	return ""
}

// ParseDuration is time.ParseDuration plus a day unit: "7d", "1d12h". A
// duration past what time.Duration holds (about 106751 days) is an error
// wrapping ErrDurationRange.
func ParseDuration(s string) (time.Duration, error) {
	if i := strings.IndexByte(s, 'd'); i > 0 {
		days, err := strconv.ParseInt(s[:i], 10, 64)
		if errors.Is(err, strconv.ErrRange) && s[0] != '-' {
			return 0, fmt.Errorf("duration %q: %w", s, ErrDurationRange)
		}
		if err != nil || days < 0 {
			return 0, fmt.Errorf("bad duration %q", s)
		}
		if days > maxDays {
			return 0, fmt.Errorf("duration %q: %w", s, ErrDurationRange)
		}
		rest := time.Duration(0)
		if r := s[i+1:]; r != "" && (r[0] == '-' || r[0] == '+') {
			return 0, fmt.Errorf("bad duration %q: a sign only before the whole", s)
		} else if r != "" {
			if rest, err = parseDuration(s[i+1:]); err != nil {
				return 0, fmt.Errorf("duration %q: %w", s, err)
			}
		}
		whole := time.Duration(days) * 24 * time.Hour
		if rest > math.MaxInt64-whole {
			return 0, fmt.Errorf("duration %q: %w", s, ErrDurationRange)
		}
		return whole + rest, nil
	}
	return parseDuration(s)
}

// parseDuration is time.ParseDuration, whose error for a well-formed
// duration too long to hold wraps ErrDurationRange.
func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil && wellFormed(s) {
		return 0, fmt.Errorf("duration %q: %w", s, ErrDurationRange)
	}
	return d, err
}

// wellFormed reports whether s has the syntax time.ParseDuration reads: an
// optional sign, then one or more decimal numbers, each with a unit.
func wellFormed(s string) bool {
	s = strings.TrimLeft(s, "+-")
	if s == "" {
		return false
	}
	for s != "" {
		n := len(s) - len(strings.TrimLeft(s, "0123456789."))
		if n == 0 || strings.Count(s[:n], ".") > 1 || s[:n] == "." {
			return false
		}
		s = s[n:]
		u := len(s) - len(strings.TrimLeft(s, "nsuµμmh"))
		if !slices.Contains([]string{"ns", "us", "µs", "μs", "ms", "s", "m", "h"}, s[:u]) {
			return false
		}
		s = s[u:]
	}
	return true
}

// maxDays is the most whole days a time.Duration holds.
const maxDays = math.MaxInt64 / int64(24*time.Hour)

// ErrDurationRange is the error of a duration too long for time.Duration.
var ErrDurationRange = errors.New("longer than 106751 days")

// Join appends key to a field path. A key longer than 100 bytes is
// written as its start and its length (kkk… (1048576 bytes)), as a message
// shows it, so that the paths under a long key cost what their depth
// does, not the key's length each.
func Join(path, key string) string {
	if path == "" {
		return shown(key)
	}
	return path + "." + shown(key)
}

// shown returns s as a message shows it: s itself, or its start (at most
// 100 bytes, cut at a character) and its length if s is longer than 100
// bytes.
func shown(s string) string {
	start, cut := cutLong(s)
	if !cut {
		return s
	}
	return fmt.Sprintf("%s… (%d bytes)", start, len(s))
}

// cutLong returns s, or its first 100 bytes (fewer, to end at a
// character) and true if it is longer.
func cutLong(s string) (string, bool) {
	const most = 100
	if len(s) <= most {
		return s, false
	}
	i := most
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i], true
}

// Describe names what n is, for "want X, got Y" messages; a text longer
// than 100 bytes is named by its start and its length, and a text tagged
// !!null that is not null (see NullAt) is named with its tag.
func Describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return fmt.Sprintf("an alias (*%s), which is not expanded here: write the value out", n.Value)
	}
	if n.Tag == "!!null" && nullText(n.Value) {
		return "nothing"
	}
	text := fmt.Sprintf("%q", n.Value)
	if start, cut := cutLong(n.Value); cut {
		text = fmt.Sprintf("%q… (%d bytes)", start, len(n.Value))
	}
	if n.Tag == "!!null" {
		return text + " tagged !!null"
	}
	return text
}

// Parse reads the one YAML document of data; a syntax error is a located
// *Error, an empty input io.EOF. A file holds one document: a second one
// ("---" followed by more than comments) is an error at its first line
// rather than text left unread.
func Parse(name string, data []byte) (*yaml.Node, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		return nil, SyntaxErrorOf(name, data, err)
	}
	for {
		var next yaml.Node
		err := dec.Decode(&next)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, SyntaxErrorOf(name, data, err)
		}
		if n := content(&next); !IsNull(n) || !nullText(n.Value) {
			return nil, &Error{File: name, Line: n.Line, Col: n.Column,
				Msg: "a second YAML document: the file is read as one document (remove the --- above it)"}
		}
	}
	return content(&root), nil
}

// content returns the node a document node holds, or n itself.
func content(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		return n.Content[0]
	}
	return n
}

// SyntaxErrorOf turns err, yaml.v3's error of data, into an *Error always
// located: an error yaml.v3 reports with no line is located by locate, one
// with a line at that line as atItsLine corrects it, and one on a line
// indented with a tab at the tab, since YAML indents with spaces only
// and yaml.v3 says only that a character "cannot start any token".
func SyntaxErrorOf(name string, data []byte, err error) error {
	e := yamlError(name, err)
	se, ok := e.(*Error)
	if !ok {
		return e
	}
	if se.Line < 1 {
		locate(se, data)
		return se
	}
	atItsLine(se, data, err.Error())
	lines := strings.SplitN(string(data), "\n", se.Line+1)
	if len(lines) < se.Line {
		return e
	}
	line := lines[se.Line-1]
	indent := line[:len(line)-len(strings.TrimLeft(line, " \t"))]
	if i := strings.IndexByte(indent, '\t'); i >= 0 {
		se.Col = i + 1
		se.Msg += " (a tab: indent YAML with spaces)"
	}
	return se
}

// yamlError turns a yaml.v3 error ("yaml: line N: msg") into an *Error,
// located at the line yaml.v3 names (column 1), if any.
func yamlError(name string, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		return &Error{File: name, Msg: fmt.Sprint(te.Errors)}
	}
	var line int
	if n, _ := fmt.Sscanf(err.Error(), "yaml: line %d:", &line); n == 1 {
		msg := strings.TrimPrefix(err.Error(), fmt.Sprintf("yaml: line %d: ", line))
		return &Error{File: name, Line: line, Col: 1, Msg: "YAML syntax: " + msg}
	}
	return &Error{File: name, Msg: "YAML syntax: " + strings.TrimPrefix(err.Error(), "yaml: ")}
}
