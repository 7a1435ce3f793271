package config

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/yamlcheck"
)

// maxFileSize bounds a configuration file.
const maxFileSize = 4 << 20

// Load reads and validates the configuration file at path.
func Load(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("config: %s: %w", path, err)
	}
	return Parse(path, data)
}

// Parse validates the configuration in data; name is the file name used in
// errors. All problems found are returned together (joined *Error values;
// see Errors).
func Parse(name string, data []byte) (*Config, error) {
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
	d := &decoder{&yamlcheck.Decoder{File: name}}
	c := &Config{File: name, Listen: ":8080", Policy: &sluice.Policy{}, Keys: map[[32]byte]*Key{},
		Admin:       Admin{Listen: "127.0.0.1:9090", LoopbackScopes: ScopeRead},
		Connections: defaultConnections(),
		Designer:    Designer{MaxArrivals: 200_000, Timeout: 10 * time.Second}}
	raw := rawConfig{}
	d.Mapping(doc, "", map[string]field{
		"listen":      func(n *yaml.Node, p string) { c.Listen = d.address(n, p) },
		"tls":         func(n *yaml.Node, p string) { d.tls(n, p, &c.TLS, false) },
		"admin":       func(n *yaml.Node, p string) { d.admin(n, p, &c.Admin) },
		"connections": func(n *yaml.Node, p string) { d.connections(n, p, &c.Connections) },
		"designer":    func(n *yaml.Node, p string) { d.designer(n, p, &c.Designer) },
		"upstream":    func(n *yaml.Node, p string) { c.Upstream = d.upstream(n, p) },
		"store":       func(n *yaml.Node, p string) { d.store(n, p, &c.Store) },
		"identity":    func(n *yaml.Node, p string) { d.identity(n, p, &c.Identity) },
		"plans":       func(n *yaml.Node, p string) { raw.plans, raw.plansNode = d.plans(n, p), n },
		"default_plan": func(n *yaml.Node, p string) {
			c.Policy.DefaultPlan, raw.defaultNode = d.Str(n, p), n
		},
		"anonymous_plan": func(n *yaml.Node, p string) {
			c.Policy.AnonymousPlan, raw.anonNode = d.Str(n, p), n
		},
		"keys":        func(n *yaml.Node, p string) { raw.keys = d.keys(n, p) },
		"global":      func(n *yaml.Node, p string) { c.Policy.Global = d.limits(n, p) },
		"exempt":      func(n *yaml.Node, p string) { c.Exempt = d.patterns(n, p) },
		"response":    func(n *yaml.Node, p string) { d.response(n, p, &c.Response) },
		"degradation": func(n *yaml.Node, p string) { d.degradation(n, p, &c.Degradation) },
		"envoy":       func(n *yaml.Node, p string) { d.envoy(n, p, &c.Envoy) },
	})
	d.resolve(c, &raw, doc)
	if len(d.Errs) > 0 {
		return nil, errors.Join(d.Errs...)
	}
	return c, nil
}

// rawConfig holds what must be cross-checked once everything is read.
type rawConfig struct {
	plans                            []rawPlan
	plansNode, defaultNode, anonNode *yaml.Node
	keys                             []rawKey
}

type rawPlan struct {
	plan        *sluice.Plan
	costNodes   map[string]*yaml.Node
	node        *yaml.Node
	upgradeNode *yaml.Node
	path        string
}

type rawKey struct {
	key       *Key
	plan      string
	overrides []sluice.Limit
	node      *yaml.Node
	path      string
}

func (d *decoder) upstream(n *yaml.Node, p string) string {
	s := d.Str(n, p)
	if s == "" {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		d.Errorf(n, p, "%q is not an http(s) URL", s)
		return ""
	}
	return s
}

