package httplimit

import (
	"net/url"
	"strings"
)

// queryValue returns the first value of the query parameter name in the
// raw query, decoded, as url.ParseQuery would give it ("" when absent): it
// splits on "&", skips pairs that do not decode, and allocates only to
// decode a pair that has escapes. A parameter given more than once with
// values that differ is ambiguous: upstreams read different ones (Go the
// first, Django and Rails the last).
func queryValue(raw, name string) (first string, ambiguous bool) {
	found := false
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if strings.Contains(pair, ";") {
			continue // url.ParseQuery refuses a pair with a semicolon
		}
		k, v, _ := strings.Cut(pair, "=")
		if k == "" && v == "" {
			continue
		}
		if strings.ContainsAny(k, "%+") {
			var err error
			if k, err = url.QueryUnescape(k); err != nil {
				continue
			}
		}
		if k != name {
			continue
		}
		if strings.ContainsAny(v, "%+") {
			var err error
			if v, err = url.QueryUnescape(v); err != nil {
				continue
			}
		}
		switch {
		case !found:
			first, found = v, true
		case v != first:
			return first, true
		}
	}
	return first, false
}
