package httplimit

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
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
	json                     map[string]any
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
// application/x-www-form-urlencoded body, or "". A field given more than
// once with values that differ (but for case) is ambiguous: upstreams read
// different ones (Go the first, Django, Rails and PHP the last), so that
// no value of it is the one the upstream acts on.
func (f *requestFacts) formValue(name string) (v string, ambiguous bool) {
	b := &f.reqBody
	if !b.formDone {
		b.formDone = true
		if mediaType(f.r) == "application/x-www-form-urlencoded" {
			if body := f.body(); body != nil {
				b.form, _ = url.ParseQuery(string(body)) // the fields before a malformed one are kept
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
// another casing alone is the field, and an object with two members that
// differ only in case at a name of path is ambiguous (a Go struct reads
// the last of them, other decoders the exact name).
func (f *requestFacts) jsonValue(path string) (value string, ambiguous bool) {
	b := &f.reqBody
	if !b.jsonDone {
		b.jsonDone = true
		if t := mediaType(f.r); t == "application/json" || strings.HasSuffix(t, "+json") {
			if body := f.body(); body != nil {
				d := json.NewDecoder(bytes.NewReader(body))
				d.UseNumber()
				var obj map[string]any
				if d.Decode(&obj) == nil {
					b.json = obj
				}
			}
		}
	}
	var v any = b.json
	for name := range strings.SplitSeq(path, ".") {
		obj, ok := v.(map[string]any)
		if !ok {
			return "", false
		}
		var found bool
		if v, found = obj[name]; !found || len(obj) > 1 {
			n := 0
			for k, kv := range obj {
				if strings.EqualFold(k, name) {
					n, v = n+1, kv
				}
			}
			if n > 1 {
				return "", true
			}
		}
	}
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
	return "", false
}

// mediaType returns r's Content-Type without parameters, in lower case.
func mediaType(r *http.Request) string {
	t, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return ""
	}
	return t
}