func (d *decoder) store(n *yaml.Node, path string, s *Store) {
	s.Type, s.MaxKeys = "memory", 1_000_000
	s.Redis = Redis{Mode: "standalone", Timeout: 50 * time.Millisecond, OnStoreError: "local", Instances: 1}
	d.Mapping(n, path, map[string]field{
		"type":     func(n *yaml.Node, p string) { s.Type = d.OneOf(n, p, "memory", "redis") },
		"max_keys": func(n *yaml.Node, p string) { s.MaxKeys = int(d.Int(n, p, 1, 1<<32)) },
		"redis": func(n *yaml.Node, path string) {
			r := &s.Redis
			d.Mapping(n, path, map[string]field{
				"mode":           func(n *yaml.Node, p string) { r.Mode = d.OneOf(n, p, "standalone", "sentinel", "cluster") },
				"addresses":      func(n *yaml.Node, p string) { r.Addresses = d.Strings(n, p) },
				"master_name":    func(n *yaml.Node, p string) { r.MasterName = d.Str(n, p) },
				"username":       func(n *yaml.Node, p string) { r.Username = d.Str(n, p) },
				"password":       func(n *yaml.Node, p string) { r.Password = d.Str(n, p) },
				"db":             func(n *yaml.Node, p string) { r.DB = int(d.Int(n, p, 0, 1<<16)) },
				"timeout":        func(n *yaml.Node, p string) { r.Timeout = d.Duration(n, p) },
				"on_store_error": func(n *yaml.Node, p string) { r.OnStoreError = d.OneOf(n, p, "local", "allow", "deny") },
				"instances":      func(n *yaml.Node, p string) { r.Instances = int(d.Int(n, p, 1, 10_000)) },
			})
			if len(r.Addresses) == 0 {
				d.Errorf(n, path+".addresses", "at least one address is needed")
			}
			if r.Mode == "sentinel" && r.MasterName == "" {
				d.Errorf(n, path+".master_name", "sentinel mode needs the master set's name")
			}
		},
	})
	if s.Type == "redis" && n != nil && !hasKey(n, "redis") {
		d.Errorf(n, path+".redis", "type redis needs a redis section with addresses")
	}
}

func (d *decoder) identity(n *yaml.Node, path string, id *Identity) {
	d.Mapping(n, path, map[string]field{
		"api_key_headers": func(n *yaml.Node, p string) { id.APIKeyHeaders = d.headerNames(n, p) },
		"user_header":     func(n *yaml.Node, p string) { id.UserHeader = d.headerName(n, p) },
		"plan_header":     func(n *yaml.Node, p string) { id.PlanHeader = d.headerName(n, p) },
		"trusted_proxies": func(n *yaml.Node, p string) { id.TrustedProxies = d.prefixes(n, p) },
		"forwarded_header": func(n *yaml.Node, p string) {
			id.ForwardedHeader = d.OneOf(n, p, "x-forwarded-for", "forwarded")
		},
		"ipv4_prefix":  func(n *yaml.Node, p string) { id.IPv4Prefix = int(d.Int(n, p, 1, 32)) },
		"ipv6_prefix":  func(n *yaml.Node, p string) { id.IPv6Prefix = int(d.Int(n, p, 1, 128)) },
		"unknown_keys": func(n *yaml.Node, p string) { id.UnknownKeys = d.OneOf(n, p, "ip", "key") },
	})
}

func (d *decoder) headerName(n *yaml.Node, p string) string {
	s := d.Str(n, p)
	if s != "" && !validToken(s) {
		d.Errorf(n, p, "%q is not a valid header name", s)
	}
	return http.CanonicalHeaderKey(s)
}

func (d *decoder) headerNames(n *yaml.Node, p string) []string {
	var out []string
	d.List(n, p, func(_ int, e *yaml.Node, p string) { out = append(out, d.headerName(e, p)) })
	return out
}

func (d *decoder) prefixes(n *yaml.Node, p string) []netip.Prefix {
	var out []netip.Prefix
	d.List(n, p, func(_ int, e *yaml.Node, p string) {
		s := d.Str(e, p)
		pfx, err := netip.ParsePrefix(s)
		if err != nil {
			addr, aerr := netip.ParseAddr(s)
			if aerr != nil {
				d.Errorf(e, p, "%q is not an IP address or CIDR prefix", s)
				return
			}
			pfx = netip.PrefixFrom(addr, addr.BitLen())
		}
		out = append(out, pfx.Masked())
	})
	return out
}

func (d *decoder) plans(n *yaml.Node, path string) []rawPlan {
	var out []rawPlan
	d.Entries(n, path, func(k, v *yaml.Node, p string) {
		if !sluice.ValidName(k.Value) {
			d.Errorf(k, p, "plan name %q must be 1-64 characters of A-Z a-z 0-9 . _ -", k.Value)
		}
		rp := rawPlan{plan: &sluice.Plan{Name: k.Value}, node: k, path: p}
		pl := rp.plan
		d.Mapping(v, p, map[string]field{
			"limits": func(n *yaml.Node, p string) { pl.Limits = d.limits(n, p) },
			"costs":  func(n *yaml.Node, p string) { pl.Costs, rp.costNodes = d.costs(n, p) },
			"upgrade": func(n *yaml.Node, path string) {
				pl.Upgrade = &sluice.Upgrade{}
				rp.upgradeNode = n
				d.Mapping(n, path, map[string]field{
					"plan": func(n *yaml.Node, p string) { pl.Upgrade.Plan = d.Str(n, p) },
					"url":  func(n *yaml.Node, p string) { pl.Upgrade.URL = d.Str(n, p) },
				})
			},
		})
		if v.Kind == yaml.MappingNode && !hasLimits(v) {
			d.Errorf(k, p+".limits", "a plan needs at least one limit")
		}
		out = append(out, rp)
	})
	return out
}

func (d *decoder) costs(n *yaml.Node, path string) (map[string]int64, map[string]*yaml.Node) {
	out, nodes := map[string]int64{}, map[string]*yaml.Node{}
	d.Entries(n, path, func(k, v *yaml.Node, p string) {
		if err := checkPattern(k.Value); err != nil {
			d.Errorf(k, p, "%v", err)
			return
		}
		out[k.Value], nodes[k.Value] = d.Int(v, p, 0, sluice.MaxQuantity), k
	})
	return out, nodes
}

func (d *decoder) patterns(n *yaml.Node, path string) []string {
	var out []string
	d.List(n, path, func(_ int, e *yaml.Node, p string) {
		s := d.Str(e, p)
		if err := checkPattern(s); err != nil {
			d.Errorf(e, p, "%v", err)
			return
		}
		out = append(out, s)
	})
	return out
}

func (d *decoder) keys(n *yaml.Node, path string) []rawKey {
	var out []rawKey
	d.List(n, path, func(_ int, e *yaml.Node, path string) {
		rk := rawKey{key: &Key{}, node: e, path: path}
		var hashNode *yaml.Node
		d.Mapping(e, path, map[string]field{
			"name": func(n *yaml.Node, p string) { rk.key.Name = d.Str(n, p) },
			"sha256": func(n *yaml.Node, p string) {
				hashNode = n
				s := d.Str(n, p)
				b, err := hex.DecodeString(s)
				if err != nil || len(b) != sha256.Size {
					d.Errorf(n, p, "want the 64 hex digits of the key's SHA-256 (e.g. `printf %%s KEY | sha256sum`), got %d characters", len(s))
					return
				}
				copy(rk.key.Hash[:], b)
			},
			"plan":   func(n *yaml.Node, p string) { rk.plan = d.Str(n, p) },
			"limits": func(n *yaml.Node, p string) { rk.overrides = d.limits(n, p) },
		})
		if hashNode == nil && e.Kind == yaml.MappingNode {
			d.Errorf(e, path+".sha256", "missing: a key is configured by its SHA-256, never in clear")
		}
		out = append(out, rk)
	})
	return out
}

func (d *decoder) response(n *yaml.Node, path string, r *Response) {
	d.Mapping(n, path, map[string]field{
		"headers": func(n *yaml.Node, p string) {
			r.Headers = nil
			for _, s := range d.Strings(n, p) {
				switch s {
				case "ietf", "draft-7", "draft-6", "legacy":
					r.Headers = append(r.Headers, s)
				default:
					d.Errorf(n, p, "%q is not a header mode (ietf, draft-7, draft-6, legacy)", s)
				}
			}
		},
		"docs_url": func(n *yaml.Node, p string) { r.DocsURL = d.Str(n, p) },
		"deny_status": func(n *yaml.Node, p string) {
			r.DenyStatus = int(d.Int(n, p, 400, 599))
		},
	})
}

