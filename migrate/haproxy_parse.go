package migrate

import (
	"fmt"
	"strings"
)

// haproxyLine is one line of an HAProxy configuration: its words, unquoted
// and unescaped, and its number.
type haproxyLine struct {
	words []string
	line  int
}

// haproxySection is one section: its keyword (frontend, backend, listen,
// peers, defaults, global, …), its name and its lines.
type haproxySection struct {
	kind, name string
	line       int
	lines      []haproxyLine
}

// haproxySectionKinds are the keywords that start a section.
var haproxySectionKinds = map[string]bool{
	"global": true, "defaults": true, "frontend": true, "backend": true, "listen": true,
	"peers": true, "resolvers": true, "userlist": true, "program": true, "http-errors": true,
	"ring": true, "cache": true, "mailers": true, "fcgi-app": true,
}

// parseHAProxy splits src into sections of lines. Lines before the first
// section are an error, as HAProxy refuses them.
func parseHAProxy(src string) ([]haproxySection, error) {
	var out []haproxySection
	for n, text := range strings.Split(src, "\n") {
		words, err := haproxyWords(text)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n+1, err)
		}
		if len(words) == 0 {
			continue
		}
		if haproxySectionKinds[words[0]] {
			s := haproxySection{kind: words[0], line: n + 1}
			if len(words) > 1 {
				s.name = words[1]
			}
			out = append(out, s)
			continue
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("line %d: %s outside a section (global, defaults, frontend, backend, listen, …)", n+1, excerpt(words[0]))
		}
		s := &out[len(out)-1]
		s.lines = append(s.lines, haproxyLine{words: words, line: n + 1})
	}
	return out, nil
}

// haproxyWords splits one line into words as HAProxy does: blanks separate
// words, '#' starts a comment, a backslash escapes the next character,
// "double" and 'single' quotes keep blanks and '#' (environment variables
// in double quotes are kept as written).
func haproxyWords(text string) ([]string, error) {
	var (
		words []string
		cur   strings.Builder
		in    bool // a word has started (possibly empty: "")
		quote byte
	)
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote == '\'':
			cur.WriteByte(c)
		case c == '\\':
			if i+1 == len(text) {
				return nil, fmt.Errorf("a backslash ends the line (HAProxy has no continuation lines)")
			}
			i++
			cur.WriteByte(text[i])
			in = true
		case quote == '"':
			cur.WriteByte(c)
		case c == '"' || c == '\'':
			quote, in = c, true
		case c == '#':
			i = len(text)
		case c == ' ' || c == '\t' || c == '\r':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote", quote)
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}
