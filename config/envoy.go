package config

import (
	"path/filepath"

	"go.yaml.in/yaml/v3"
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
}

func (d *decoder) envoy(n *yaml.Node, path string, e *Envoy, raw *rawConfig) {
	e.Enabled, e.Listen = true, "127.0.0.1:8081"
	d.Mapping(n, path, map[string]field{
		"listen": func(n *yaml.Node, p string) { e.Listen = d.address(n, p) },
		"rules":  func(n *yaml.Node, p string) { e.Rules = d.Strings(n, p) },
		"headers": func(n *yaml.Node, p string) {
			e.Headers = d.Str(n, p)
			raw.at(envoyFields+"Headers", n, p)
		},
	})
	if len(e.Rules) == 0 {
		d.Errorf(n, path+".rules", "at least one rules file or directory is needed")
	}
	for i, r := range e.Rules {
		if !filepath.IsAbs(r) {
			e.Rules[i] = filepath.Join(filepath.Dir(d.File), r)
		}
	}
}
