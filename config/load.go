// Reading a configuration: Load, Parse, and its errors in the order a reader meets them.

package config

import (
	"cmp"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/internal/boundedfile"
	"github.com/sluice-dev/sluice/internal/yamlcheck"
)

// maxFileSize bounds a configuration file.
const maxFileSize = 4 << 20

// Load reads and validates the configuration file at path, a regular file
// (or a link to one) of at most 4 MiB: a pipe or a device is an error, not
// a read that waits.
func Load(path string) (*Config, error) {
	data, err := boundedfile.Read(path, maxFileSize)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	c, err := Parse(path, data)
	if err == nil {
		c.Read[filepath.Clean(path)] = sha256.Sum256(data)
	}
	return c, err
}

// Parse validates the configuration in data; name is the file name used in
// errors. All problems found are returned together (joined *Error values;
// see Errors).
func Parse(name string, data []byte) (*Config, error) { return parse(name, data, false) }

// parse is Parse, reading no file the configuration names when unread (see
// CheckWithoutFiles).
func parse(name string, data []byte, unread bool) (*Config, error) {
	if len(data) > maxFileSize {
		return nil, &Error{File: name, Msg: fmt.Sprintf("larger than %d bytes", maxFileSize)}
	}
	doc, err := yamlcheck.Parse(name, data)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{File: name, Msg: "empty configuration (see examples/sluice.yaml)"}
		}
		return nil, err
	}
	d := &decoder{Decoder: &yamlcheck.Decoder{File: name}, leases: map[string]string{}, leaseAuto: &[]leaseAt{}, read: map[string][32]byte{}, unread: unread}
	if d.unexpanded(doc, ""); len(d.Errs) > 0 {
		return nil, d.Err()
	}
	c := &Config{File: name, Read: d.read, Listen: ":8080", DocsPath: "/docs", HealthPath: "/healthz",
		Policy: &httplimit.Policy{}, Keys: map[[32]byte]*Key{},
		Admin:       Admin{Listen: "127.0.0.1:9090", LoopbackScopes: ScopeRead},
		Connections: defaultConnections(),
		Designer:    Designer{MaxArrivals: 200_000, Timeout: 10 * time.Second},
		Shutdown:    Shutdown{Drain: 10 * time.Second},
		Log:         Log{RefusalsPerSecond: 10}}
	raw := rawConfig{}
	var upstreamTLS *yaml.Node
	d.Mapping(doc, "", map[string]field{
		"listen":         func(n *yaml.Node, p string) { c.Listen = d.address(n, p) },
		"docs_path":      func(n *yaml.Node, p string) { c.DocsPath = d.publicPath(n, p, &raw) },
		"health_path":    func(n *yaml.Node, p string) { c.HealthPath = d.publicPath(n, p, &raw) },
		"tls":            func(n *yaml.Node, p string) { d.tls(n, p, &c.TLS, false) },
		"proxy_protocol": func(n *yaml.Node, p string) { c.ProxyProtocol = d.prefixes(n, p) },
		"admin":          func(n *yaml.Node, p string) { d.admin(n, p, &c.Admin) },
		"connections":    func(n *yaml.Node, p string) { d.connections(n, p, &c.Connections) },
		"designer":       func(n *yaml.Node, p string) { d.designer(n, p, &c.Designer) },
		"shutdown":       func(n *yaml.Node, p string) { d.shutdown(n, p, &c.Shutdown) },
		"upstream":       func(n *yaml.Node, p string) { c.Upstream = d.upstream(n, p) },
		"preserve_host":  func(n *yaml.Node, p string) { c.PreserveHost = d.Bool(n, p) },
		"upstream_tls": func(n *yaml.Node, p string) {
			d.clientTLS(n, p, &c.UpstreamTLS)
			upstreamTLS = n
		},
		"store":    func(n *yaml.Node, p string) { d.store(n, p, &c.Store) },
		"identity": func(n *yaml.Node, p string) { d.identity(n, p, &c.Identity, &raw) },
		"plans":    func(n *yaml.Node, p string) { raw.plans, raw.plansNode = d.plans(n, p), n },
		"default_plan": func(n *yaml.Node, p string) {
			c.Policy.DefaultPlan = d.Str(n, p)
			raw.at("DefaultPlan", n, p)
		},
		"anonymous_plan": func(n *yaml.Node, p string) {
			c.Policy.AnonymousPlan = d.Str(n, p)
			raw.at("AnonymousPlan", n, p)
		},
		"keys": func(n *yaml.Node, p string) { raw.keys = append(d.keys(n, p), raw.keys...) },
		"keys_file": func(n *yaml.Node, p string) {
			if c.KeysFile = d.file(n, p); c.KeysFile != "" {
				raw.keys = append(raw.keys, d.keysFile(n, c.KeysFile)...)
			}
		},
		"global": func(n *yaml.Node, p string) {
			before := len(d.Errs)
			c.Policy.Global = d.limits(n, p)
			raw.at("Global", n, p)
			raw.refused("Global", len(d.Errs) > before)
			raw.eachAt("Global", n, p, len(d.Errs) > before)
		},
		"exempt":      func(n *yaml.Node, p string) { d.exempt(n, p, c, &raw) },
		"rules":       func(n *yaml.Node, p string) { c.Rules = d.rules(n, p, &raw) },
		"penalty":     func(n *yaml.Node, p string) { d.penalty(n, p, &c.Penalty, &raw) },
		"response":    func(n *yaml.Node, p string) { d.response(n, p, &c.Response, &raw) },
		"degradation": func(n *yaml.Node, p string) { d.degradation(n, p, &c.Degradation) },
		"envoy":       func(n *yaml.Node, p string) { d.envoy(n, p, &c.Envoy, &raw) },
		"notify":      func(n *yaml.Node, p string) { d.notify(n, p, &c.Notify) },
		"settle":      func(n *yaml.Node, p string) { d.settle(n, p, &c.Settle) },
		"log": func(n *yaml.Node, p string) {
			d.Mapping(n, p, map[string]field{
				"refusals_per_second": func(n *yaml.Node, p string) { c.Log.RefusalsPerSecond = int(d.Int(n, p, 0, 10_000)) },
			})
		},
	})
	if upstreamTLS != nil && c.UpstreamTLS.Enabled && !strings.HasPrefix(c.Upstream, "https://") {
		d.Errorf(upstreamTLS, "upstream_tls", "TLS to the upstream needs an https:// upstream")
	}
	d.resolve(c, &raw, doc)
	d.resolveNotify(c)
	if len(d.Errs) > 0 {
		inFileOrder(name, d.Errs)
		return nil, d.Err()
	}
	return c, nil
}

// inFileOrder sorts errs, each an *Error, as a reader meets them: those of
// the configuration (named name) first, then those of each other file (the
// keys file), each by line and column; an error of no single place comes
// first in its file.
func inFileOrder(name string, errs []error) {
	slices.SortStableFunc(errs, func(a, b error) int {
		ea, _ := a.(*Error)
		eb, _ := b.(*Error)
		if ea == nil || eb == nil {
			return 0
		}
		if (ea.File == name) != (eb.File == name) {
			if ea.File == name {
				return -1
			}
			return 1
		}
		return cmp.Or(strings.Compare(ea.File, eb.File), cmp.Compare(ea.Line, eb.Line), cmp.Compare(ea.Col, eb.Col))
	})
}
