// The reverse proxy's upstream: its URL, as the proxy will use it.

package config

import (
	"net/url"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/internal/redact"
)

// upstream decodes the upstream's URL, its scheme (of any case) in lower
// case: http, https or h2c, with a host, and without what the reverse
// proxy would drop (credentials, a fragment) or add to every request (a
// query, which httputil.ProxyRequest.SetURL merges into each request's).
// An empty URL is refused: read as no upstream, the demo upstream would
// answer every request in the API's place. An error never shows the URL's
// password (redact.URL).
func (d *decoder) upstream(n *yaml.Node, p string) string {
	s := d.Str(n, p)
	if s == "" {
		if written(n) {
			d.Errorf(n, p, "empty: give the upstream's URL, or remove the line to serve the demo upstream")
		}
		return ""
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "h2c") || u.Hostname() == "" {
		d.Errorf(n, p, "%q is not an http://, https:// or h2c:// URL", redact.URL(s))
		return ""
	}
	switch {
	case u.User != nil:
		d.Errorf(n, p, "%q: credentials in the URL are never sent to the upstream: remove them", redact.URL(s))
		return ""
	case u.Fragment != "" || strings.HasSuffix(s, "#"):
		d.Errorf(n, p, "%q: a fragment is never sent to the upstream: remove it", redact.URL(s))
		return ""
	case u.RawQuery != "":
		bare := *u
		bare.RawQuery = ""
		d.Errorf(n, p, "%q with a query: a query in the upstream's URL is added to every proxied request, "+
			"beside the request's own: remove it (each request's query is sent as it came)", redact.URL(bare.String()))
		return ""
	}
	if port := u.Port(); port != "" {
		if num, err := strconv.Atoi(port); err != nil || num < 1 || num > 65535 {
			d.Errorf(n, p, "%q: port %s is not from 1 to 65535", redact.URL(s), port)
			return ""
		}
	}
	return u.Scheme + s[len(u.Scheme):] // the scheme in lower case, as url.Parse reads it
}
