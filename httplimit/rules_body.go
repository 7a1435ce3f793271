package httplimit

import (
	"bytes"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/sluice-dev/sluice/internal/phpname"
	"github.com/sluice-dev/sluice/internal/querypair"
)

// MaxKeyBody is the most bytes of a request's body read for a rule's key
// of its form or JSON fields (KeyForm, KeyJSON), and the most a gzip or
// deflate body (by its Content-Encoding) is decoded to. A longer form or
// JSON body, to either key (see bothReadings), or one of another type that
// may open a JSON object, may hold the field unread: every such request of
// the rule is counted together, as one whose field upstreams may read as
// different values is, whatever the rule's Fallback; so is one of another
// content coding (br, zstd), of several, or that does not decode, and one
// whose bytes as sent hold the field unless they give the value its
// content does (see eitherReading).
const MaxKeyBody = 64 << 10

// requestBody is what rule keys read of a request's body, once: its bytes,
// its content when it has a content coding (see content) and, found when
// first needed, its form or JSON fields.
type requestBody struct {
	done, unread          bool // unread: the body is longer than MaxKeyBody or does not read
	bytes                 []byte
	openingDone           bool   // opening: of an unread body (see opensObjectAsSent)
	opening               []byte // its first bytes, nil when they do not read
	decodeDone, undecoded bool   // undecoded: the body is unread, or decodeBody does not read it
	decoded               []byte
	sent                  bodyFields // the fields of the body as sent
	content               bodyFields // the fields of its content, when it has a content coding
}

// bodyFields are the form or JSON fields of one reading of a body (see
// bodyReading), found when first needed.
type bodyFields struct {
	formDone, formLost bool       // formLost: a form body that could not be read (see readForm)
	formText           string     // an application/x-www-form-urlencoded body
	form               url.Values // a multipart/form-data body's fields
	jsonDone, jsonLost bool       // jsonLost: a JSON body that could not be read (see readJSON)
	json               []byte     // the body when it is of a JSON type
	garbled            []byte     // a body of a JSON type that is not JSON, as sent (see mayNameMember)
}

// bodyReading is one way a key reads a body.
type bodyReading int

const (
	bodyPlain   bodyReading = iota // a body without a content coding
	bodySent                       // a body with a content coding, as sent (see eitherReading)
	bodyDecoded                    // a body with a content coding, decoded (see content)
)

// fields returns the fields of the body as rd reads it.
func (b *requestBody) fields(rd bodyReading) *bodyFields {
	if rd == bodyDecoded {
		return &b.content
	}
	return &b.sent
}

// body returns r's body as sent, read once (none when r has no body), or
// ok false when the body is longer than MaxKeyBody or does not read. The
// handler that serves r still reads the whole body as sent: r.Body is
// replaced by what was read followed by the rest, closed with the
// original.
func (f *requestFacts) body() (data []byte, ok bool) {
	b := &f.reqBody
	if b.done {
		return b.bytes, !b.unread
	}
	b.done = true
	r := f.r
	if f.client || r.Body == nil || r.Body == http.NoBody {
		return nil, true
	}
	if r.ContentLength > MaxKeyBody {
		b.unread = true
		return nil, false
	}
	read, err := io.ReadAll(io.LimitReader(r.Body, MaxKeyBody+1))
	r.Body = replayedBody{Reader: io.MultiReader(bytes.NewReader(read), r.Body), Closer: r.Body}
	if err != nil || len(read) > MaxKeyBody {
		b.unread, b.openingDone = true, true
		if err == nil {
			b.opening = read
		}
		return nil, false
	}
	b.bytes = read
	return read, true
}

// opensObjectAsSent reports whether r's body as sent, read as JSON text
// (see jsonText: after a byte order mark, UTF-16 and UTF-32 decoded),
// opens a JSON object (see opensObject), or may: one that body does not
// read whole is read up to its first character but whitespace, at most
// MaxKeyBody bytes (see readOpening), and may open one when that does not
// read or holds whitespace alone. One whose first character is another,
// or a unit that does not decode (see openingOf), opens none.
func (f *requestFacts) opensObjectAsSent() bool {
	if data, ok := f.body(); ok {
		return opensObject(jsonText(data))
	}
	b := &f.reqBody
	if !b.openingDone {
		b.openingDone = true
		b.opening = f.readOpening()
	}
	o, _ := openingOf(b.opening, 0)
	return o != openingOther
}

