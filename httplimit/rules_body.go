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

// formValue returns the first value of the form field name of an
// application/x-www-form-urlencoded body, or "".
func (f *requestFacts) formValue(name string) string {
	b := &f.reqBody
	if !b.formDone {
		b.formDone = true
		if mediaType(f.r) == "application/x-www-form-urlencoded" {
			if body := f.body(); body != nil {
				b.form, _ = url.ParseQuery(string(body)) // the fields before a malformed one are kept
			}
		}
	}
	return b.form.Get(name)
}

// jsonValue returns the field at path (names joined by dots, as a claim's)
// of a JSON object body: a string as it is, a whole number, true or false;
// "" for anything else or a body that is not JSON.
func (f *requestFacts) jsonValue(path string) string {
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
			return ""
		}
		v = obj[name]
	}
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

// mediaType returns r's Content-Type without parameters, in lower case.
func mediaType(r *http.Request) string {
	t, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return ""
	}
	return t
}
