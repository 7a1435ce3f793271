package yamlcheck

import (
	"encoding/base64"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// The functions of this file read scalars as gopkg.in/yaml.v2 (YAML 1.1),
// envoyproxy/ratelimit's YAML library, reads them: the Envoy rules files
// that sluice's Envoy service loads and `sluice import` lists share them,
// so that the two cannot read a text differently.

// YAML11Mistagged reports whether the scalar n is written with a tag that
// gopkg.in/yaml.v2 resolves (!!null, !!bool, !!int, !!float, !!timestamp)
// and a text that is not of that type as yaml.v2 reads it, and the type
// the text is (e.g. "!!str"). yaml.v2 refuses such a scalar wherever it
// stands, as a key or a value ("cannot decode !!str `alice` as a
// !!null"); a text of an integer tagged !!float is a float there, and is
// not mistagged. A scalar written without a tag, or tagged !!str,
// !!binary or any other tag, is not mistagged.
func YAML11Mistagged(n *yaml.Node) (is string, mistagged bool) {
	if n == nil || n.Kind != yaml.ScalarNode || n.Style&yaml.TaggedStyle == 0 {
		return "", false
	}
	switch n.Tag {
	case "!!null", "!!bool", "!!int", "!!float", "!!timestamp":
	default:
		return "", false
	}
	is, fitsInt64 := yaml11Resolve(n.Tag, n.Value)
	switch {
	case is == n.Tag:
		return "", false
	case n.Tag == "!!float" && is == "!!int" && fitsInt64:
		return "", false
	}
	return is, true
}

// yaml11Floats matches the floats of YAML 1.1 as yaml.v2 reads them.
var yaml11Floats = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)

// yaml11Resolve returns the type that gopkg.in/yaml.v2 resolves the text
// s of a scalar tagged tag to, and for an integer whether it fits in an
// int64 (yaml.v2's resolve, for the tags YAML11Mistagged checks).
func yaml11Resolve(tag, s string) (is string, fitsInt64 bool) {
	switch s {
	case "", "~", "null", "Null", "NULL":
		return "!!null", false
	case "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON",
		"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF":
		return "!!bool", false
	case ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF":
		return "!!float", false
	case "<<":
		return "!!merge", false
	}
	switch c := s[0]; {
	case c == '.':
		if _, err := strconv.ParseFloat(s, 64); err == nil {
			return "!!float", false
		}
	case c == '+' || c == '-' || '0' <= c && c <= '9':
		if tag == "!!timestamp" && yaml11Timestamp(s) {
			return "!!timestamp", false
		}
		plain := strings.ReplaceAll(s, "_", "")
		if _, err := strconv.ParseInt(plain, 0, 64); err == nil {
			return "!!int", true
		}
		if _, err := strconv.ParseUint(plain, 0, 64); err == nil {
			return "!!int", false
		}
		if yaml11Floats.MatchString(plain) {
			if _, err := strconv.ParseFloat(plain, 64); err == nil {
				return "!!float", false
			}
		}
		if b, ok := strings.CutPrefix(plain, "0b"); ok {
			if _, err := strconv.ParseInt(b, 2, 64); err == nil {
				return "!!int", true
			}
			if _, err := strconv.ParseUint(b, 2, 64); err == nil {
				return "!!int", false
			}
		} else if b, ok := strings.CutPrefix(plain, "-0b"); ok {
			if _, err := strconv.ParseInt("-"+b, 2, 64); err == nil {
				return "!!int", true
			}
		}
	}
	return "!!str", false
}

// yaml11Timestamp reports whether s is a timestamp as yaml.v2 reads one.
func yaml11Timestamp(s string) bool {
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	if i != 4 || i == len(s) || s[i] != '-' {
		return false
	}
	for _, layout := range []string{"2006-1-2T15:4:5.999999999Z07:00", "2006-1-2t15:4:5.999999999Z07:00", "2006-1-2 15:4:5.999999999", "2006-1-2"} {
		if _, err := time.Parse(layout, s); err == nil {
			return true
		}
	}
	return false
}

// YAML11Text decodes a string as gopkg.in/yaml.v2 reads one into a string
// field: a scalar tagged !!binary is the bytes its base64 (encoding/base64's
// StdEncoding, line breaks in it ignored) encodes, and one whose text is
// not base64 is a problem, as it is there; a null is a problem too (see
// YAML11OptionalText). Each scalar is decoded once, however many places
// aliases put it in, and its places share the text.
func (d *Decoder) YAML11Text(n *yaml.Node, p *Path) string {
	if !d.ScalarAt(n, p, "a string") {
		return ""
	}
	if n.Tag != "!!binary" {
		return n.Value
	}
	b, done := d.binary[n]
	if !done {
		b = decodeBinary(n.Value)
		if d.binary == nil {
			d.binary = map[*yaml.Node]binaryText{}
		}
		d.binary[n] = b
	}
	if !b.ok {
		d.ErrorfAt(n, p, "tagged !!binary, but %s is not base64 (envoyproxy/ratelimit refuses it too)", Describe(n))
	}
	return b.text
}

// YAML11OptionalText is YAML11Text for a string that may be written empty
// (key: with nothing after it, ~ or null), which yaml.v2 reads as "";
// another text tagged !!null (!!null alice) is a problem (see NullAt).
func (d *Decoder) YAML11OptionalText(n *yaml.Node, p *Path) string {
	if d.NullAt(n, p) {
		return ""
	}
	return d.YAML11Text(n, p)
}

// binaryText is the text a scalar tagged !!binary encodes, and whether
// it is base64.
type binaryText struct {
	text string
	ok   bool
}

// decodeBinary returns the text that s, the text of a scalar tagged
// !!binary, encodes in base64; or s itself and not ok if it is not base64.
func decodeBinary(s string) binaryText {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return binaryText{s, false}
	}
	return binaryText{string(b), true}
}

// Shown returns the text s as a message or a report line shows it: s
// itself, or, if s is longer than 100 bytes, its start (cut at a rune's
// start) and its length, "start… (n bytes)", so that a long text repeated
// in many lines costs each a bounded length.
func Shown(s string) string {
	start, cut := cutLong(s)
	if !cut {
		return s
	}
	return start + "… (" + strconv.Itoa(len(s)) + " bytes)"
}
