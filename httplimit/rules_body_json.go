package httplimit

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// maxJSONDepth is the most names a KeyJSON path has ("user.email" has two).
const maxJSONDepth = 4

// jsonValue returns the field at path (names joined by dots, as a claim's)
// of a JSON object body, read as JSON text in the coding its first bytes
// tell (see jsonText): a string without the whitespace around it (see trimValue),
// a whole number, true or false; "" for anything else or a body that is
// not JSON (see jsonType, readJSON). Each name is matched in any case, as encoding/json matches a
// struct's fields: a member under another casing alone is the field, and
// an object with two members of a name of path is ambiguous: of two the
// same, encoding/json and JavaScript read the last, gjson and jsonparser
// the first; of two differing only in case, a Go struct reads the last,
// other decoders the exact name.
//
// Rails' params, Laravel's input() and PHP's $_REQUEST merge the query
// string with the body, so the field is also the query parameter of its
// name ("user[email]" for "user.email", as they nest one), in any case or
// as PHP names it, as formValue reads one; a query parameter and a member
// with values that differ (but for case) are ambiguous. So is the field
// of a JSON body that could not be read (see readJSON). The field of a
// body with a content coding is read both as sent and decoded (see
// eitherReading), and that of any body both as JSON and as a form, as
// Rails' params and Laravel's input() read it from whichever the client
// sends: as a form it is the pair or part named as the query parameter
// (see bothReadings). A body of any other type is JSON too when it opens
// an object (see readJSON). A request whose Body is nil has no field, the
// query unread, as for formValue.
func (f *requestFacts) jsonValue(path string) (value string, ambiguous bool) {
	if f.r.Body == nil {
		return "", false
	}
	if contentCoding(f.r.Header) == codingNone {
		one := f.jsonField(bodyPlain, path)
		return one.value()
	}
	return eitherReading(f.jsonField(bodySent, path), f.jsonField(bodyDecoded, path))
}

// jsonField returns the values of the JSON field at path (see jsonValue)
// in the query and in the body as rd reads it, in both its readings (see
// bothReadings): as JSON, and as a form, where the field is the pair or
// part named as the query parameter (see queryName).
func (f *requestFacts) jsonField(rd bodyReading, path string) fieldValues {
	name, rest, nested := strings.Cut(path, ".")
	return f.bothReadings(rd, queryName(path), name, rest, nested)
}

// addJSONMember adds to one the value of the member of r's JSON body, as
// rd reads it (see readJSON), named name in any case and, when nested,
// its member at rest (see jsonMember); one is ambiguous when the body
// could not be read or the member is (see jsonValue).
func (f *requestFacts) addJSONMember(one *fieldValues, rd bodyReading, name, rest string, nested bool) {
	fs := f.reqBody.fields(rd)
	if !fs.jsonDone {
		fs.jsonDone = true
		fs.jsonLost = !f.readJSON(rd)
	}
	if fs.jsonLost || mayNameMember(fs.garbled, name) {
		one.ambiguous = true
		return
	}
	if len(fs.json) == 0 { // no JSON body, or an empty one: no member
		return
	}
	v, ambiguous := jsonMemberAt(fs.json, name, rest, nested)
	if ambiguous {
		one.ambiguous = true
		return
	}
	if s := jsonScalar(v); s != "" {
		one.add(s)
	}
}

