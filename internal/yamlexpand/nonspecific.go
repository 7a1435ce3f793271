package yamlexpand

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"slices"
	"sort"
	"unicode/utf16"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// A Source is a YAML file prepared for MarkNonSpecific, once for all the
// documents a yaml.v3 Decoder reads from it: its text as the parser reads
// it, in UTF-8, and where each of its lines starts. NewSource costs one
// scan of the file; the text and its lines are found, in time linear in
// the file, when a method first needs them (MarkNonSpecific only if the
// file holds a `!`). A Source is not safe for concurrent use.
type Source struct {
	src   []byte
	bang  bool // src holds a `!`, in any encoding
	ready bool
	bom   int  // the bytes of src's byte order mark
	utf16 bool // src is UTF-16
	text  []byte
	lines []int // the offset in text of each line
}

// NewSource returns the file src, UTF-8 or, with its byte order mark,
// UTF-16, as the parser reads it. src must not change while the Source is
// in use.
func NewSource(src []byte) *Source {
	return &Source{src: src, bang: bytes.IndexByte(src, '!') >= 0}
}

func (s *Source) prepare() {
	if s.ready {
		return
	}
	s.text, s.bom, s.utf16 = utf8Text(s.src)
	s.lines = lineStarts(s.text)
	s.ready = true
}

// Lines returns the number of lines of the file, as the parser counts
// them: one more than its line breaks (\r\n, \r, \n, NEL, LS and PS).
func (s *Source) Lines() int {
	s.prepare()
	return len(s.lines)
}

// Line returns line n of the file, 1 to Lines() (counted as yaml.v3 counts a
// node's Line) in UTF-8, without its line break.
func (s *Source) Line(n int) []byte {
	s.prepare()
	end := len(s.text)
	if n < len(s.lines) {
		end = s.lines[n]
	}
	line := s.text[s.lines[n-1]:end]
	for _, br := range []string{"\r\n", "\n", "\r", "\u0085", "\u2028", "\u2029"} {
		if bytes.HasSuffix(line, []byte(br)) {
			return line[:len(line)-len(br)]
		}
	}
	return line
}

// Offset returns the offset in the file's bytes, as given to NewSource, at
// which line n starts (counted from 1): the file's size for n = Lines()+1.
// Its cost is linear in the file.
func (s *Source) Offset(n int) int {
	s.prepare()
	if n > len(s.lines) {
		return len(s.src)
	}
	at := s.lines[n-1]
	if !s.utf16 {
		return s.bom + at
	}
	units := 0
	for _, r := range string(s.text[:at]) {
		units += utf16.RuneLen(r)
	}
	return min(s.bom+2*units, len(s.src))
}

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
// and is tagged !!merge instead, in the plain style, so that yaml.v3
// writes it back as a merge key. A `!` within a quoted text or a comment
// is no tag, and marks nothing; nor does the `!` of the node that follows
// an empty value (`a: &x` or `? a` without a value, then `! b: 1`), which
// stays null.
//
// root must have been decoded by one yaml.v3 parser (a Decoder reading
// src from its start, or yaml.Unmarshal), whose node positions, lines and
// columns, name the first of a node's tag and anchor. Other scalars, and
// mappings and lists, are left as they are. The cost is that of preparing
// src (once per file, on the first call with a `!` in it), then linear in
// the lines root is written on; a file without `!` costs nothing more.
func MarkNonSpecific(src *Source, root *yaml.Node) {
	if root == nil || !src.bang {
		return
	}
	src.prepare()
	text, lines := src.text, src.lines
	// Every node, in document order, then in the order of their positions,
	// so that one walk along text finds each: the offset of a column is
	// counted from the last one found.
	type placed struct {
		n         *yaml.Node
		order, at int
	}
	var nodes []placed
	stack := []*yaml.Node{root}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n.Kind != yaml.DocumentNode && n.Line >= 1 && n.Column >= 1 {
			nodes = append(nodes, placed{n: n, order: len(nodes)})
		}
		if n.Kind != yaml.AliasNode { // an alias's node is marked where its anchor is
			for k := len(n.Content) - 1; k >= 0; k-- {
				stack = append(stack, n.Content[k])
			}
		}
	}
	slices.SortFunc(nodes, func(a, b placed) int {
		return cmp.Or(cmp.Compare(a.n.Line, b.n.Line), cmp.Compare(a.n.Column, b.n.Column), cmp.Compare(a.order, b.order))
	})
	line, column, i := 0, 0, 0
	for k := range nodes {
		n := nodes[k].n
		if n.Line > len(lines) {
			nodes = nodes[:k]
			break
		}
		if n.Line != line {
			line, column, i = n.Line, 1, lines[n.Line-1]
		}
		for ; column < n.Column && i < len(text); column++ {
			if text[i] < utf8.RuneSelf {
				i++
			} else {
				_, size := utf8.DecodeRune(text[i:])
				i += size
			}
		}
		nodes[k].at = i
	}
	for k, p := range nodes {
		n := p.n
		if n.Kind != yaml.ScalarNode || n.Style&yaml.TaggedStyle != 0 {
			continue
		}
		at := nonSpecific(text, p.at)
		if at < 0 {
			continue
		}
		// A node that follows n and starts at the `!` holds it: n is an
		// empty value, placed by the parser at the next node or written
		// with its anchor alone on its line.
		rest := nodes[k+1:]
		j := sort.Search(len(rest), func(j int) bool { return rest[j].at >= at })
		for ; j < len(rest) && rest[j].at == at && rest[j].order < p.order; j++ {
		}
		if j < len(rest) && rest[j].at == at {
			continue
		}
		if n.Value == "<<" {
			n.Tag = "!!merge"
			n.Style &^= yaml.DoubleQuotedStyle | yaml.SingleQuotedStyle | yaml.LiteralStyle | yaml.FoldedStyle
			continue
		}
		n.Tag = "!!str"
		n.Style |= yaml.TaggedStyle
	}
}