// readOpening reads r's body up to its first character but a byte order
// mark or whitespace, as JSON text (see openingOf), and at least 4 bytes,
// which tell its coding, at most MaxKeyBody bytes, and returns what it
// read; nil when that does not read. Each byte read is looked at once,
// however few bytes a Read returns. The handler still reads the whole
// body, as body replays it.
func (f *requestFacts) readOpening() []byte {
	r := f.r
	read := make([]byte, 0, 512)
	var err error
	for o, at := openingBlank, 0; len(read) < MaxKeyBody && err == nil && o == openingBlank; {
		read = slices.Grow(read, 512)
		var n int
		n, err = r.Body.Read(read[len(read):cap(read)])
		if read = read[:len(read)+n]; len(read) >= 4 {
			o, at = openingOf(read, at)
		}
	}
	r.Body = replayedBody{Reader: io.MultiReader(bytes.NewReader(read), r.Body), Closer: r.Body}
	if err != nil && err != io.EOF {
		return nil
	}
	return read
}

// content returns the content of r's body, decoded once as its
// Content-Encoding states (see decodeBody), or ok false when the body is
// not read (see body) or decodeBody does not read it.
func (f *requestFacts) content() (data []byte, ok bool) {
	b := &f.reqBody
	if !b.decodeDone {
		b.decodeDone = true
		raw, read := f.body()
		if b.decoded, ok = decodeBody(f.r.Header, raw); !read || !ok {
			b.decoded, b.undecoded = nil, true
		}
	}
	return b.decoded, !b.undecoded
}

// bodyOf returns the body as rd reads it: as sent, or its content.
func (f *requestFacts) bodyOf(rd bodyReading) ([]byte, bool) {
	if rd == bodyDecoded {
		return f.content()
	}
	return f.body()
}

// replayedBody is a request body whose first bytes were read for a key.
type replayedBody struct {
	io.Reader
	io.Closer
}

// formValue returns the value of the form field name of the query string
// and of an application/x-www-form-urlencoded or multipart/form-data body
// (its fields, not its files), or "". Go's r.FormValue, Rails' params,
// Laravel's input(), PHP's $_REQUEST and Spring's getParameter read such a
// field from either (Go and Rails the body first, Spring the query first),
// ASP.NET Core by its name in any case, and PHP (so Laravel) under the
// name it gives the field ("user.email" is user_email there): so a field
// is matched by name in any case or as PHP names it (see
// querypair.SameName), in both. Its value is read without the whitespace
// around it, which Laravel, Devise and Django drop (see trimValue). A
// field given more than once (in one or both, under one casing or several,
// or under names PHP reads as one) with values that differ (but for case)
// is ambiguous: upstreams read different ones (Go the first, Django, Rails
// and PHP the last), so that no value of it is the one the upstream acts
// on. So is the field of a form body that could not be read (see
// readForm), or of a pair url.ParseQuery refuses but another upstream
// reads (see querypair): the field may be there, read by the upstream.
// The field of a body with a content coding is read both as sent and
// decoded, as upstreams read it one way or the other (see eitherReading),
// and that of any body both as a form and as JSON, as Rails' params and
// Laravel's input() read it from whichever the client sends: as JSON it
// is the object's member of that name, in any case (see bothReadings). A
// request whose Body is nil describes one whose body is elsewhere
// (forward-auth's): it has no field, the query unread, since a query
// value alone would let the client pick its count while the upstream
// reads the body.
func (f *requestFacts) formValue(name string) (v string, ambiguous bool) {
	if f.r.Body == nil {
		return "", false
	}
	if contentCoding(f.r.Header) == codingNone {
		one := f.formField(bodyPlain, name)
		return one.value()
	}
	return eitherReading(f.formField(bodySent, name), f.formField(bodyDecoded, name))
}

// formField returns the values of the form field name (see formValue) in
// the query and in the body as rd reads it, in both its readings (see
// bothReadings): as a form, and as JSON, where the field is the object's
// member of that name, in any case, and the member at the path a
// bracketed name nests (see jsonPathOf): Rails' params and Laravel's
// input() read the form field user[email] and the JSON body
// {"user":{"email":…}} alike, and Express's req.body, of a form parsed
// without nesting and of a JSON body, the member "user[email]".
func (f *requestFacts) formField(rd bodyReading, name string) fieldValues {
	one := f.bothReadings(rd, name, name, "", false)
	if path, ok := jsonPathOf(name); ok && !one.ambiguous {
		head, rest, _ := strings.Cut(path, ".")
		f.addJSONMember(&one, rd, head, rest, true)
	}
	return one
}

