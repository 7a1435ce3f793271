package config

import (
	"fmt"
	"path/filepath"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/envoy"
)

// Envoy configures the Envoy rate limit service (gRPC).
type Envoy struct {
	// Enabled is true when the configuration has an envoy section.
	Enabled bool
	// Listen is the gRPC address, "127.0.0.1:8081" by default. Its callers
	// authenticate as the admin listener's do (Admin.Callers, the check
	// scope), and it takes the admin listener's TLS.
	Listen string
	// Rules are files or directories of rules in envoyproxy/ratelimit's
	// format, relative to the configuration file.
	Rules []string
	// Headers is the response_headers_to_add mode (envoy.Options.Headers):
	// "ietf", "draft-6" or "none"; Load sets "ietf" when the file says
	// nothing.
	Headers string
	// LimitHeader, RemainingHeader and ResetHeader rename the draft-6
	// headers (envoy.Options.LimitHeader and so on; limit_header,
	// remaining_header and reset_header, as envoyproxy/ratelimit's
	// LIMIT_LIMIT_HEADER, LIMIT_REMAINING_HEADER and LIMIT_RESET_HEADER),
	// set only with headers: draft-6. With draft-6, Load sets a name the
	// file leaves out to its default (RateLimit-Limit, RateLimit-Remaining,
	// RateLimit-Reset), so that each holds the name that is sent; with
	// another mode, which sends none of them, they are empty.
	LimitHeader, RemainingHeader, ResetHeader string
}

func (d *decoder) envoy(n *yaml.Node, path string, e *Envoy, raw *rawConfig) {
	e.Enabled, e.Listen = true, "127.0.0.1:8081"
	rulesRefused := false // an entry of rules was refused: its error says why
	d.Mapping(n, path, map[string]field{
		"listen": func(n *yaml.Node, p string) { e.Listen = d.address(n, p) },
		"rules": func(n *yaml.Node, p string) {
			before := len(d.Errs)
			e.Rules = d.rulePaths(n, p)
			rulesRefused = len(d.Errs) > before
		},
		"headers": func(n *yaml.Node, p string) {
			e.Headers = d.Str(n, p)
			raw.at(envoyFields+"Headers", n, p)
		},
		"limit_header": func(n *yaml.Node, p string) {
			e.LimitHeader = d.Str(n, p)
			raw.at(envoyFields+"LimitHeader", n, p)
		},
		"remaining_header": func(n *yaml.Node, p string) {
			e.RemainingHeader = d.Str(n, p)
			raw.at(envoyFields+"RemainingHeader", n, p)
		},
		"reset_header": func(n *yaml.Node, p string) {
			e.ResetHeader = d.Str(n, p)
			raw.at(envoyFields+"ResetHeader", n, p)
		},
	})
	// The names draft-6 sends, its defaults for those left out: the
	// other modes set none.
	o := envoy.Options{Headers: e.Headers, LimitHeader: e.LimitHeader, RemainingHeader: e.RemainingHeader, ResetHeader: e.ResetHeader}.WithDefaults()
	e.LimitHeader, e.RemainingHeader, e.ResetHeader = o.LimitHeader, o.RemainingHeader, o.ResetHeader
	if len(e.Rules) == 0 && !rulesRefused {
		d.Errorf(n, path+".rules", "at least one rules file or directory is needed")
	}
}

// rulePaths decodes envoy.rules, a path or a list of them, each made
// relative to the configuration's folder. An empty path (which would be
// that folder, the configuration included) and a path listed before (whose
// domains would be defined twice) are refused and left out.
func (d *decoder) rulePaths(n *yaml.Node, path string) []string {
	var out []string
	first := map[string]string{} // cleaned path → the entry that gave it
	each := func(e *yaml.Node, p string) {
		r := d.Str(e, p)
		if e.Kind != yaml.ScalarNode || e.Tag == "!!null" {
			return
		}
		if r == "" {
			d.Errorf(e, p, "empty: name a rules file or directory")
			return
		}
		abs := r
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(filepath.Dir(d.File), r)
		}
		if was, dup := first[abs]; dup {
			d.Errorf(e, p, "%q is %s again", r, was)
			return
		}
		first[abs] = fmt.Sprintf("%s (%q)", p, r)
		out = append(out, abs)
	}
	if n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
		each(n, path)
		return out
	}
	d.List(n, path, func(_ int, e *yaml.Node, p string) { each(e, p) })
	return out
}
