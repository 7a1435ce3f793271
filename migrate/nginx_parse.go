package migrate

import (
	"fmt"
)

// directive is one nginx directive: its name, arguments, line, and its block
// when it has one.
type directive struct {
	name  string
	args  []string
	line  int
	block []directive
	// hasBlock distinguishes "name { }" from "name;".
	hasBlock bool
}

// nginxLexer splits nginx configuration text into words, ';', '{' and '}'.
type nginxLexer struct {
	src  string
	pos  int
	line int
}

type token struct {
	text  string
	punct bool // ';', '{' or '}'
	line  int
}

// next returns the next token, ok false at the end, or an error.
func (l *nginxLexer) next() (token, bool, error) {
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		switch {
		case c == '\n':
			l.line++
			l.pos++
		case c == ' ' || c == '\t' || c == '\r':
			l.pos++
		case c == '#':
			for l.pos < len(l.src) && l.src[l.pos] != '\n' {
				l.pos++
			}
		case c == ';' || c == '{' || c == '}':
			l.pos++
			return token{text: string(c), punct: true, line: l.line}, true, nil
		case c == '"' || c == '\'':
			return l.quoted(c)
		default:
			start, line := l.pos, l.line
			for l.pos < len(l.src) {
				c := l.src[l.pos]
				if c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ';' || c == '{' || c == '}' {
					break
				}
				if c == '\\' && l.pos+1 < len(l.src) {
					l.pos++
				}
				l.pos++
			}
			return token{text: l.src[start:l.pos], line: line}, true, nil
		}
	}
	return token{}, false, nil
}

func (l *nginxLexer) quoted(q byte) (token, bool, error) {
	line := l.line
	l.pos++
	var out []byte
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		switch {
		case c == q:
			l.pos++
			return token{text: string(out), line: line}, true, nil
		case c == '\\' && l.pos+1 < len(l.src):
			l.pos++
			out = append(out, l.src[l.pos])
		case c == '\n':
			l.line++
			out = append(out, c)
		default:
			out = append(out, c)
		}
		l.pos++
	}
	return token{}, false, fmt.Errorf("line %d: unterminated quoted string", line)
}

// maxNginxDepth bounds block nesting (nginx's own files nest a few levels).
const maxNginxDepth = 32

// parseNginx parses nginx configuration text into its directives.
func parseNginx(src string) ([]directive, error) {
	l := &nginxLexer{src: src, line: 1}
	ds, closed, err := parseBlock(l, 0)
	if err != nil {
		return nil, err
	}
	if closed {
		return nil, fmt.Errorf("line %d: unexpected \"}\"", l.line)
	}
	return ds, nil
}

// parseBlock reads directives until '}' (closed true) or the end.
func parseBlock(l *nginxLexer, depth int) (ds []directive, closed bool, err error) {
	if depth > maxNginxDepth {
		return nil, false, fmt.Errorf("line %d: blocks nested more than %d deep", l.line, maxNginxDepth)
	}
	var cur *directive
	for {
		tok, ok, err := l.next()
		if err != nil {
			return nil, false, err
		}
		if !ok {
			if cur != nil {
				return nil, false, fmt.Errorf("line %d: directive %s is not terminated by \";\"", cur.line, excerpt(cur.name))
			}
			return ds, false, nil
		}
		switch {
		case tok.punct && tok.text == "}":
			if cur != nil {
				return nil, false, fmt.Errorf("line %d: directive %s is not terminated by \";\"", cur.line, excerpt(cur.name))
			}
			return ds, true, nil
		case tok.punct && cur == nil:
			return nil, false, fmt.Errorf("line %d: unexpected %s", tok.line, excerpt(tok.text))
		case tok.punct && tok.text == ";":
			ds, cur = append(ds, *cur), nil
		case tok.punct: // "{"
			block, closed, err := parseBlock(l, depth+1)
			if err != nil {
				return nil, false, err
			}
			if !closed {
				return nil, false, fmt.Errorf("line %d: block of %s is not closed", cur.line, excerpt(cur.name))
			}
			cur.block, cur.hasBlock = block, true
			ds, cur = append(ds, *cur), nil
		case cur == nil:
			cur = &directive{name: tok.text, line: tok.line}
		default:
			cur.args = append(cur.args, tok.text)
		}
	}
}