// formReading returns the values of the form field name in the query, up
// to a "#" as queryValue reads it (see queryValues), and in the body as rd
// reads it as a form (see readForm).
func (f *requestFacts) formReading(rd bodyReading, name string) (one fieldValues) {
	fs := f.reqBody.fields(rd)
	if !fs.formDone {
		fs.formDone = true
		fs.formLost = !f.readForm(rd)
	}
	if fs.formLost || !one.addPairs(fs.formText, name) || !queryValues(f.rawQuery(), name, one.add) {
		one.ambiguous = true
		return one
	}
	one.addFields(fs.form, name)
	return one
}

// readForm reads r's body, as rd reads it, for formValue when it is a
// form: the text of an application/x-www-form-urlencoded body, its pairs
// however many (the bound on its bytes bounds them), or the fields of a
// multipart one of any subtype (see multipartFields), as Rack reads
// multipart/mixed and multipart/related as multipart/form-data. A
// multipart body without a boundary is an urlencoded one, as Rack reads
// it. It reports false for a form body that could not be read whole:
// longer than MaxKeyBody, of content not decoded (see content), or a
// multipart body that does not read to its end, whose boundary is unknown
// (see mediaTypeParams) or that PHP or Rack read of another boundary (see
// boundariesAgree). An untyped POST body is an
// application/x-www-form-urlencoded one, as Rack reads it (see
// untypedPOST). A body of another type, or none, is no form; so is a
// multipart body read as sent, of a content coding, in which its
// boundary's delimiter does not occur: no reader finds a part there.
func (f *requestFacts) readForm(rd bodyReading) bool {
	fs := f.reqBody.fields(rd)
	t, params, parsed := mediaTypeParams(f.r)
	if untypedPOST(f.r) {
		t = "application/x-www-form-urlencoded"
	}
	if strings.HasPrefix(t, "multipart/") {
		switch body, ok := f.bodyOf(rd); {
		case !ok:
			return false
		case len(body) == 0:
			return true
		case !parsed: // PHP and Rack find a boundary in what Go does not parse
			return false
		case !boundariesAgree(f.r.Header.Get("Content-Type"), params):
			return false
		case params["boundary"] == "": // Rack reads it as urlencoded
			fs.formText = string(body)
			return true
		case rd == bodySent && !bytes.Contains(body, []byte("--"+params["boundary"])):
			return true
		default:
			fs.form, ok = multipartFields(body, params["boundary"], t == "multipart/form-data")
			return ok
		}
	}
	if t == "application/x-www-form-urlencoded" {
		body, ok := f.bodyOf(rd)
		fs.formText = string(body)
		return ok
	}
	return true
}

// rawQuery returns r's query string.
func (f *requestFacts) rawQuery() string {
	if f.r.URL == nil {
		return ""
	}
	return f.r.URL.RawQuery
}

// fieldValues gathers the values one field of a request is given, wherever
// they are read from, and reports whether upstreams may read different
// ones.
type fieldValues struct {
	first            string
	found, ambiguous bool
}

// add adds a value of the field, without the whitespace around it (see
// trimValue): one that differs from the first but for case makes the
// field ambiguous (a key takes values in lower case).
func (fv *fieldValues) add(v string) {
	switch v = trimValue(v); {
	case !fv.found:
		fv.first, fv.found = v, true
	case !strings.EqualFold(v, fv.first):
		fv.ambiguous = true
	}
}

// addPairs adds the values of the pairs of raw, an
// application/x-www-form-urlencoded body, named name in any case or as PHP
// names them, decoded as url.ParseQuery decodes them, however many
// (url.ParseQuery refuses more than 10,000). It reports false when a pair
// url.ParseQuery refuses may be one of them to another upstream (see
// querypair.Values).
func (fv *fieldValues) addPairs(raw, name string) bool {
	return querypair.Values(raw, name, fv.add)
}

// addFields adds the values of the fields of vs named name, in any case or
// as PHP names them (see querypair.SameName). A field Rack 2 alone reads
// as name (see querypair.Rack2Named) makes the field ambiguous.
func (fv *fieldValues) addFields(vs url.Values, name string) {
	pn := phpname.Of(name)
	for k, kvs := range vs {
		switch {
		case querypair.SameName(k, name, pn):
			for _, v := range kvs {
				fv.add(v)
			}
		case querypair.Rack2Named(k, name):
			fv.ambiguous = true
		}
	}
}

