package yamlexpand

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"slices"
	"unicode/utf16"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// MarkNonSpecific marks the scalars of root, a node tree that yaml.v3
// decoded from src, that src writes with the non-specific tag `!`
// (`value: ! ~`, `{value: ! 1}`, `! key: user`, `&a ! x`, `!<!> x`), as
// gopkg.in/yaml.v2 reads them: such a scalar is a text, whatever it says,
// plain or quoted. yaml.v3 drops the tag and resolves the text as if it
// were plain, so `! ~` would be null and `! 1` an integer; MarkNonSpecific
// tags each !!str, with yaml.TaggedStyle, so that a reader takes it for
// the text (`! ~` is "~", never null) and refuses it where a number or a
// boolean is wanted, as yaml.v2 refuses it ("cannot unmarshal ! `1` into
// uint32"). A `!`-tagged << is a merge key to yaml.v2, plain or quoted,
// and is tagged !!merge instead. A `!` within a quoted text or a comment
// is no tag, and marks nothing.
//
// root must have been decoded from src by one yaml.v3 parser (a Decoder
// reading src from its start, or yaml.Unmarshal), whose node positions,
// lines and columns, name the first of a node's tag and anchor. Other
// scalars, and mappings and lists, are left as they are. src may be UTF-8
// or, with its byte order mark, UTF-16, as the parser reads it; the cost
// is linear in src.
func MarkNonSpecific(src []byte, root *yaml.Node) {
	if root == nil || bytes.IndexByte(src, '!') < 0 {
		return
	}
	src = utf8Text(src)
	var scalars []*yaml.Node
	stack := []*yaml.Node{root}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch {
		case n.Kind == yaml.AliasNode: // an alias's node is marked where its anchor is
		case n.Kind != yaml.ScalarNode:
			stack = append(stack, n.Content...)
		case n.Style&yaml.TaggedStyle == 0 && n.Line >= 1 && n.Column >= 1:
			scalars = append(scalars, n)
		}
	}
	// In the order of their positions, so that one walk along src finds
	// each: the offset of a column is counted from the last one found.
	slices.SortFunc(scalars, func(a, b *yaml.Node) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
	lines := lineStarts(src) // the offset of each line of src, as yaml.v3 counts them
	line, column, i := 0, 0, 0
	for _, n := range scalars {
		if n.Line > len(lines) {
			break
		}
		if n.Line != line {
			line, column, i = n.Line, 1, lines[n.Line-1]
		}
		for ; column < n.Column && i < len(src); column++ {
			_, size := utf8.DecodeRune(src[i:])
			i += size
		}
		if !nonSpecific(src, i) {
			continue
		}
		if n.Value == "<<" {
			n.Tag = "!!merge"
			continue
		}
		n.Tag = "!!str"
		n.Style |= yaml.TaggedStyle
	}
}

// utf8Text returns src as the YAML parser reads it, in UTF-8: without a
// UTF-8 byte order mark (the parser counts no column for it), and decoded
// from UTF-16 when it begins with that encoding's mark.
func utf8Text(src []byte) []byte {
	var order binary.ByteOrder
	switch {
	case bytes.HasPrefix(src, []byte{0xFF, 0xFE}):
		order = binary.LittleEndian
	case bytes.HasPrefix(src, []byte{0xFE, 0xFF}):
		order = binary.BigEndian
	default:
		return bytes.TrimPrefix(src, []byte("\uFEFF"))
	}
	units := make([]uint16, (len(src)-2)/2)
	for k := range units {
		units[k] = order.Uint16(src[2+2*k:])
	}
	out := make([]byte, 0, len(src))
	for _, r := range utf16.Decode(units) {
		out = utf8.AppendRune(out, r)
	}
	return out
}

// lineStarts returns the offset in src of each of its lines, broken where
// the YAML parser breaks them: at \r\n, \r, \n, NEL, LS and PS.
func lineStarts(src []byte) []int {
	starts := []int{0}
	for i := 0; i < len(src); {
		r, size := rune(src[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRune(src[i:])
		}
		switch {
		case r == '\r' && i+1 < len(src) && src[i+1] == '\n':
			size = 2
			fallthrough
		case r == '\r' || r == '\n' || r == '\u0085' || r == '\u2028' || r == '\u2029':
			starts = append(starts, i+size)
		}
		i += size
	}
	return starts
}

// nonSpecific reports whether the node properties written at offset i of
// src, its anchor and tag in either order, hold the tag `!` (or `!<!>`).
func nonSpecific(src []byte, i int) bool {
	for i < len(src) {
		switch src[i] {
		case '&':
			for i < len(src) && !blank(src[i]) && bytes.IndexByte([]byte(",[]{}"), src[i]) < 0 {
				i++
			}
		case '!':
			end := i + 1
			if bytes.HasPrefix(src[i:], []byte("!<!>")) {
				end = i + 4
			}
			if end == len(src) || blank(src[end]) || src[end] == ',' {
				return true
			}
			return false // another tag
		default:
			return false
		}
		// Properties are parted by blanks, line breaks and comments.
		for i < len(src) && (blank(src[i]) || src[i] == '#') {
			if src[i] == '#' {
				for i < len(src) && src[i] != '\n' && src[i] != '\r' {
					i++
				}
				continue
			}
			i++
		}
	}
	return false
}

// blank reports whether b is a space, a tab or a line break.
func blank(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }
