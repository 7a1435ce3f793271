// The response section, and the public paths sluice answers itself.

package config

import (
	"fmt"
	"math"
	"path"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/httplimit"
)

func (d *decoder) response(n *yaml.Node, path string, r *Response, raw *rawConfig) {
	// body and template each say what a refusal's body is: one of them.
	var bodyAt *yaml.Node
	body := func(n *yaml.Node, p string) {
		if bodyAt != nil {
			d.Errorf(n, p, "the refusal's body is already set on line %d: set body or template, not both", bodyAt.Line)
		}
		bodyAt = n
	}
	d.Mapping(n, path, map[string]field{
		"headers": func(n *yaml.Node, p string) {
			d.emptyList(n, p, "ietf", "RateLimit headers are always sent (response.hide leaves limits out of them); list the modes, or leave headers out")
			r.Headers = d.Strings(n, p)
			raw.at("Headers", n, p)
		},
		"docs_url": func(n *yaml.Node, p string) {
			r.DocsURL = d.Str(n, p)
			raw.at("DocsURL", n, p)
		},
		"deny_status": func(n *yaml.Node, p string) {
			r.DenyStatus = int(d.Int(n, p, 400, 599))
		},
		"body": func(n *yaml.Node, p string) {
			body(n, p)
			switch d.OneOf(n, p, "problem", "error-code") {
			case "error-code":
				r.Template = httplimit.TemplateErrorCode
			}
			raw.at("RefusalTemplate", n, p)
		},
		"template": func(n *yaml.Node, p string) {
			body(n, p)
			r.Template = d.Str(n, p)
			raw.at("RefusalTemplate", n, p)
		},
		"hide": func(n *yaml.Node, p string) {
			d.List(n, p, func(i int, e *yaml.Node, p string) {
				r.Hide = append(r.Hide, d.Str(e, p))
				raw.at(fmt.Sprintf("HiddenLimits[%d]", i), e, p)
			})
		},
		"global_status": func(n *yaml.Node, p string) {
			// httplimit.Options.Validate judges the status; a 0 it would
			// read as the default is refused here, where it is written.
			before := len(d.Errs)
			r.GlobalStatus = int(d.Int(n, p, math.MinInt32, math.MaxInt32))
			if r.GlobalStatus == 0 && len(d.Errs) == before {
				d.Errorf(n, p, "0: a refusal by global limits is 429 or 503 (leave global_status out for 429)")
			}
			raw.at("GlobalStatus", n, p)
		},
		"retry_jitter": func(n *yaml.Node, p string) {
			r.RetryJitter = d.durationOrNone(n, p)
			raw.at("RetryJitter", n, p)
		},
		"status_path": func(n *yaml.Node, p string) { r.StatusPath = d.publicPath(n, p, raw) },
		"cors":        func(n *yaml.Node, p string) { d.cors(n, p, &r.CORS) },
	})
}

// publicPath decodes a path of the public listener that sluice answers
// itself (docs_path, health_path, response.status_path): "" for none, else
// a clean absolute path other than "/", usable as a ServeMux pattern's
// path. resolve checks that no two are the same (publicPathsDiffer).
func (d *decoder) publicPath(n *yaml.Node, p string, raw *rawConfig) string {
	s := d.Str(n, p)
	switch {
	case s == "":
	case !strings.HasPrefix(s, "/") || path.Clean(s) != s || strings.ContainsAny(s, "{}?#* \t"):
		d.Errorf(n, p, "%q is not a clean absolute path such as /rate_limit", s)
	case s == "/":
		d.Errorf(n, p, "%q is the upstream's: choose another path, such as /rate_limit", s)
	}
	if raw.publicPaths == nil {
		raw.publicPaths = map[string]*yaml.Node{}
	}
	raw.publicPaths[p] = n
	return s
}

// publicPathsDiffer reports a path of the public listener that sluice
// would answer for two things (docs_path, health_path, status_path), at
// the one read from the file.
func (d *decoder) publicPathsDiffer(c *Config, raw *rawConfig) {
	paths := []struct{ field, value string }{{"docs_path", c.DocsPath}, {"health_path", c.HealthPath},
		{"response.status_path", c.Response.StatusPath}}
	for i, a := range paths {
		for _, b := range paths[:i] {
			if a.value == "" || a.value != b.value {
				continue
			}
			at, other := a, b
			if raw.publicPaths[a.field] == nil {
				at, other = b, a
			}
			d.Errorf(raw.publicPaths[at.field], at.field, "%q is a path sluice serves otherwise (%s): choose another", at.value, other.field)
		}
	}
}