// readJSON reads r's body, as rd reads it, for jsonValue when it is JSON
// (see jsonType). It reports false for one that could not be read whole:
// longer than MaxKeyBody, of content not decoded (see content), or not one
// JSON value, read as JSON text (see jsonText) and but for the whitespace
// around it (malformed, cut short, nested deeper than encoding/json reads, or
// followed by more), whose field a lenient reader may still find (gjson
// skips what comes before an object). Such a body read as sent, of a
// content coding, is kept as garbled instead: its field is ambiguous only
// where a lenient reader may find it (see mayNameMember). A body of
// another type, or without one, is JSON when, so read, it starts with an
// object ('{' after whitespace, read as JSON text), as FastAPI reads an
// untyped one and a Go handler decoding r.Body (or gin's
// ShouldBindJSON) reads one of any type, text/plain as fetch() sends a
// string; one that could not be read may be. One that starts otherwise,
// or an empty one, has no field.
func (f *requestFacts) readJSON(rd bodyReading) bool {
	typed := jsonType(f.r)
	fs := f.reqBody.fields(rd)
	body, ok := f.bodyOf(rd)
	body = jsonText(body)
	switch {
	case !typed && !f.mayOpenObject(rd): // of another type, and no JSON object: no field
	case !ok:
		return false
	case len(bytes.TrimLeft(body, " \t\r\n")) == 0 || json.Valid(body):
		fs.json = body
	case rd == bodySent:
		fs.garbled = body
	default:
		return false
	}
	return true
}

// jsonText returns a JSON body as the UTF-8 text Python's json.loads
// (so FastAPI and Flask) reads from its bytes, in the coding its first
// bytes tell (see jsonCoding): after a UTF-8 byte order mark, as sent;
// UTF-16 and UTF-32 decoded, an unpaired surrogate (which json.loads
// passes) as U+FFFD. A body of UTF-16 or UTF-32 that does not decode (a
// unit cut short, a code point past U+10FFFF), which json.loads refuses,
// is returned as sent.
func jsonText(body []byte) []byte {
	unit, big, mark := jsonCoding(body, true)
	data := body[mark:]
	if unit == 1 {
		return data
	}
	if len(data)%unit != 0 {
		return body
	}
	text := make([]byte, 0, len(data)/unit)
	for i := 0; i < len(data); i += unit {
		var c rune
		if unit == 4 {
			u := utf32At(data[i:], big)
			if u > unicode.MaxRune {
				return body
			}
			c = rune(u)
		} else {
			c = rune(utf16At(data[i:], big))
			if utf16.IsSurrogate(c) && i+2 < len(data) {
				if pair := utf16.DecodeRune(c, rune(utf16At(data[i+2:], big))); pair != unicode.ReplacementChar {
					c, i = pair, i+2
				}
			}
		}
		text = utf8.AppendRune(text, c)
	}
	return text
}

// jsonCoding returns the coding of a JSON body that its first bytes tell,
// as Python's json.detect_encoding tells it and Jackson detects it: unit
// is the bytes of its code unit (1 for UTF-8, 2 for UTF-16, 4 for
// UTF-32), big whether they are big-endian, and mark the bytes of the
// byte order mark it starts with. A UTF-8 mark is skipped (as Express,
// ASP.NET Core and Jackson skip it; encoding/json refuses it), and so are
// UTF-32's and UTF-16's, of either byte order; without a mark, a body is
// UTF-32 or UTF-16 by the zero bytes among its first four (or its only two
// when whole, as JSON text starts with an ASCII character: 00 00 is
// UTF-32BE, 00 xx UTF-16BE, xx 00 00 00 UTF-32LE, xx 00 UTF-16LE), and
// UTF-8 otherwise. The coding of the first bytes of a body not read whole
// (whole false) is that of the whole body once they number at least 4.
func jsonCoding(body []byte, whole bool) (unit int, big bool, mark int) {
	b := body
	switch {
	case bytes.HasPrefix(b, []byte("\x00\x00\xFE\xFF")):
		return 4, true, 4
	case bytes.HasPrefix(b, []byte("\xFF\xFE\x00\x00")):
		return 4, false, 4
	case bytes.HasPrefix(b, []byte("\xFE\xFF")):
		return 2, true, 2
	case bytes.HasPrefix(b, []byte("\xFF\xFE")):
		return 2, false, 2
	case bytes.HasPrefix(b, []byte("\uFEFF")):
		return 1, false, 3
	case (len(b) >= 4 || len(b) == 2 && whole) && b[0] == 0:
		if len(b) >= 4 && b[1] == 0 {
			return 4, true, 0
		}
		return 2, true, 0
	case (len(b) >= 4 || len(b) == 2 && whole) && b[1] == 0:
		if len(b) >= 4 && b[2] == 0 && b[3] == 0 {
			return 4, false, 0
		}
		return 2, false, 0
	}
	return 1, false, 0
}

