// Package formbody reads the fields of a multipart/form-data body that a
// limiter has read the first bytes of: httplimit's form: keys and the
// reverse proxy's _method parameter read the same fields of the same
// prefix.
package formbody

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/url"
)

// MaxParts bounds the parts of a body Multipart reads: a body of the 64 KiB
// a limiter reads holds fewer fields worth reading.
const MaxParts = 1000

// Multipart returns the fields of the multipart/form-data body (or the
// first bytes of one) whose parts boundary separates, its files left out,
// as far as it reads: the fields before a malformed or cut part are kept,
// as url.ParseQuery keeps those of a form, and at most MaxParts parts are
// read.
func Multipart(body []byte, boundary string) url.Values {
	form := url.Values{}
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	for range MaxParts {
		p, err := mr.NextPart()
		if err != nil {
			break
		}
		name := p.FormName()
		if name == "" || p.FileName() != "" {
			continue
		}
		v, err := io.ReadAll(p) // within the body
		if err != nil {
			break
		}
		form.Add(name, string(v))
	}
	return form
}
