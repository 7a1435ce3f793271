package yamlcheck

import (
	"strconv"
	"strings"
)

// A Path is a field path built only when a message names it, so that
// decoding a value nested d levels deep costs time and memory growing
// with d, not with d squared as writing out the path of every node would.
// A nil *Path is the path of the document itself (""). A Path is never
// changed once made, and may be shared by any number of goroutines.
type Path struct {
	parent *Path
	// The step from parent: text appended as written (for a path given
	// as a string, whose parent is nil), a mapping key, or a list index.
	text, key string
	index     int
	kind      uint8
}

const (
	pathText uint8 = iota
	pathKey
	pathIndex
)

// PathOf returns the path written s, e.g. "plans.free".
func PathOf(s string) *Path {
	if s == "" {
		return nil
	}
	return &Path{text: s, kind: pathText}
}

// Key returns the path of the key k of the mapping at p: String writes it
// as Join does.
func (p *Path) Key(k string) *Path { return &Path{parent: p, key: k, kind: pathKey} }

// Index returns the path of the i-th element of the list at p (p[i]).
func (p *Path) Index(i int) *Path { return &Path{parent: p, index: i, kind: pathIndex} }

// String returns the path written out, e.g. "descriptors[0].key": the
// steps of p joined as Join joins a key and a list shows an index.
func (p *Path) String() string {
	var steps []*Path
	for q := p; q != nil; q = q.parent {
		steps = append(steps, q)
	}
	var b strings.Builder
	for i := len(steps) - 1; i >= 0; i-- {
		switch s := steps[i]; s.kind {
		case pathText:
			b.WriteString(s.text)
		case pathKey:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(shown(s.key))
		case pathIndex:
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.index))
			b.WriteByte(']')
		}
	}
	return b.String()
}
