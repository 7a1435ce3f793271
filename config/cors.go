package config

import (
	"net/url"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/internal/redact"
)

// CORS says which browser origins may read the responses sluice makes
// itself on the public listener (a refusal, the client's standing at
// response.status_path, a degraded level's 503) and the RateLimit headers
// and Retry-After of the upstream's answers. A page of another origin
// reads none of them otherwise: the browser hides a response without
// Access-Control-Allow-Origin from its script, which sees a network error
// in place of a 429.
type CORS struct {
	// Origins are the origins allowed, each "scheme://host[:port]" (no
	// port for the scheme's default, as browsers send none), a
	// host starting with "*." for every name under it
	// ("https://*.example.com", not example.com itself), or "*" alone for
	// any origin. Empty: none (no CORS header is added).
	Origins []string
	// Credentials: the pages send credentials (cookies, Authorization) with
	// their requests, so sluice's responses carry
	// Access-Control-Allow-Credentials: true. Not with "*".
	Credentials bool
}

// Allows returns the Access-Control-Allow-Origin value for a request
// whose Origin header is origin: origin itself when one of Origins matches
// it, "*" for any origin when Origins is "*" (without Credentials), or ""
// when the origin may not read sluice's responses.
func (c *CORS) Allows(origin string) string {
	if origin == "" || origin == "null" {
		return ""
	}
	for _, o := range c.Origins {
		switch {
		case o == "*":
			return "*"
		case strings.EqualFold(o, origin):
			return origin
		case strings.Contains(o, "://*."):
			scheme, suffix, _ := strings.Cut(o, "://*")
			rest, ok := strings.CutPrefix(strings.ToLower(origin), strings.ToLower(scheme)+"://")
			if ok && len(rest) > len(suffix) && strings.HasSuffix(rest, strings.ToLower(suffix)) && hostPort(rest) {
				return origin
			}
		}
	}
	return ""
}

// hostPort reports whether s, in lower case, is made of what an origin's
// host and port are: letters, digits, '.', '-', ':' and an IPv6 address's
// brackets (a browser sends a name in its ASCII, punycode, form).
func hostPort(s string) bool {
	return strings.Trim(s, "abcdefghijklmnopqrstuvwxyz0123456789.-:[]") == ""
}

func (d *decoder) cors(n *yaml.Node, path string, c *CORS) {
	var credentials *yaml.Node
	d.Mapping(n, path, map[string]field{
		"origins": func(n *yaml.Node, p string) {
			d.List(n, p, func(i int, e *yaml.Node, p string) {
				o := d.Str(e, p)
				if o == "*" {
					c.Origins = append(c.Origins, o)
					return
				}
				u, err := url.Parse(strings.Replace(o, "://*.", "://x.", 1))
				if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Path != "" || u.RawQuery != "" ||
					u.Fragment != "" || u.User != nil || strings.HasSuffix(o, "/") || strings.Count(o, "*") > 1 {
					d.Errorf(e, p, "%q is not an origin: want scheme://host[:port] (https://app.example.com), a host under *. (https://*.example.com), or *", redact.URL(o))
					return
				}
				if !hostPort(strings.ToLower(u.Host)) {
					d.Errorf(e, p, "%q: write the host as browsers send it, in ASCII (punycode: https://xn--bcher-kva.example)", o)
					return
				}
				if port := u.Port(); u.Scheme == "https" && port == "443" || u.Scheme == "http" && port == "80" {
					d.Errorf(e, p, "%q: browsers send an origin without its scheme's default port: write %q", o, strings.TrimSuffix(o, ":"+port))
					return
				}
				c.Origins = append(c.Origins, o)
			})
		},
		"credentials": func(n *yaml.Node, p string) {
			c.Credentials, credentials = d.Bool(n, p), n
		},
	})
	if c.Credentials && slices.Contains(c.Origins, "*") {
		d.Errorf(credentials, path+".credentials", "origins * allows any page, which browsers refuse with credentials: list the origins")
	}
}