// utf16At returns the UTF-16 unit at the start of b, of the byte order big
// tells.
func utf16At(b []byte, big bool) uint16 {
	if big {
		return binary.BigEndian.Uint16(b)
	}
	return binary.LittleEndian.Uint16(b)
}

// utf32At returns the UTF-32 unit at the start of b, of the byte order big
// tells.
func utf32At(b []byte, big bool) uint32 {
	if big {
		return binary.BigEndian.Uint32(b)
	}
	return binary.LittleEndian.Uint32(b)
}

// jsonOpening is what the first bytes of a JSON text start with, after the
// whitespace JSON allows before a value (see openingOf).
type jsonOpening int

const (
	openingBlank  jsonOpening = iota // nothing but whitespace yet
	openingObject                    // '{'
	openingOther                     // any other character, or a unit that does not decode
)

// openingOf returns what opening, the first bytes of a body, starts with
// read as JSON text in the coding they tell (see jsonCoding; at least 4
// bytes but for a body shorter), and where in opening the whitespace that
// comes first ends: at the character it found, or at its end, or at a
// unit cut short there, from where a later call goes on. from is where an
// earlier call on fewer of the same bytes left off, 0 at first: each unit
// is looked at once however opening grows. A UTF-32 unit past U+10FFFF or
// a UTF-16 surrogate is neither whitespace nor '{' (json.loads refuses a
// body that starts with one), so it is another character.
func openingOf(opening []byte, from int) (jsonOpening, int) {
	unit, big, mark := jsonCoding(opening, false)
	i := max(from, mark)
	for ; i+unit <= len(opening); i += unit {
		var c uint32
		switch unit {
		case 1:
			c = uint32(opening[i])
		case 2:
			c = uint32(utf16At(opening[i:], big))
		default:
			c = utf32At(opening[i:], big)
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '{':
			return openingObject, i
		}
		return openingOther, i
	}
	return openingBlank, i
}

// jsonScalar returns v, a decoded JSON value, as a key reads it: a string
// as it is, a whole number, true or false; "" for anything else.
func jsonScalar(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case bool:
		if v {
			return "true"
		}
		return "false"
	case json.Number:
		if _, err := v.Int64(); err == nil {
			return v.String()
		}
	}
	return ""
}

// queryName returns the query parameter that Rails, Laravel and PHP read
// as the JSON field at path: "user[email]" for "user.email".
func queryName(path string) string {
	name, rest, nested := strings.Cut(path, ".")
	if !nested {
		return path
	}
	return name + "[" + strings.ReplaceAll(rest, ".", "][") + "]"
}

// jsonPathOf returns the JSON path that Rails and Laravel read as the
// form field name, the inverse of queryName: "user.email" for
// "user[email]", of as many names as it nests (a form: key's name nests
// at most maxJSONDepth, as a json: path holds; see parseKeyPart). ok is
// false for a name that nests nothing, or holds a segment that is empty
// ("user[]", an array), holds a dot or a bracket, or is not closed.
func jsonPathOf(name string) (path string, ok bool) {
	head, rest, nested := strings.Cut(name, "[")
	if !nested || head == "" || strings.ContainsAny(head, ".]") {
		return "", false
	}
	path = head
	for {
		seg, after, closed := strings.Cut(rest, "]")
		if !closed || seg == "" || strings.ContainsAny(seg, ".[") {
			return "", false
		}
		if path += "." + seg; after == "" {
			return path, true
		}
		if rest, ok = strings.CutPrefix(after, "["); !ok {
			return "", false
		}
	}
}

// jsonMember returns the member at path of the JSON object data, decoded
// (numbers as json.Number), or nil when data is no JSON object or has no
// such member; ambiguous reports two members of a name of path (see
// jsonValue), and then the member is nil.
func jsonMember(data []byte, path string) (v any, ambiguous bool) {
	name, rest, nested := strings.Cut(path, ".")
	return jsonMemberAt(data, name, rest, nested)
}

