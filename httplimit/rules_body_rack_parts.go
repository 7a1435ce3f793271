package httplimit

import (
	"bytes"
	"slices"
)

// rawPart is a part of a multipart body as a reader delimits it: its head,
// the lines before the blank line that ends it, each with its line end,
// and its content as sent.
type rawPart struct{ head, content []byte }

// goParts returns the parts of a multipart body of the given boundary as
// mime/multipart delimits them. It stops at the final boundary, or where
// mime/multipart would report an error: a caller compares the count with
// the parts it read.
func goParts(body []byte, boundary string) (parts []rawPart) {
	dash := "--" + boundary
	nl := "\r\n"
	rest := body
	for {
		line, after := cutLine(rest)
		switch {
		case isDelimiterLine(line, dash, &nl, len(parts) == 0):
			n := 0
			for {
				l, a := cutLine(after[n:])
				if a == nil { // the header does not end
					return parts
				}
				if string(l) == "\n" || string(l) == "\r\n" {
					break
				}
				n += len(l)
			}
			_, content := cutLine(after[n:])
			end := partEnd(content, dash, nl)
			if end < 0 {
				return parts
			}
			parts = append(parts, rawPart{after[:n], content[:end]})
			rest, _ = bytes.CutPrefix(content[end:], []byte(nl))
		case len(parts) == 0 && after != nil: // the preamble
			rest = after
		default: // the final boundary, or a line mime/multipart refuses
			return parts
		}
	}
}

// rackParts returns the parts of a multipart body of the given boundary as
// Rack 2.2's Multipart::Parser delimits them (Rack 3's, to 3.2, when
// rack3), the whole body in its buffer; ok is false where it fails the
// request. Both take a part's head up to the first "\r\n\r\n" after its
// delimiter (its first "\r\n" the head's last), whatever blank line ends
// it first to mime/multipart. Rack 2.2 takes any line that is "--boundary" or
// "--boundary--" with whitespace around it as the opening delimiter (the
// final one too, unless it is the whole body), ends a part's content at
// the first "--boundary" that "\r\n" or "--" follows, a line end before
// it or not, and then skips two bytes and lines up to a delimiter line.
// Rack 3 takes the first "--boundary\r\n" that opens the body or follows
// "\r\n" as the opening delimiter (a lone final delimiter line is a body
// of no part), and ends a part's content at such a "--boundary" or
// "--boundary--" that opens it or a "\r\n" precedes, skipping two bytes
// and up to the next such delimiter. It takes time linear in the body.
func rackParts(body []byte, boundary string, rack3 bool) (parts []rawPart, ok bool) {
	dash := []byte("--" + boundary)
	// next returns where the first delimiter at or after body[from] starts
	// as a part's content ends at it, and ends: "--boundary" and "\r\n"
	// or "--", with the "\r\n" before it (Rack 2.2) or with "\r\n" or
	// at from alone (Rack 3); -1 for none.
	next := func(from int) (start, end int) {
		for i := from; ; {
			j := bytes.Index(body[i:], dash)
			if j < 0 {
				return -1, -1
			}
			j += i
			e := j + len(dash)
			crlf := j-2 >= from && body[j-2] == '\r' && body[j-1] == '\n'
			if (bytes.HasPrefix(body[e:], []byte("\r\n")) || bytes.HasPrefix(body[e:], []byte("--"))) &&
				(!rack3 || crlf || j == from) {
				if crlf {
					return j - 2, e + 2
				}
				return j, e + 2
			}
			i = j + 1
		}
	}
	// token reads delimiters from body[pos], as Rack's consume_boundary
	// does: it reports whether one is found and whether it is the final
	// one, and moves pos past it (to the body's end for none).
	token := func(pos *int) (found, final bool) {
		if rack3 {
			start, end := next(*pos)
			if start < 0 {
				*pos = len(body)
				return false, false
			}
			*pos = end
			return true, body[end-1] == '-'
		}
		for {
			line, _ := cutLine(body[*pos:])
			*pos += len(line)
			switch string(bytes.Trim(line, rubySpace)) {
			case string(dash):
				return true, false
			case string(dash) + "--":
				return true, true
			}
			if *pos == len(body) {
				return false, false
			}
		}
	}
	pos := 0
	for { // the opening delimiter
		found, final := token(&pos)
		switch {
		case !found:
			return nil, false
		case final && !rack3 && pos == len(dash)+4 && pos == len(body):
			return nil, true
		case final && rack3 && pos == len(dash)+2 && string(body[pos:]) == "\r\n":
			return nil, true
		case final && rack3:
			continue
		}
		break
	}
	for {
		h := bytes.Index(body[pos:], []byte("\r\n\r\n"))
		if h < 0 {
			return nil, false
		}
		head := body[pos : pos+h+2]
		pos += h + 4
		start, _ := next(pos)
		if start < 0 {
			return nil, false
		}
		parts = append(parts, rawPart{head, body[pos:start]})
		pos = start + 2
		found, final := token(&pos)
		if final || !found && pos == len(body) {
			return parts, true
		}
	}
}

// sameParts reports whether two readers delimit a body's parts alike.
func sameParts(a, b []rawPart) bool {
	return slices.EqualFunc(a, b, func(x, y rawPart) bool {
		return bytes.Equal(x.head, y.head) && bytes.Equal(x.content, y.content)
	})
}

// cutLine returns the first line of b, with its '\n', and what follows it;
// after is nil when b holds no '\n'.
func cutLine(b []byte) (line, after []byte) {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i+1], b[i+1:]
	}
	return b, nil
}

// isDelimiterLine reports whether line is a boundary delimiter line to
// mime/multipart: dash, spaces or tabs, and the line end nl, which becomes
// "\n" when the first one ends so (first).
func isDelimiterLine(line []byte, dash string, nl *string, first bool) bool {
	rest, ok := bytes.CutPrefix(line, []byte(dash))
	if !ok {
		return false
	}
	rest = bytes.TrimLeft(rest, " \t")
	if first && string(rest) == "\n" {
		*nl = "\n"
	}
	return string(rest) == *nl
}

// partEnd returns where the content of a part, content followed by the
// rest of the body, ends as mime/multipart reads it: before the line end
// and dash that a space, tab, line end, "--" or the body's end follows, or
// at once when content starts with such a dash; -1 when there is none.
func partEnd(content []byte, dash, nl string) int {
	from := 0
	if bytes.HasPrefix(content, []byte(dash)) {
		if boundaryFollows(content, len(dash)) {
			return 0
		}
		from = len(dash)
	}
	nlDash := []byte(nl + dash)
	for {
		i := bytes.Index(content[from:], nlDash)
		if i < 0 {
			return -1
		}
		if i += from; boundaryFollows(content, i+len(nlDash)) {
			return i
		}
		from = i + len(nlDash)
	}
}

// boundaryFollows reports whether what follows a dash ending at b[i] makes
// it a boundary to mime/multipart.
func boundaryFollows(b []byte, i int) bool {
	switch {
	case i == len(b):
		return true
	case b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n':
		return true
	}
	return b[i] == '-' && i+1 < len(b) && b[i+1] == '-'
}
