package httplimit

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// The patterns below are Rack 2.2's (Rack::Multipart) and Rack 3's as Go
// regular expressions, checked against the real Rack 2.2.22: the reference
// the linear scanners of rules_body_rack.go read a head as.

// patternAsciiFold returns a pattern matching s in any ASCII case, as a Ruby
// pattern of the i flag matches a binary string: (?i) would also fold
// 's' with U+017F and 'k' with U+212A.
func patternAsciiFold(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		switch {
		case 'a' <= c && c <= 'z':
			b.WriteString("[" + string(c-'a'+'A') + string(c) + "]")
		case 'A' <= c && c <= 'Z':
			b.WriteString("[" + string(c) + string(c-'A'+'a') + "]")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return b.String()
}

// Rack 2.2's patterns (Rack::Multipart), its \s spelled out. Go's regexp
// picks, among the leftmost matches, the one Ruby's backtracking picks.
const (
	patternRackSpace     = `[\t\n\v\f\r ]`
	patternRackToken     = `[^\t\n\v\f\r ()<>,;:\\"/\[\]?=]+`
	patternRackValue     = `"(?:\\"|[^"])*"|` + patternRackToken
	patternRackAttrChar  = `[^ \x00-\x1f\x7f)(><@,;:\\"/\[\]?='*%]`
	patternRackOtherVal  = `(?:%[0-9a-fA-F]{2}|` + patternRackAttrChar + `)*`
	patternRackDispParam = `;` + patternRackSpace + `*(?:` +
		`(` + patternRackAttrChar + `+(?:\*[0-9]+)?)=(` + patternRackValue + `)|` +
		`(` + patternRackAttrChar + `+(?:\*0)?\*)=([a-zA-Z0-9\-]*'[a-zA-Z0-9\-]*'` + patternRackOtherVal + `)|` +
		`(` + patternRackAttrChar + `+\*[1-9][0-9]*\*)=(` + patternRackOtherVal + `))` + patternRackSpace + `*`
)

var (
	// patternRack2Name is MULTIPART_CONTENT_DISPOSITION: anywhere in the head,
	// not anchored to a line's start, and across lines but no colon.
	patternRack2Name = regexp.MustCompile(patternAsciiFold("Content-Disposition:") + `[^:]*;` + patternRackSpace + `*` + patternAsciiFold("name=") + `(` + patternRackValue + `)`)
	// patternRack2ID is MULTIPART_CONTENT_ID.
	patternRack2ID = regexp.MustCompile(patternAsciiFold("Content-ID:") + patternRackSpace + `*([^\r\n]*)`)
	// patternRack2RFC2183, patternRack2DispParam and patternRack2Broken are what Rack 2.2's
	// get_filename reads a part's file name by.
	patternRack2CondDisp  = `(?m:^)` + patternAsciiFold("Content-Disposition:") + patternRackSpace + `*` + patternRackToken + patternRackSpace + `*`
	patternRack2RFC2183   = regexp.MustCompile(patternRack2CondDisp + `(?:` + patternRackDispParam + `)+(?m:$)`)
	patternRack2DispParam = regexp.MustCompile(patternRackDispParam)
	patternRack2Broken    = regexp.MustCompile(patternRack2CondDisp + `.*;` + patternRackSpace + `*` + patternAsciiFold("filename=") + `(?:` + patternRackValue + `)`)
	// patternRack3Disposition and patternRack3ID are Rack 3's MULTIPART_CONTENT_DISPOSITION
	// and MULTIPART_CONTENT_ID: a header at a line's start, folded lines
	// and all.
	patternRack3Disposition = regexp.MustCompile(`(?m:^)` + patternAsciiFold("Content-Disposition:") + `(?:[ \t]+(?:\r\n[ \t]+)?)?((?:[^\r\n]|\r\n[ \t])*)`)
	patternRack3ID          = regexp.MustCompile(`(?m:^)` + patternAsciiFold("Content-ID:") + `(?:[ \t]+(?:\r\n[ \t]+)?)?((?:[^\r\n]|\r\n[ \t])*)`)
)

// patternRack2PartName returns the name of the field Rack 2.2 reads a multipart
// part of the given head as, "" for none (a file, or a part it names
// nothing): the value after the first "Content-Disposition:" anywhere in
// the head (in any case, X-Content-Disposition's too) that a ';',
// whitespace and "name=" follow with no colon between, the last such
// name= before a colon, its quotes and backslash escapes undone (Rack's
// dequote); without one the part's Content-ID (its first
// "Content-ID:", unanchored too, after whitespace, to the line's end). A
// part with a file name (see patternRack2HasFileName) is a file.
func patternRack2PartName(head string) string {
	if patternRack2HasFileName(head) {
		return ""
	}
	if m := patternRack2Name.FindStringSubmatch(head); m != nil {
		return rubyDequote(m[1])
	}
	if m := patternRack2ID.FindStringSubmatch(head); m != nil {
		return m[1]
	}
	return ""
}

// patternRack2HasFileName reports whether Rack 2.2 reads a file name in a part's
// head (get_filename), which makes the part a file, or drops it when the
// name is empty: when a Content-Disposition line is wholly parameters
// (RFC2183), a filename or filename* parameter (in lower case) anywhere in
// the head; otherwise a Content-Disposition line with ";filename=" in any
// case. filename*0= (a continuation) is neither.
func patternRack2HasFileName(head string) bool {
	if !patternRack2RFC2183.MatchString(head) {
		return patternRack2Broken.MatchString(head)
	}
	file, star := false, false
	for _, m := range patternRack2DispParam.FindAllStringSubmatchIndex(head, -1) {
		for g := 2; g < len(m); g += 4 {
			if m[g] >= 0 {
				switch head[m[g]:m[g+1]] {
				case "filename":
					file = true
				case "filename*":
					star = true
				}
			}
		}
	}
	return file || star
}

// patternRack3PartName returns the name of the field Rack 3 reads a multipart
// part of the given head as, "" for none: from the first
// Content-Disposition header (at a line's start, in any case) of at most
// 1536 bytes, its parameters after the first ';', the first 16 of them,
// each named as written (name, not NAME) and valued quoted, backslash
// escapes undone, or up to a ';'; without such a header the part's
// Content-ID. A filename or filename* parameter makes the part a file,
// filename*0 not.
func patternRack3PartName(head string) string {
	m := patternRack3Disposition.FindStringSubmatch(head)
	if m == nil || len(m[1]) > rack3MaxDisposition {
		if m := patternRack3ID.FindStringSubmatch(head); m != nil {
			return m[1]
		}
		return ""
	}
	d := m[1]
	i := strings.IndexByte(d, ';')
	if i < 0 { // Rack 3 fails the request
		return ""
	}
	d = d[i+1:]
	name, file := "", false
	for n := 0; n < rack3MaxParams; n++ {
		i := strings.IndexByte(d, '=')
		if i < 0 {
			break
		}
		param := strings.TrimLeft(d[:i], rubySpace)
		d = d[i+1:]
		var value string
		if strings.HasPrefix(d, `"`) {
			d = d[1:]
			var b strings.Builder
			for {
				j := strings.IndexAny(d, `"\`)
				if j < 0 {
					break
				}
				c := d[j]
				b.WriteString(d[:j])
				d = d[j+1:]
				if c == '"' {
					break
				}
				if d != "" {
					b.WriteByte(d[0])
					d = d[1:]
				}
			}
			value = b.String()
		} else if j := strings.IndexByte(d, ';'); j >= 0 {
			value, d = d[:j], d[j:]
		} else {
			value, d = strings.Trim(d, rubySpace), ""
		}
		switch param {
		case "name":
			name = value
		case "filename", "filename*":
			file = true
		}
		if j := strings.IndexByte(d, ';'); j >= 0 {
			d = d[j+1:]
		}
	}
	if file {
		return ""
	}
	return name
}

// randomHead returns a part's head made of pieces that Rack's patterns
// read differently: dispositions of every case, parameters regular and
// extended, quoted values with escapes, colons, folded lines, Content-IDs.
func randomHead(r *rand.Rand) string {
	pick := func(s ...string) string { return s[r.IntN(len(s))] }
	value := func() string {
		return pick("email", `"email"`, `"em\\ail"`, `"e:m"`, "a:b", `"a;name=email"`, `"x\\"y"`, `"x\\"`, `\\"`,
			"''email", "UTF-8''email", "UTF-8''%41b", `"email`, `email"`, `"em ail"`, "", "x", "%4", "a*b")
	}
	param := func() string {
		return pick(";", "; ", ";\t", " ; ", "", ";\r\n ", ";\n") +
			pick("name", "NAME", "Name", "filename", "FILENAME", "filename*", "filename*0", "filename*0*", "x", "name*", "name*0", "name*1*", " name", "name ") +
			pick("=", " =", "= ") + value()
	}
	var b strings.Builder
	for range 1 + r.IntN(3) {
		switch r.IntN(6) {
		case 0, 1, 2:
			b.WriteString(pick("Content-Disposition", "content-disposition", "CONTENT-DISPOSITION", "X-Content-Disposition", "Content-Disposition ") +
				pick(":", ": ", ":\t", ": \r\n ") + pick("form-data", "attachment", "", "inline", "form-data ", "form-data\r\n"))
			for range r.IntN(4) {
				b.WriteString(param())
			}
			b.WriteString(pick("", "", " ", "\t", `"`))
		case 3:
			b.WriteString(pick("Content-ID:", "content-id:\t", "Content-ID:\r\n ") + pick("email", "x", "<email>", " email"))
		case 4:
			b.WriteString("Content-Type: text/plain")
		default:
			b.WriteString(" " + param())
		}
		b.WriteString(pick("\r\n", "\r\n", "\n", "\r\n\t"))
	}
	return b.String()
}

// The scanners read a head as Rack's patterns match it: the same names,
// the same file names found, on random heads.
func TestRackHeadScannersReadAsRacksPatterns(t *testing.T) {
	r := rand.New(rand.NewPCG(57, 10))
	for range 20000 {
		head := randomHead(r)
		if got, want := rack2HasFileName(head), patternRack2HasFileName(head); got != want {
			t.Errorf("rack2HasFileName(%q) = %v, Rack 2.2's patterns read %v", head, got, want)
		}
		if got, want := rack2PartName(head), patternRack2PartName(head); got != want {
			t.Errorf("rack2PartName(%q) = %q, Rack 2.2's patterns read %q", head, got, want)
		}
		if got, want := rack3PartName(head), patternRack3PartName(head); got != want {
			t.Errorf("rack3PartName(%q) = %q, Rack 3's patterns read %q", head, got, want)
		}
	}
}

// rackParts delimits a body's parts as Rack 2.2's and Rack 3's parsers do
// (each case checked against the real Rack 2.2.22 where it says rack2).
func TestRackPartsDelimitAsRackDoes(t *testing.T) {
	part := rawPart{[]byte("A: b\r\n"), []byte("v")}
	for _, c := range []struct {
		body           string
		rack2, rack3   []rawPart
		fails2, fails3 bool
	}{
		{body: "pre\r\n--X\r\nA: b\r\n\r\nv\r\n--X--\r\n", rack2: []rawPart{part}, rack3: []rawPart{part}},
		{body: "--X--\r\n"},
		// Rack 3 opens at no delimiter line with trailing whitespace.
		{body: "--X \r\nA: b\r\n\r\nv\r\n--X--\r\n", rack2: []rawPart{part}, fails3: true},
		// Rack 3 ends a part only after a line end.
		{body: "--X\r\nA: b\r\n\r\nv--X--1\r\n--X--\r\n", rack2: []rawPart{part},
			rack3: []rawPart{{[]byte("A: b\r\n"), []byte("v--X--1")}}},
		// A head runs to the first "\r\n\r\n".
		{body: "--X\r\nA: b\n\nv\r\n--X\r\nC: d\r\n\r\nw\r\n--X--\r\n",
			rack2: []rawPart{{[]byte("A: b\n\nv\r\n--X\r\nC: d\r\n"), []byte("w")}},
			rack3: []rawPart{{[]byte("A: b\n\nv\r\n--X\r\nC: d\r\n"), []byte("w")}}},
		{body: "--X\r\nA: b\n\nv\r\n--X--\r\n", fails2: true, fails3: true},
		// Rack 2.2 opens at a final delimiter that more follows.
		{body: "--X--\r\nA: b\r\n\r\nv\r\n--X--\r\n", rack2: []rawPart{part}, fails3: true},
	} {
		for _, r := range []struct {
			rack3 bool
			want  []rawPart
			fails bool
		}{{false, c.rack2, c.fails2}, {true, c.rack3, c.fails3}} {
			got, ok := rackParts([]byte(c.body), "X", r.rack3)
			if ok == r.fails || !sameParts(got, r.want) {
				t.Errorf("rackParts(%q, rack3 %v) = %q, %v; want %q, %v", c.body, r.rack3, got, ok, r.want, !r.fails)
			}
		}
	}
}