// jsonMemberAt is jsonMember of the path name, followed by rest when
// nested; name alone, dots and all, when not.
func jsonMemberAt(data []byte, name, rest string, nested bool) (v any, ambiguous bool) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var member json.RawMessage
	n := 0
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, false
		}
		var raw json.RawMessage
		if err := d.Decode(&raw); err != nil {
			return nil, false
		}
		if k, _ := t.(string); strings.EqualFold(k, name) {
			n, member = n+1, raw
		}
	}
	if _, err := d.Token(); err != nil { // the object's end: a body cut short is no JSON
		return nil, false
	}
	switch {
	case n > 1:
		return nil, true
	case n == 0:
		return nil, false
	case nested:
		return jsonMember(member, rest)
	}
	d = json.NewDecoder(bytes.NewReader(member))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return nil, false
	}
	return v, false
}

// jsonType reports whether r's body is JSON to an upstream: of type
// application/json or +json, or of a Content-Type that holds "/json" or
// "+json" anywhere, which Laravel's isJson() reads as JSON.
func jsonType(r *http.Request) bool {
	t, ct := mediaType(r), r.Header.Get("Content-Type")
	return t == "application/json" || strings.HasSuffix(t, "+json") || strings.Contains(ct, "/json") || strings.Contains(ct, "+json")
}

// untyped reports whether r's body has no Content-Type: none, or one of
// whitespace alone, which FastAPI reads as none (its body is read as JSON)
// and a Go handler decoding r.Body never consults.
func untyped(r *http.Request) bool {
	return strings.Trim(r.Header.Get("Content-Type"), " \t") == ""
}

// untypedPOST reports whether r is a POST whose body has no Content-Type
// (see untyped), which Rack, so Rails, Sinatra and Hanami, reads as an
// application/x-www-form-urlencoded form (Rack's form_data? holds for a
// POST without a type, and Rails leaves such a body to Rack). Rack reads
// no untyped body of another method as a form.
func untypedPOST(r *http.Request) bool {
	return r.Method == http.MethodPost && untyped(r)
}

// bothReadings returns the values of a field in the query and in r's
// body as rd reads it, both as a form, where the field is the pair or part
// named formName (see formReading), and as JSON, where it is the member
// name, followed by rest when nested (see addJSONMember). Rails' params
// and Laravel's input() read a field from whichever body the client sends,
// an application/json one's member or a form's pair or part, so a form or
// JSON key reads the field in both readings of every body. Each reading
// finds it only in a body upstreams read that way: as a form one of a form
// type or an untyped POST (see readForm; the bytes of a JSON body of
// another type are no pairs), as JSON one of a JSON type or that opens an
// object (see readJSON). A value one reading gives is the field's;
// readings that give values that differ make it ambiguous, as does a body
// one reading could not read whole (see readForm, readJSON).
func (f *requestFacts) bothReadings(rd bodyReading, formName, name, rest string, nested bool) (one fieldValues) {
	one = f.formReading(rd, formName)
	if !one.ambiguous {
		f.addJSONMember(&one, rd, name, rest, nested)
	}
	return one
}

// mayOpenObject reports whether r's body, as rd reads it, opens a JSON
// object ('{' after whitespace, read as JSON text), or may: one not
// read whole is read as sent up to its first byte but whitespace (see
// opensObjectAsSent), and its content, of a coding not decoded or past
// MaxKeyBody, may open one.
func (f *requestFacts) mayOpenObject(rd bodyReading) bool {
	if rd != bodyDecoded {
		return f.opensObjectAsSent()
	}
	body, ok := f.content()
	return !ok || opensObject(jsonText(body))
}

// opensObject reports whether body, after the whitespace JSON allows
// before a value, starts a JSON object.
func opensObject(body []byte) bool {
	body = bytes.TrimLeft(body, " \t\r\n")
	return len(body) > 0 && body[0] == '{'
}