// utf8Text returns src as the YAML parser reads it, in UTF-8: without a
// UTF-8 byte order mark (the parser counts no column for it), and decoded
// from UTF-16 when it begins with that encoding's mark; bom is the length
// of the mark.
func utf8Text(src []byte) (text []byte, bom int, isUTF16 bool) {
	var order binary.ByteOrder
	switch {
	case bytes.HasPrefix(src, []byte{0xFF, 0xFE}):
		order = binary.LittleEndian
	case bytes.HasPrefix(src, []byte{0xFE, 0xFF}):
		order = binary.BigEndian
	case bytes.HasPrefix(src, []byte("\uFEFF")):
		return src[3:], 3, false
	default:
		return src, 0, false
	}
	units := make([]uint16, (len(src)-2)/2)
	for k := range units {
		units[k] = order.Uint16(src[2+2*k:])
	}
	out := make([]byte, 0, len(src))
	for _, r := range utf16.Decode(units) {
		out = utf8.AppendRune(out, r)
	}
	return out, 2, true
}

// lineStarts returns the offset in text of each of its lines, broken where
// the YAML parser breaks them: at \r\n, \r, \n, NEL, LS and PS.
func lineStarts(text []byte) []int {
	starts := []int{0}
	for i := 0; i < len(text); {
		size := lineBreak(text, i)
		if size > 0 {
			starts = append(starts, i+size)
		} else if size = 1; text[i] >= utf8.RuneSelf {
			_, size = utf8.DecodeRune(text[i:])
		}
		i += size
	}
	return starts
}

// nonSpecific returns the offset in text of the tag `!` (or `!<!>`) among
// the node properties written at offset i, an anchor and a tag in either
// order, or -1 if they hold no such tag.
func nonSpecific(text []byte, i int) int {
	anchored := false
	for i < len(text) {
		switch text[i] {
		case '&':
			if anchored {
				return -1 // the next node's
			}
			anchored = true
			for i < len(text) && space(text, i) == 0 && bytes.IndexByte([]byte(",[]{}"), text[i]) < 0 {
				i++
			}
		case '!':
			end := i + 1
			if bytes.HasPrefix(text[i:], []byte("!<!>")) {
				end = i + 4
			}
			if end == len(text) || space(text, end) > 0 || text[end] == ',' {
				return i
			}
			return -1 // another tag
		default:
			return -1
		}
		// Properties are parted by blanks, line breaks and comments.
		for i < len(text) {
			if size := space(text, i); size > 0 {
				i += size
				continue
			}
			if text[i] != '#' {
				break
			}
			for i < len(text) && lineBreak(text, i) == 0 {
				i++
			}
		}
	}
	return -1
}

// space returns the length of the space, tab or line break at offset i of
// text, or 0 if there is none.
func space(text []byte, i int) int {
	if text[i] == ' ' || text[i] == '\t' {
		return 1
	}
	return lineBreak(text, i)
}

// lineBreak returns the length of the line break at offset i of text, as
// the YAML parser breaks lines (\r\n, \r, \n, NEL, LS, PS), or 0 if
// there is none.
func lineBreak(text []byte, i int) int {
	switch text[i] {
	case '\n':
		return 1
	case '\r':
		if i+1 < len(text) && text[i+1] == '\n' {
			return 2
		}
		return 1
	case 0xC2: // NEL, U+0085
		if i+1 < len(text) && text[i+1] == 0x85 {
			return 2
		}
	case 0xE2: // LS and PS, U+2028 and U+2029
		if i+2 < len(text) && text[i+1] == 0x80 && (text[i+2] == 0xA8 || text[i+2] == 0xA9) {
			return 3
		}
	}
	return 0
}