// resolve applies defaults and cross-checks what refers to what.
func (d *decoder) resolve(c *Config, raw *rawConfig, root *yaml.Node) {
	if len(c.Response.Headers) == 0 {
		c.Response.Headers = []string{"ietf"}
	}
	if c.Response.DenyStatus == 0 {
		c.Response.DenyStatus = http.StatusTooManyRequests
	}
	if c.Store.Type == "" {
		d.store(nil, "store", &c.Store)
	}
	id := &c.Identity
	if id.APIKeyHeaders == nil {
		id.APIKeyHeaders = []string{"Authorization", "X-Api-Key"}
	}
	if id.ForwardedHeader == "" {
		id.ForwardedHeader = "x-forwarded-for"
	}
	if id.IPv4Prefix == 0 {
		id.IPv4Prefix = 32
	}
	if id.IPv6Prefix == 0 {
		id.IPv6Prefix = 64
	}
	if id.UnknownKeys == "" {
		id.UnknownKeys = "key"
		if len(raw.keys) > 0 {
			id.UnknownKeys = "ip"
		}
	}

	byName := map[string]*sluice.Plan{}
	for _, rp := range raw.plans {
		c.Policy.Plans = append(c.Policy.Plans, rp.plan)
		byName[rp.plan.Name] = rp.plan
	}
	if len(raw.plans) == 0 {
		d.Errorf(raw.plansNode, "plans", "at least one plan is needed (see examples/sluice.yaml)")
		if raw.plansNode == nil {
			d.Errs[len(d.Errs)-1].(*Error).Line, d.Errs[len(d.Errs)-1].(*Error).Col = root.Line, root.Column
		}
	}
	for _, rp := range raw.plans {
		if u := rp.plan.Upgrade; u != nil {
			if byName[u.Plan] == nil {
				d.Errorf(rp.upgradeNode, rp.path+".upgrade.plan", "%q is not a plan (plans: %s)", u.Plan, planNames(raw.plans))
			}
			if u.URL != "" {
				if pu, err := url.Parse(u.URL); err != nil || pu.Scheme == "" {
					d.Errorf(rp.upgradeNode, rp.path+".upgrade.url", "%q is not an absolute URL", u.URL)
				}
			}
		}
		for ep, cost := range rp.plan.Costs {
			for _, l := range append(rp.plan.Limits[:len(rp.plan.Limits):len(rp.plan.Limits)], c.Policy.Global...) {
				if cost > l.Burst() {
					d.Errorf(rp.costNodes[ep], rp.path+".costs."+ep,
						"costs %d, more than limit %s can ever hold (%d): such requests could never be admitted", cost, l.Name(), l.Burst())
					break
				}
			}
		}
		for _, l := range rp.plan.Limits {
			for _, g := range c.Policy.Global {
				if l.Name() == g.Name() {
					d.Errorf(rp.node, rp.path+".limits", "limit %q has the name of a global limit (names identify limits in headers and problem bodies)", l.Name())
				}
			}
		}
		if n := len(rp.plan.Limits) + len(c.Policy.Global); n > sluice.MaxChecks {
			d.Errorf(rp.node, rp.path, "%d limits with the global ones, at most %d", n, sluice.MaxChecks)
		}
	}
	ref := func(name string, n *yaml.Node, path string) {
		if name != "" && byName[name] == nil && len(raw.plans) > 0 {
			d.Errorf(n, path, "%q is not a plan (plans: %s)", name, planNames(raw.plans))
		}
	}
	if c.Policy.DefaultPlan == "" && len(raw.plans) > 0 {
		c.Policy.DefaultPlan = raw.plans[0].plan.Name
	}
	if c.Policy.AnonymousPlan == "" {
		c.Policy.AnonymousPlan = c.Policy.DefaultPlan
	}
	ref(c.Policy.DefaultPlan, raw.defaultNode, "default_plan")
	ref(c.Policy.AnonymousPlan, raw.anonNode, "anonymous_plan")

	for _, rk := range raw.keys {
		base := byName[rk.plan]
		if rk.plan == "" {
			base = byName[c.Policy.DefaultPlan]
		} else if base == nil {
			ref(rk.plan, rk.node, rk.path+".plan")
			continue
		}
		if base == nil {
			continue
		}
		if _, dup := c.Keys[rk.key.Hash]; dup {
			d.Errorf(rk.node, rk.path+".sha256", "the same key is configured twice")
			continue
		}
		rk.key.Plan = withOverrides(base, rk.overrides)
		c.Keys[rk.key.Hash] = rk.key
	}
	if err := c.Policy.Validate(); err != nil && len(d.Errs) == 0 {
		// Everything reported above has a place; this is a safety net for
		// rules that only the policy knows.
		d.Errorf(nil, "", "%v", err)
	}
}

// withOverrides returns base with the limits of overrides replacing those of
// the same name and adding the others.
func withOverrides(base *sluice.Plan, overrides []sluice.Limit) *sluice.Plan {
	if len(overrides) == 0 {
		return base
	}
	p := *base
	p.Limits = append([]sluice.Limit(nil), base.Limits...)
	for _, o := range overrides {
		replaced := false
		for i := range p.Limits {
			if p.Limits[i].Name() == o.Name() {
				p.Limits[i], replaced = o, true
			}
		}
		if !replaced {
			p.Limits = append(p.Limits, o)
		}
	}
	return &p
}

func planNames(plans []rawPlan) string {
	var names []string
	for _, p := range plans {
		names = append(names, p.plan.Name)
	}
	return fmt.Sprint(names)
}

// hasLimits reports whether the plan mapping n lists at least one limit.
func hasLimits(n *yaml.Node) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "limits" {
			return len(n.Content[i+1].Content) > 0
		}
	}
	return false
}

func hasKey(n *yaml.Node, key string) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}

// checkPattern reports whether s is a valid net/http ServeMux pattern.
// ServeMux panics on invalid patterns; the panic is turned into an error.
func checkPattern(s string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%q is not a ServeMux pattern (e.g. \"POST /api/generate\", \"GET /items/{id}\"): %v", s, r)
		}
	}()
	http.NewServeMux().Handle(s, http.NotFoundHandler())
	return nil
}
