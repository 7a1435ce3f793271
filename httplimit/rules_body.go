package httplimit

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
)

// MaxKeyBody is the most bytes of a request's body read for a rule's key
// of its form or JSON fields (KeyForm, KeyJSON): a longer body has no
// such field, and its key falls back as the rule's Fallback says.
const MaxKeyBody = 64 << 10

// maxJSONDepth is the most names a KeyJSON path has ("user.email" has two).
const maxJSONDepth = 4

// requestBody is what rule keys read of a request's body, once: its bytes
// and, parsed when first needed, its form or JSON fields.
type requestBody struct {
	done, formDone, jsonDone, queryDone bool
	bytes                               []byte
	form                                url.Values
	json                                []byte     // the body when it is of a JSON type
	query                               url.Values // the query string's parameters
}

// body returns r's body, read once, when it is at most MaxKeyBody bytes;
// nil otherwise. The handler that serves r still reads the whole body: r.Body
// is replaced by what was read followed by the rest, closed with the
// original.
func (f *requestFacts) body() []byte {
	b := &f.reqBody
	if b.done {
		return b.bytes
	}
	b.done = true
	r := f.r
	if f.client || r.Body == nil || r.Body == http.NoBody || r.ContentLength > MaxKeyBody {
		return nil
	}
	read, err := io.ReadAll(io.LimitReader(r.Body, MaxKeyBody+1))
	r.Body = replayedBody{Reader: io.MultiReader(bytes.NewReader(read), r.Body), Closer: r.Body}
	if err != nil || len(read) > MaxKeyBody {
		return nil
	}
	b.bytes = read
	return read
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
// is matched by name in any case or as PHP names it (see sameName), in
// both. Its value is read without the whitespace around it, which
// Laravel, Devise and Django drop (see trimValue). A field given more
// than once (in one or both, under one casing or several, or under names
// PHP reads as one) with values that differ (but for case) is
// ambiguous: upstreams read different ones (Go the first, Django, Rails
// and PHP the last), so that no value of it is the one the upstream acts
// on. A request whose Body is nil describes one whose body is elsewhere
// (forward-auth's): it has no field, the query unread, since a query
// value alone would let the client pick its count while the upstream
// reads the body.
func (f *requestFacts) formValue(name string) (v string, ambiguous bool) {
	if f.r.Body == nil {
		return "", false
	}
	b := &f.reqBody
	if !b.formDone {
		b.formDone = true
		switch t, params := mediaTypeParams(f.r); t {
		case "application/x-www-form-urlencoded":
			if body := f.body(); body != nil {
				b.form, _ = url.ParseQuery(string(body)) // the fields before a malformed one are kept
			}
		case "multipart/form-data":
			if body := f.body(); body != nil && params["boundary"] != "" {
				b.form = multipartFields(body, params["boundary"])
			}
		}
	}
	var one fieldValues
	one.addFields(b.form, name)
	one.addFields(f.queryParams(), name)
	return one.value()
}

// jsonValue returns the field at path (names joined by dots, as a claim's)
// of a JSON object body, after one leading byte order mark (see
// withoutBOM): a string without the whitespace around it (see trimValue),
// a whole number, true or false; "" for anything else or a body that is
// not JSON. Each name is matched in any case, as encoding/json matches a
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
// with values that differ (but for case) are ambiguous. A request whose
// Body is nil has no field, the query unread, as for formValue.
func (f *requestFacts) jsonValue(path string) (value string, ambiguous bool) {
	if f.r.Body == nil {
		return "", false
	}
	b := &f.reqBody
	if !b.jsonDone {
		b.jsonDone = true
		if t := mediaType(f.r); t == "application/json" || strings.HasSuffix(t, "+json") {
			b.json = withoutBOM(f.body())
		}
	}
	v, ambiguous := jsonMember(b.json, path)
	if ambiguous {
		return "", true
	}
	var one fieldValues
	if s := jsonScalar(v); s != "" {
		one.add(s)
	}
	one.addFields(f.queryParams(), queryName(path))
	return one.value()
}

// withoutBOM returns body without one leading UTF-8 byte order mark, which
// Express, ASP.NET Core, Jackson and Python's json.loads skip before a
// JSON text (encoding/json refuses it).
func withoutBOM(body []byte) []byte {
	if len(body) >= 3 && string(body[:3]) == "\uFEFF" {
		return body[3:]
	}
	return body
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

// queryParams returns the parameters of r's query string, parsed once as
// url.ParseQuery (and so r.FormValue) reads them.
func (f *requestFacts) queryParams() url.Values {
	b := &f.reqBody
	if !b.queryDone {
		b.queryDone = true
		if f.r.URL != nil && f.r.URL.RawQuery != "" {
			b.query, _ = url.ParseQuery(f.r.URL.RawQuery) // the parameters before a malformed one are kept
		}
	}
	return b.query
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

// addFields adds the values of the fields of vs named name, in any case or
// as PHP names them (see sameName).
func (fv *fieldValues) addFields(vs url.Values, name string) {
	pn := phpVarOf(name)
	for k, kvs := range vs {
		if sameVar(k, name, pn) {
			for _, v := range kvs {
				fv.add(v)
			}
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

// jsonMember returns the member at path of the JSON object data, decoded
// (numbers as json.Number), or nil when data is no JSON object or has no
// such member; ambiguous reports two members of a name of path (see
// jsonValue), and then the member is nil.
func jsonMember(data []byte, path string) (v any, ambiguous bool) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	name, rest, nested := strings.Cut(path, ".")
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

// maxFormParts bounds the parts of a multipart/form-data body read for a
// key: a body of MaxKeyBody bytes holds fewer fields worth reading.
const maxFormParts = 1000

// multipartFields returns the fields of a multipart/form-data body, its
// files left out, as far as it reads: the fields before a malformed part
// are kept, as url.ParseQuery keeps those of a form.
func multipartFields(body []byte, boundary string) url.Values {
	form := url.Values{}
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	for range maxFormParts {
		p, err := mr.NextPart()
		if err != nil {
			break
		}
		name := p.FormName()
		if name == "" || p.FileName() != "" {
			continue
		}
		v, err := io.ReadAll(p) // within the body, at most MaxKeyBody bytes
		if err != nil {
			break
		}
		form.Add(name, string(v))
	}
	return form
}

// mediaType returns r's Content-Type without parameters, in lower case.
func mediaType(r *http.Request) string {
	t, _ := mediaTypeParams(r)
	return t
}

// mediaTypeParams returns r's Content-Type in lower case and its
// parameters; "" and nil when it is none.
func mediaTypeParams(r *http.Request) (string, map[string]string) {
	t, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return "", nil
	}
	return t, params
}
