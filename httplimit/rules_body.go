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
	done, formDone, jsonDone bool
	bytes                    []byte
	form                     url.Values
	json                     []byte // the body when it is of a JSON type
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

// formValue returns the value of the form field name of an
// application/x-www-form-urlencoded or multipart/form-data body (its
// fields, not its files), or "". A field given more than once with values
// that differ (but for case) is ambiguous: upstreams read different ones
// (Go the first, Django, Rails and PHP the last), so that no value of it
// is the one the upstream acts on.
func (f *requestFacts) formValue(name string) (v string, ambiguous bool) {
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
	vs := b.form[name]
	for _, o := range vs[min(1, len(vs)):] {
		if !strings.EqualFold(o, vs[0]) {
			return "", true
		}
	}
	return b.form.Get(name), false
}

// jsonValue returns the field at path (names joined by dots, as a claim's)
// of a JSON object body: a string as it is, a whole number, true or false;
// "" for anything else or a body that is not JSON. Each name is matched in
// any case, as encoding/json matches a struct's fields: a member under
// another casing alone is the field, and an object with two members of a
// name of path is ambiguous: of two the same, encoding/json and JavaScript
// read the last, gjson and jsonparser the first; of two differing only in
// case, a Go struct reads the last, other decoders the exact name.
func (f *requestFacts) jsonValue(path string) (value string, ambiguous bool) {
	b := &f.reqBody
	if !b.jsonDone {
		b.jsonDone = true
		if t := mediaType(f.r); t == "application/json" || strings.HasSuffix(t, "+json") {
			b.json = f.body()
		}
	}
	v, ambiguous := jsonMember(b.json, path)
	switch v := v.(type) {
	case string:
		return v, false
	case bool:
		if v {
			return "true", false
		}
		return "false", false
	case json.Number:
		if _, err := v.Int64(); err == nil {
			return v.String(), false
		}
	}
	return "", ambiguous
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
