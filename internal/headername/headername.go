// Package headername tells the name of a request header sluice can read
// (identity.user_header, a rule's header) from one no request carries.
package headername

import (
	"fmt"
	"net/http"

	"golang.org/x/net/http/httpguts"
)

// unseen are the request headers net/http takes out of
// http.Request.Header, by canonical name, and what each is instead.
var unseen = map[string]string{
	"Host":              "it is the request's host, which match.hosts and the key host read",
	"Transfer-Encoding": "it is how the body was framed",
}

// Unseen returns nil unless name, in any case, is a header net/http never
// leaves among a request's headers (Host, Transfer-Encoding), and then an
// error quoting its canonical name and saying what it is instead: a
// header to read by that name would be absent from every request.
func Unseen(name string) error {
	canonical := http.CanonicalHeaderKey(name)
	if why, ok := unseen[canonical]; ok {
		return fmt.Errorf("%q is never among a request's headers: %s", canonical, why)
	}
	return nil
}

// Check returns nil when name is the name of a request header to read: an
// RFC 9110 token (letters, digits and !#$%&'*+-.^_`|~, no space, colon or
// byte past ASCII) that Unseen does not refuse. Otherwise it returns an
// error quoting name and saying why.
func Check(name string) error {
	if !httpguts.ValidHeaderFieldName(name) {
		return fmt.Errorf("%q is not a valid header name", name)
	}
	return Unseen(name)
}