// value returns the field's value ("" when it was given none), or
// ambiguous and "".
func (fv *fieldValues) value() (v string, ambiguous bool) {
	if fv.ambiguous {
		return "", true
	}
	return fv.first, false
}

// maxFormParts bounds the parts of a multipart/form-data body read for a
// key: a body of MaxKeyBody bytes holds fewer fields worth reading.
const maxFormParts = 1000

// multipartFields returns the fields of a multipart/form-data body under
// the names each of Go, Rack 2.2, Rack 3 and, when php (PHP reads a
// multipart/form-data body alone), PHP reads them, a part that one of
// them reads as a file left out under its name alone: Go's Part.FormName
// (of form-data parts alone; a part with a filename, or a filename*0
// continuation that mime.ParseMediaType joins into one, is a file), the
// names Rack reads in the part's head (see rack2PartName, rack3PartName)
// whatever its disposition's type, a part without one named by its
// Content-ID, and the name PHP reads in the part's first
// Content-Disposition (see phpPartName). A part they name differently is
// the field of each name, so that values that differ under one make it
// ambiguous (see fieldValues). It reports false, and no fields, for a
// body that does not read to its final boundary (malformed or cut short,
// which PHP reads as far as it goes) or has more than maxFormParts parts:
// a field may be in what was not read; and for one whose parts Rack 2.2,
// Rack 3 or PHP delimits otherwise than mime/multipart, or Rack fails
// (see goParts, rackParts, phpParts), or, when php, with the boundary's
// dash within a part's content, where PHP may open a part of its own: a
// field may be in a part or a value one of them alone reads.
func multipartFields(body []byte, boundary string, php bool) (url.Values, bool) {
	raw := goParts(body, boundary)
	for _, rack3 := range [...]bool{false, true} {
		if parts, ok := rackParts(body, boundary, rack3); !ok || !sameParts(parts, raw) {
			return nil, false
		}
	}
	var phpNames []string
	if php {
		var parts []rawPart
		parts, phpNames = phpParts(body, boundary, len(raw)+1)
		if !sameParts(parts, raw) || slices.ContainsFunc(raw, func(p rawPart) bool {
			return bytes.Contains(p.content, []byte("--"+boundary))
		}) {
			return nil, false
		}
	}
	form := url.Values{}
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	for parts := 0; ; parts++ {
		p, err := mr.NextPart()
		if err == io.EOF { // the final boundary; not wrapped, as a body cut short's is
			return form, parts == len(raw)
		}
		if err != nil || parts == maxFormParts || parts == len(raw) {
			return nil, false
		}
		var names [4]string
		if p.FileName() == "" {
			names[0] = p.FormName()
		}
		head := string(raw[parts].head)
		names[1], names[2] = rack2PartName(head), rack3PartName(head)
		if php {
			names[3] = phpNames[parts]
		}
		if names == [4]string{} {
			continue
		}
		v, err := io.ReadAll(p) // within the body, at most MaxKeyBody bytes
		if err != nil {
			return nil, false
		}
		// Go decodes a quoted-printable part; Rack and PHP read it as sent.
		values := [4]string{string(v), string(raw[parts].content)}
		values[2], values[3] = values[1], values[1]
		for i, n := range names {
			added := n == ""
			for j := range i {
				added = added || names[j] == n && values[j] == values[i]
			}
			if !added {
				form.Add(n, values[i])
			}
		}
	}
}

// mediaType returns r's Content-Type without parameters, in lower case.
func mediaType(r *http.Request) string {
	t, _, _ := mediaTypeParams(r)
	return t
}

// mediaTypeParams returns r's Content-Type in lower case and its
// parameters; "" when it has none. One that does not parse whole is still
// of its type, as Go's ParseForm reads one whose parameters do not parse
// and PHP and Rack one followed by anything after a ';', ',' or space: ok
// is false then, its parameters unknown. Whitespace around it, which an
// HTTP/2 request may carry to sluice and an HTTP/1.1 upstream's parser
// drops, is no part of it.
func mediaTypeParams(r *http.Request) (t string, params map[string]string, ok bool) {
	ct := strings.Trim(r.Header.Get("Content-Type"), " \t")
	t, params, err := mime.ParseMediaType(ct)
	if err == nil {
		return t, params, true
	}
	if i := strings.IndexAny(ct, ";, \t"); i >= 0 {
		ct = ct[:i]
	}
	return strings.ToLower(ct), nil, false
}
