package config

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice"
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
	d := &decoder{Decoder: &yamlcheck.Decoder{File: name}, leases: map[string]string{}, leaseAuto: &[]leaseAt{}}
	if d.unexpanded(doc, ""); len(d.Errs) > 0 {
		return nil, d.Err()
	}
	c := &Config{File: name, Listen: ":8080", DocsPath: "/docs", HealthPath: "/healthz",
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

// unexpanded reports each value of n that asks for an expansion sluice does
// not make, which would otherwise be read as the literal text: a tag of
// its own (password: !env REDIS_PASSWORD), an environment variable
// (${REDIS_PASSWORD}) or YAML's !!binary (the base64 of the bytes meant);
// none is expanded anywhere in the file. It reports too each key written
// as an alias (*name: …), which would be read as the anchor's name, not as
// the key it stands for.
func (d *decoder) unexpanded(n *yaml.Node, path string) {
	const instead = "write the value itself, or name a file that holds a secret (password_file, secret_file)"
	if strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") && n.Tag != "!" {
		d.Errorf(n, path, "the tag %s is not read here, and no variable is expanded: %s", n.Tag, instead)
		return
	}
	if n.Tag == "!!binary" {
		d.Errorf(n, path, "the tag !!binary is not decoded here: %s", instead)
		return
	}
	switch n.Kind {
	case yaml.ScalarNode:
		if envVariable(n.Value) && n.Tag == "!!str" {
			d.Errorf(n, path, "%q: environment variables are not expanded: %s", n.Value, instead)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; k.Kind == yaml.AliasNode {
				d.Errorf(k, path, "a key written as an alias (*%s), which is not expanded here: write the key out", k.Value)
				continue
			}
			d.unexpanded(n.Content[i], path)
			d.unexpanded(n.Content[i+1], yamlcheck.Join(path, n.Content[i].Value))
		}
	case yaml.SequenceNode:
		for i, e := range n.Content {
			d.unexpanded(e, fmt.Sprintf("%s[%d]", path, i))
		}
	}
}

// envVariable reports whether s holds a reference to an environment
// variable, as shells and Compose files write one: ${NAME}, or with a
// default or a message (${NAME:-default}, ${NAME-default}, ${NAME:?msg},
// ${NAME:+alt} …), alone or within the text ("${REDIS_HOST}:6379"). "$$"
// is a dollar, as Compose escapes one, so "$${NAME}" is none.
func envVariable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '$' {
			continue
		}
		if strings.HasPrefix(s[i:], "$$") {
			i++
			continue
		}
		if rest, ok := strings.CutPrefix(s[i:], "${"); ok && envReference(rest) {
			return true
		}
	}
	return false
}

// envReference reports whether s, what follows a "${", is a variable's
// name followed by "}" or by an operator of shell parameter expansion
// (:- - := = :? ? :+ +) and then, somewhere, "}".
func envReference(s string) bool {
	n := 0
	for n < len(s) && (s[n] == '_' || 'A' <= s[n] && s[n] <= 'Z' || 'a' <= s[n] && s[n] <= 'z' || n > 0 && '0' <= s[n] && s[n] <= '9') {
		n++
	}
	if n == 0 || n == len(s) {
		return false
	}
	rest := strings.TrimPrefix(s[n:], ":")
	switch {
	case s[n] == '}':
		return true
	case rest != "" && strings.ContainsRune("-=?+", rune(rest[0])):
		return strings.Contains(rest, "}")
	}
	return false
}

// rawConfig holds what must be cross-checked once everything is read, and
// where each field of httplimit.Options came from.
type rawConfig struct {
	plans     []rawPlan
	plansNode *yaml.Node
	keys      []rawKey
	// locs maps a field path of httplimit.Options ("DefaultPlan",
	// "Plans[0].Upgrade.Plan") to the node and path it was read from.
	locs map[string]location
	// publicPaths are the nodes docs_path, health_path and
	// response.status_path were read from, by field path (publicPath).
	publicPaths map[string]*yaml.Node
	// partial holds the fields the decoder refused part of (a list of
	// limits with an invalid one left out): what is said of them whole
	// ("a plan needs at least one limit") would follow from that refusal.
	partial map[string]bool
}

// refused records that the decoder refused part of field, if it did.
func (raw *rawConfig) refused(field string, did bool) {
	if !did {
		return
	}
	if raw.partial == nil {
		raw.partial = map[string]bool{}
	}
	raw.partial[field] = true
}

// location is where a value was read: its node and field path.
type location struct {
	node *yaml.Node
	path string
	file string // "" for the configuration's own, else the keys file
}

// at records that the field of httplimit.Options at field was read from n at path.
func (raw *rawConfig) at(field string, n *yaml.Node, path string) { raw.atIn("", field, n, path) }

// atIn is at for a node of file (the keys file; "" for the configuration).
func (raw *rawConfig) atIn(file, field string, n *yaml.Node, path string) {
	if raw.locs == nil {
		raw.locs = map[string]location{}
	}
	raw.locs[field] = location{n, path, file}
}

type rawPlan struct {
	plan *httplimit.Plan
	// limitsRefused: the decoder left out an invalid limit.
	limitsRefused bool
	costNodes     map[string]*yaml.Node
	node          *yaml.Node
	upgradeNode   *yaml.Node
	path          string
}

type rawKey struct {
	key       *Key
	plan      string
	overrides []sluice.Limit
	node      *yaml.Node
	// planNode is the node of plan:, nil without one; hashNode that of
	// sha256:, nil unless it holds a SHA-256.
	planNode, hashNode *yaml.Node
	path               string
	file               string // "" for the configuration's own keys, else the keys file
}

// penalty decodes the penalty section, whose three fields are required: a
// section without one is refused rather than read as no penalty box.
func (d *decoder) penalty(n *yaml.Node, path string, pen *httplimit.Penalty, raw *rawConfig) {
	raw.at("Penalty", n, path)
	read := map[string]bool{}
	at := func(name, field string, f func(n *yaml.Node, p string)) field {
		return func(n *yaml.Node, p string) {
			read[name] = true
			raw.at("Penalty."+field, n, p)
			f(n, p)
		}
	}
	if !d.Mapping(n, path, map[string]field{
		"refusals": at("refusals", "Refusals", func(n *yaml.Node, p string) { pen.Refusals = d.Int(n, p, 1, sluice.MaxQuantity) }),
		"within":   at("within", "Within", func(n *yaml.Node, p string) { pen.Within = d.Duration(n, p) }),
		"for":      at("for", "For", func(n *yaml.Node, p string) { pen.For = d.Duration(n, p) }),
	}) {
		return
	}
	for _, name := range []string{"refusals", "within", "for"} {
		if !read[name] {
			d.Errorf(n, path+"."+name, "missing: a penalty box needs refusals, within and for (e.g. {refusals: 20, within: 1m, for: 10m})")
		}
	}
}

// upstream decodes the upstream's URL, its scheme (of any case) in lower
// case: http, https or h2c, with a host, and without what the reverse
// proxy would drop (credentials, a fragment) or add to every request (a
// query, which httputil.ProxyRequest.SetURL merges into each request's).
func (d *decoder) upstream(n *yaml.Node, p string) string {
	s := d.Str(n, p)
	if s == "" {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "h2c") || u.Hostname() == "" {
		d.Errorf(n, p, "%q is not an http://, https:// or h2c:// URL", s)
		return ""
	}
	switch {
	case u.User != nil:
		d.Errorf(n, p, "%q: credentials in the URL are never sent to the upstream: remove them", u.Redacted())
		return ""
	case u.Fragment != "" || strings.HasSuffix(s, "#"):
		d.Errorf(n, p, "%q: a fragment is never sent to the upstream: remove it", s)
		return ""
	case u.RawQuery != "":
		bare := *u
		bare.RawQuery = ""
		d.Errorf(n, p, "%q with a query: a query in the upstream's URL is added to every proxied request, "+
			"beside the request's own: remove it (each request's query is sent as it came)", bare.String())
		return ""
	}
	if port := u.Port(); port != "" {
		if num, err := strconv.Atoi(port); err != nil || num < 1 || num > 65535 {
			d.Errorf(n, p, "%q: port %s is not from 1 to 65535", s, port)
			return ""
		}
	}
	return u.Scheme + s[len(u.Scheme):] // the scheme in lower case, as url.Parse reads it
}

func (d *decoder) store(n *yaml.Node, path string, s *Store) {
	s.Type, s.MaxKeys = "memory", 1_000_000
	s.Redis = Redis{Mode: "standalone", Timeout: 50 * time.Millisecond, OnStoreError: "local", Instances: 1}
	s.Redis.Lease, s.Redis.Leases = "off", d.leases
	d.Mapping(n, path, map[string]field{
		"type":     func(n *yaml.Node, p string) { s.Type = d.OneOf(n, p, "memory", "redis") },
		"max_keys": func(n *yaml.Node, p string) { s.MaxKeys = int(d.Int(n, p, 1, 1<<32)) },
		"redis": func(n *yaml.Node, path string) {
			r := &s.Redis
			sentinelAt := map[string]*yaml.Node{} // where each sentinel_ field is
			var dbNode, replicasNode, masterNameNode, replicaWaitNode *yaml.Node
			d.Mapping(n, path, map[string]field{
				"mode":        func(n *yaml.Node, p string) { r.Mode = d.OneOf(n, p, "standalone", "sentinel", "cluster") },
				"addresses":   func(n *yaml.Node, p string) { r.Addresses = d.dialAddresses(n, p) },
				"master_name": func(n *yaml.Node, p string) { r.MasterName, masterNameNode = d.Str(n, p), n },
				"username":    func(n *yaml.Node, p string) { r.Username = d.Str(n, p) },
				"password":    func(n *yaml.Node, p string) { r.Password = d.Str(n, p) },
				"password_file": func(n *yaml.Node, p string) {
					r.PasswordFile = d.file(n, p)
					if _, err := ReadSecret(r.PasswordFile); err != nil {
						d.Errorf(n, p, "%v", err)
					}
				},
				"sentinel_username": func(n *yaml.Node, p string) { r.SentinelUsername, sentinelAt[p] = d.Str(n, p), n },
				"sentinel_password": func(n *yaml.Node, p string) { r.SentinelPassword, sentinelAt[p] = d.Str(n, p), n },
				"sentinel_password_file": func(n *yaml.Node, p string) {
					r.SentinelPasswordFile, sentinelAt[p] = d.file(n, p), n
					if _, err := ReadSecret(r.SentinelPasswordFile); err != nil {
						d.Errorf(n, p, "%v", err)
					}
				},
				"tls":             func(n *yaml.Node, p string) { d.clientTLS(n, p, &r.TLS) },
				"db":              func(n *yaml.Node, p string) { r.DB, dbNode = int(d.Int(n, p, 0, 1<<16)), n },
				"timeout":         func(n *yaml.Node, p string) { r.Timeout = d.timeout(n, p) },
				"on_store_error":  func(n *yaml.Node, p string) { r.OnStoreError = d.OneOf(n, p, "local", "allow", "deny") },
				"instances":       func(n *yaml.Node, p string) { r.Instances = int(d.Int(n, p, 1, 10_000)) },
				"replicas":        func(n *yaml.Node, p string) { r.Replicas, replicasNode = int(d.Int(n, p, 0, 64)), n },
				"replica_wait":    func(n *yaml.Node, p string) { r.ReplicaWait, replicaWaitNode = d.Duration(n, p), n },
				"lease":           func(n *yaml.Node, p string) { r.Lease = d.OneOf(n, p, "auto", "off") },
				"lease_max_units": func(n *yaml.Node, p string) { r.LeaseMaxUnits = d.Int(n, p, 1, sluice.MaxQuantity); d.leaseBound(n, p) },
				"lease_max_age": func(n *yaml.Node, p string) {
					before := len(d.Errs)
					if r.LeaseMaxAge = d.Duration(n, p); len(d.Errs) == before && r.LeaseMaxAge < time.Millisecond {
						d.Errorf(n, p, "%s: a lease under 1ms ends before its take's reply can arrive; give at least 1ms", n.Value)
					}
					d.leaseBound(n, p)
				},
			})
			if len(r.Addresses) == 0 {
				d.Errorf(n, path+".addresses", "at least one address is needed")
			}
			if r.Password != "" && r.PasswordFile != "" {
				d.Errorf(n, path+".password_file", "set password or password_file, not both")
			}
			if r.Mode == "sentinel" && r.MasterName == "" {
				d.Errorf(n, path+".master_name", "sentinel mode needs the master set's name")
			}
			if r.SentinelPassword != "" && r.SentinelPasswordFile != "" {
				d.Errorf(n, path+".sentinel_password_file", "set sentinel_password or sentinel_password_file, not both")
			}
			if masterNameNode != nil && r.Mode != "sentinel" && r.Mode != "" {
				d.Errorf(masterNameNode, path+".master_name", "only sentinel mode has a master set to name (mode is %s)", r.Mode)
			}
			if replicaWaitNode != nil && r.Replicas == 0 && (replicasNode == nil || replicasNode.Value == "0") {
				d.Errorf(replicaWaitNode, path+".replica_wait", "applies only with replicas above 0: without them no write waits")
			}
			if replicaWaitNode != nil && r.ReplicaWait > 0 && r.Timeout > 0 && r.ReplicaWait >= r.Timeout {
				d.Errorf(replicaWaitNode, path+".replica_wait", "%v is not below timeout (%v), which bounds a write's round trip, "+
					"the wait for its replicas included: give a shorter wait, or a longer timeout", r.ReplicaWait, r.Timeout)
			}
			if r.Mode == "cluster" && r.DB != 0 {
				d.Errorf(dbNode, path+".db", "a Redis Cluster has database 0 only")
			}
			if r.Mode == "cluster" && r.Replicas > 0 {
				d.Errorf(replicasNode, path+".replicas", "a Redis Cluster waits for no replica (a script run decides one slot): "+
					"configure min-replicas-to-write on its masters instead")
			}
			for _, p := range slices.Sorted(maps.Keys(sentinelAt)) {
				if r.Mode != "sentinel" {
					d.Errorf(sentinelAt[p], p, "only sentinel mode has Sentinels to authenticate to")
				}
			}
		},
	})
	if s.Type == "redis" && n != nil && !hasKey(n, "redis") {
		d.Errorf(n, path+".redis", "type redis needs a redis section with addresses")
	}
	if s.Type == "memory" && n != nil && n.Kind == yaml.MappingNode && hasKey(n, "redis") {
		d.Errorf(keyNode(n, "redis"), path+".redis", "applies only to type: redis, and the store is memory (the default when type is left out): set type: redis, or remove the section")
	}
}

// dialAddresses decodes a list of host:port addresses to connect to (or
// a single one), whose host is not empty and whose port is a number from 1
// to 65535 or a service's name: a server without a port is never reached.
func (d *decoder) dialAddresses(n *yaml.Node, path string) []string {
	if n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
		return []string{d.dialAddress(n, path)}
	}
	var out []string
	d.List(n, path, func(_ int, e *yaml.Node, p string) { out = append(out, d.dialAddress(e, p)) })
	return out
}

func (d *decoder) dialAddress(n *yaml.Node, p string) string {
	s := d.Str(n, p)
	host, port, err := net.SplitHostPort(s)
	if err == nil {
		var num int
		if num, err = net.LookupPort("tcp", port); err == nil && (num == 0 || host == "") {
			err = errors.New("no host or port")
		}
	}
	if err != nil && n.Kind == yaml.ScalarNode {
		d.Errorf(n, p, "%q is not a host:port address (e.g. redis.internal:6379)", s)
	}
	return s
}

// identity reads the identity section as it is written; httplimit's
// Options.Validate judges the values (see resolve).
func (d *decoder) identity(n *yaml.Node, path string, id *Identity, raw *rawConfig) {
	d.Mapping(n, path, map[string]field{
		"api_key_headers": func(n *yaml.Node, p string) {
			d.List(n, p, func(i int, e *yaml.Node, p string) {
				id.APIKeyHeaders = append(id.APIKeyHeaders, d.requestHeader(e, p))
				raw.at(fmt.Sprintf("APIKeyHeaders[%d]", i), e, p)
			})
			raw.at("APIKeyHeaders", n, p)
		},
		"user_header": func(n *yaml.Node, p string) {
			id.UserHeader = d.requestHeader(n, p)
			raw.at("UserHeader", n, p)
		},
		"plan_header": func(n *yaml.Node, p string) {
			id.PlanHeader = d.requestHeader(n, p)
			raw.at("PlanHeader", n, p)
		},
		"trusted_proxies": func(n *yaml.Node, p string) { id.TrustedProxies, id.TrustUnixPeers = d.trustedProxies(n, p) },
		"forwarded_header": func(n *yaml.Node, p string) {
			id.ForwardedHeader = d.Str(n, p)
			raw.at("ForwardedHeader", n, p)
		},
		"ipv4_prefix": func(n *yaml.Node, p string) {
			id.IPv4Prefix = int(d.Int(n, p, 1, 32))
			raw.at("IPv4Prefix", n, p)
		},
		"ipv6_prefix": func(n *yaml.Node, p string) {
			id.IPv6Prefix = int(d.Int(n, p, 1, 128))
			raw.at("IPv6Prefix", n, p)
		},
		"unknown_keys": func(n *yaml.Node, p string) {
			id.UnknownKeys = d.Str(n, p)
			raw.at("UnknownKeys", n, p)
		},
		"jwt": func(n *yaml.Node, p string) { id.JWT = d.jwts(n, p, raw) },
		"token_headers": func(n *yaml.Node, p string) {
			d.List(n, p, func(i int, e *yaml.Node, p string) {
				id.TokenHeaders = append(id.TokenHeaders, d.requestHeader(e, p))
				raw.at(fmt.Sprintf("TokenHeaders[%d]", i), e, p)
			})
			raw.at("TokenHeaders", n, p)
		},
	})
}

// unseenHeaders are the request headers net/http takes out of
// http.Request.Header, by canonical name, and what each is instead.
var unseenHeaders = map[string]string{
	"Host":              "it is the request's host, which match.hosts and the key host read",
	"Transfer-Encoding": "it is how the body was framed",
}

// requestHeader decodes the name of a request header to read, canonical,
// refusing one net/http never leaves among a request's headers.
func (d *decoder) requestHeader(n *yaml.Node, p string) string {
	name := http.CanonicalHeaderKey(d.Str(n, p))
	d.seenHeader(n, p, name)
	return name
}

// seenHeader refuses name, a request header to read, when net/http never
// leaves it among a request's headers: it would be absent from every one.
func (d *decoder) seenHeader(n *yaml.Node, p, name string) {
	canonical := http.CanonicalHeaderKey(name)
	if why, ok := unseenHeaders[canonical]; ok {
		d.Errorf(n, p, "%q is never among a request's headers: %s", canonical, why)
	}
}

func (d *decoder) prefixes(n *yaml.Node, p string) []netip.Prefix {
	var out []netip.Prefix
	d.List(n, p, func(_ int, e *yaml.Node, p string) {
		if pfx, ok := d.prefix(e, p); ok {
			out = append(out, pfx)
		}
	})
	return out
}

// trustedProxies decodes identity.trusted_proxies: addresses and CIDR
// prefixes, and "unix:" for the peers of Unix-domain sockets
// (httplimit.Options.TrustUnixPeers), as nginx's set_real_ip_from writes
// them. An entry written `- unix:` unquoted, which YAML reads as the
// mapping of unix to nothing, is that entry too.
func (d *decoder) trustedProxies(n *yaml.Node, p string) (out []netip.Prefix, unix bool) {
	d.List(n, p, func(_ int, e *yaml.Node, p string) {
		if isUnixEntry(e) {
			unix = true
			return
		}
		if pfx, ok := d.prefix(e, p); ok {
			out = append(out, pfx)
		}
	})
	return out, unix
}

// isUnixEntry reports whether e is "unix:", quoted, or unquoted (a mapping
// of unix to null).
func isUnixEntry(e *yaml.Node) bool {
	switch e.Kind {
	case yaml.ScalarNode:
		return e.Tag == "!!str" && e.Value == "unix:"
	case yaml.MappingNode:
		return len(e.Content) == 2 && e.Content[0].Value == "unix" && e.Content[1].Tag == "!!null" && e.Content[1].Value == ""
	}
	return false
}

// prefix decodes one address or CIDR prefix (an address is its /32 or
// /128); false after recording an error. An IPv4-mapped IPv6 address or
// prefix (::ffff:10.0.0.0/104) is its IPv4 one (10.0.0.0/8): client
// addresses are matched unmapped, and would never be in it. Refused: a
// prefix with bits set past its length (10.0.0.1/8: one address, or its
// network?), and an IPv6 zone (fe80::1%eth0), which netip drops.
func (d *decoder) prefix(e *yaml.Node, p string) (netip.Prefix, bool) {
	s := d.Str(e, p)
	pfx, err := netip.ParsePrefix(s)
	if err != nil {
		addr, aerr := netip.ParseAddr(s)
		if aerr != nil {
			d.Errorf(e, p, "%q is not an IP address or CIDR prefix", s)
			return netip.Prefix{}, false
		}
		if addr.Zone() != "" {
			d.Errorf(e, p, "%q has an IPv6 zone (%%%s), which names an interface of this host, not addresses: write the address or prefix without it", s, addr.Zone())
			return netip.Prefix{}, false
		}
		pfx = netip.PrefixFrom(addr, addr.BitLen())
	}
	masked := unmapped(pfx.Masked())
	if masked != unmapped(pfx) {
		d.Errorf(e, p, "%q has bits set past its length: write %v for the network, or %v for the one address", s, masked, pfx.Addr().Unmap())
		return netip.Prefix{}, false
	}
	return masked, true
}

// unmapped returns pfx, or its IPv4 prefix when it is an IPv4-mapped one
// of /96 or longer.
func unmapped(pfx netip.Prefix) netip.Prefix {
	if pfx.Addr().Is4In6() && pfx.Bits() >= 96 {
		return netip.PrefixFrom(pfx.Addr().Unmap(), pfx.Bits()-96)
	}
	return pfx
}

func (d *decoder) plans(n *yaml.Node, path string) []rawPlan {
	var out []rawPlan
	d.Entries(n, path, func(k, v *yaml.Node, p string) {
		rp := rawPlan{plan: &httplimit.Plan{Name: k.Value}, node: k, path: p}
		pl := rp.plan
		isMapping := d.Mapping(v, p, map[string]field{
			"limits": func(n *yaml.Node, p string) {
				before := len(d.Errs)
				pl.Limits = d.limits(n, p)
				rp.limitsRefused = len(d.Errs) > before
			},
			"costs": func(n *yaml.Node, p string) { pl.Costs, rp.costNodes = d.costs(n, p) },
			"upgrade": func(n *yaml.Node, path string) {
				pl.Upgrade = &httplimit.Upgrade{}
				rp.upgradeNode = n
				d.Mapping(n, path, map[string]field{
					"plan": func(n *yaml.Node, p string) {
						if pl.Upgrade.Plan = d.Str(n, p); pl.Upgrade.Plan == pl.Name && n.Kind == yaml.ScalarNode {
							d.Errorf(n, p, "%q is this plan: a client refused on it would be told to upgrade to the plan it has", pl.Name)
						}
					},
					"url": func(n *yaml.Node, p string) { pl.Upgrade.URL = d.Str(n, p) },
				})
			},
		})
		if !isMapping || hasMergeKey(v) {
			rp.limitsRefused = true // not all were read: the plan's own error says why
		}
		out = append(out, rp)
	})
	return out
}

// costs reads a plan's costs; the patterns are judged by httplimit.
func (d *decoder) costs(n *yaml.Node, path string) (map[string]int64, map[string]*yaml.Node) {
	out, nodes := map[string]int64{}, map[string]*yaml.Node{}
	d.Entries(n, path, func(k, v *yaml.Node, p string) {
		d.patternMethod(k, p, k.Value)
		d.patternHost(k, p, k.Value)
		out[k.Value], nodes[k.Value] = d.Int(v, p, 0, sluice.MaxQuantity), k
	})
	return out, nodes
}

// patterns decodes the ServeMux patterns of the degradation class class,
// refusing one of a route another class holds (classOf, which it extends)
// and one the class's ServeMux cannot hold beside those listed before it.
func (d *decoder) patterns(n *yaml.Node, path, class string, classOf map[string]classed) []string {
	var out []string
	mux := http.NewServeMux() // out's patterns
	d.List(n, path, func(_ int, e *yaml.Node, p string) {
		s := d.Str(e, p)
		if err := checkPattern(s); err != nil {
			d.Errorf(e, p, "%v", err)
			return
		}
		if d.patternGlob(e, p, s) {
			return
		}
		d.patternMethod(e, p, s)
		d.patternHost(e, p, s)
		route := routeOf(s)
		if c, ok := classOf[route]; ok && c.class != class {
			if c.pattern == s {
				d.Errorf(e, p, "%q is in %s already", s, c.class)
			} else {
				d.Errorf(e, p, "%q is in %s already (as %q): a route is in one class", s, c.class, c.pattern)
			}
			return
		}
		if !handles(mux, s) {
			for _, prev := range out {
				if patternsConflict(prev, s) {
					d.Errorf(e, p, "%q conflicts with %q, listed before it: a ServeMux cannot hold both", s, prev)
					return
				}
			}
		}
		if _, ok := classOf[route]; !ok {
			classOf[route] = classed{class, s}
		}
		out = append(out, s)
	})
	return out
}

// classed is the class a route was first listed in, and as what pattern.
type classed struct{ class, pattern string }

// routeOf returns the requests the valid ServeMux pattern s matches, as
// a string equal for two patterns exactly when they match the same
// requests: its method, host and path segments, each literal segment
// unescaped as ServeMux reads it and each wildcard without its name.
func routeOf(s string) string {
	method, host, p := patternParts(s)
	var b strings.Builder
	b.WriteString(method + " " + host)
	for _, seg := range strings.Split(p, "/")[1:] {
		b.WriteByte('/')
		switch {
		case seg == "{$}":
			b.WriteString("{$}")
		case strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "...}"):
			b.WriteString("{...}")
		case strings.HasPrefix(seg, "{"):
			b.WriteString("{}")
		default:
			if u, err := url.PathUnescape(seg); err == nil {
				seg = u
			}
			b.WriteString(url.PathEscape(seg))
		}
	}
	return b.String()
}

// patternsConflict reports whether a ServeMux refuses b beside a (valid
// patterns both): they match the same requests, or neither is more
// specific than the other.
func patternsConflict(a, b string) (conflict bool) {
	mux := http.NewServeMux()
	mux.Handle(a, http.NotFoundHandler())
	defer func() { conflict = recover() != nil }()
	mux.Handle(b, http.NotFoundHandler())
	return false
}

func (d *decoder) keys(n *yaml.Node, path string) []rawKey {
	var out []rawKey
	d.List(n, path, func(_ int, e *yaml.Node, path string) {
		rk := rawKey{key: &Key{}, node: e, path: path}
		var hashSaid bool
		d.Mapping(e, path, map[string]field{
			"name": func(n *yaml.Node, p string) { rk.key.Name = d.label(n, p) },
			"sha256": func(n *yaml.Node, p string) {
				hashSaid = true
				s := d.Str(n, p)
				b, err := hex.DecodeString(s)
				if err != nil || len(b) != sha256.Size {
					d.Errorf(n, p, "want the 64 hex digits of the key's SHA-256 (e.g. `printf %%s KEY | sha256sum`), got %d characters", len(s))
					return
				}
				copy(rk.key.Hash[:], b)
				rk.hashNode = n
			},
			"plan": func(n *yaml.Node, p string) { rk.plan, rk.planNode = d.Str(n, p), n },
			"limits": func(n *yaml.Node, p string) {
				counts := len(d.counts)
				rk.overrides = d.limits(n, p)
				d.keyCounts(counts)
			},
		})
		if !hashSaid && e.Kind == yaml.MappingNode {
			d.Errorf(e, path+".sha256", "missing: a key is configured by its SHA-256, never in clear")
		}
		out = append(out, rk)
	})
	return out
}

// keyCounts refuses the count: settings read since the first of d.counts
// from, those of a key's own limits, and forgets them: a limit counts by
// its name (httplimit.Options.Count), so a key's count: would count the
// limits of that name of every client, in every plan.
func (d *decoder) keyCounts(from int) {
	for _, ca := range d.counts[from:] {
		if !ca.said {
			continue
		}
		d.Errorf(ca.node, ca.path, "count: belongs on the plan's limit of this name, not on a key's: limits of one name count alike, for every client")
	}
	d.counts = d.counts[:from]
}

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
			r.GlobalStatus = int(d.Int(n, p, 400, 599))
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

// resolve applies defaults, turns plan names into plans and has the
// middleware's and the Envoy service's options judged by the functions
// their New functions use, locating each problem in the file.
func (d *decoder) resolve(c *Config, raw *rawConfig, root *yaml.Node) {
	d.publicPathsDiffer(c, raw)
	d.listenersDiffer(c)
	if c.Response.DenyStatus == 0 {
		c.Response.DenyStatus = http.StatusTooManyRequests
	}
	if c.Store.Type == "" {
		d.store(nil, "store", &c.Store)
	}
	byName := map[string]*httplimit.Plan{}
	for i, rp := range raw.plans {
		c.Policy.Plans = append(c.Policy.Plans, rp.plan)
		if byName[rp.plan.Name] == nil {
			byName[rp.plan.Name] = rp.plan
		}
		field := fmt.Sprintf("Plans[%d]", i)
		raw.at(field, rp.node, rp.path)
		raw.at(field+".Name", rp.node, rp.path)
		raw.at(field+".Limits", rp.node, rp.path+".limits")
		raw.refused(field+".Limits", rp.limitsRefused)
		for ep, n := range rp.costNodes {
			raw.at(fmt.Sprintf("%s.Costs[%q]", field, ep), n, rp.path+".costs."+ep)
		}
		if rp.upgradeNode != nil {
			raw.at(field+".Upgrade.Plan", rp.upgradeNode, rp.path+".upgrade.plan")
			raw.at(field+".Upgrade.URL", rp.upgradeNode, rp.path+".upgrade.url")
		}
	}
	if raw.plansNode != nil {
		raw.at("Plans", raw.plansNode, "plans")
	} else {
		raw.at("Plans", root, "plans")
	}
	for i, j := range c.Identity.JWT {
		if loc, ok := raw.locs[jwtPlanField(i)]; ok && byName[j.Plan] == nil {
			d.Errorf(loc.node, loc.path, "%q is not a plan", j.Plan)
		}
	}
	if loc, ok := raw.locs["TokenHeaders"]; ok && len(c.Identity.JWT) == 0 {
		d.Errorf(loc.node, loc.path, "tokens are read only to be verified: set identity.jwt too")
	}
	// Keys without a plan of their own take the default plan.
	defaults := httplimit.Options{Plans: c.Policy.Plans, DefaultPlan: c.Policy.DefaultPlan,
		AnonymousPlan: c.Policy.AnonymousPlan}.WithDefaults()
	c.Policy.DefaultPlan, c.Policy.AnonymousPlan = defaults.DefaultPlan, defaults.AnonymousPlan

	var keys []httplimit.Key
	firstOf := map[[32]byte]rawKey{} // each key's first entry
	for _, rk := range raw.keys {
		base := byName[rk.plan]
		if rk.plan == "" {
			base = byName[c.Policy.DefaultPlan]
		} else if base == nil {
			if len(raw.plans) > 0 {
				d.errorfIn(rk.file, cmp.Or(rk.planNode, rk.node), rk.path+".plan", "%q is not a plan (plans: %s)", rk.plan, planNames(raw.plans))
			}
			continue
		}
		if base == nil || rk.hashNode == nil {
			continue
		}
		if first, dup := firstOf[rk.key.Hash]; dup {
			where := fmt.Sprintf("%s, line %d", first.path, first.hashNode.Line)
			if first.file != rk.file {
				where = fmt.Sprintf("%s of %s, line %d", first.path, cmp.Or(first.file, d.File), first.hashNode.Line)
			}
			d.errorfIn(rk.file, rk.hashNode, rk.path+".sha256", "the same key is configured twice (%s)", where)
			continue
		}
		firstOf[rk.key.Hash] = rk
		rk.key.Plan = withOverrides(base, rk.overrides)
		c.Keys[rk.key.Hash] = rk.key
		raw.atIn(rk.file, fmt.Sprintf("Keys[%d]", len(keys)), rk.node, rk.path)
		keys = append(keys, httplimit.Key{Name: rk.key.Name, SHA256: rk.key.Hash, Plan: rk.key.Plan})
	}

	d.costsExempted(c, raw)
	d.ruleCostsHeld(c, raw)
	d.exceptPathsOverlap(c, raw)
	d.resolveCounts(c, raw)
	d.leaseBoundsApply(&c.Store)
	o := c.httpLimitOptions(keys)
	d.locate(o.Validate(), raw, "")
	if c.Envoy.Enabled {
		d.locate(c.EnvoyOptions().Validate(), raw, envoyFields)
	}
	r := o.WithDefaults()
	id := &c.Identity
	id.APIKeyHeaders, id.ForwardedHeader, id.UnknownKeys = r.APIKeyHeaders, r.ForwardedHeader, r.UnknownKeys
	id.IPv4Prefix, id.IPv6Prefix = r.IPv4Prefix, r.IPv6Prefix
	c.Response.Headers = r.Headers
	if c.Envoy.Enabled {
		c.Envoy.Headers = c.EnvoyOptions().WithDefaults().Headers
	}
}

// isPartial reports whether the decoder refused part of field or of a
// field enclosing it.
func (raw *rawConfig) isPartial(field string) bool {
	for f := field; f != ""; f = parentField(f) {
		if raw.partial[f] {
			return true
		}
	}
	return false
}

// locate reports every field error in err at the place its field was read
// from (raw.locs, under prefix): the field's own, else its nearest
// enclosing field's. A problem at a place that already has one (a value the
// decoder refused), or of a field the decoder refused part of, is left out.
func (d *decoder) locate(err error, raw *rawConfig, prefix string) {
	if err == nil {
		return
	}
	taken := map[[2]int]bool{}
	for _, e := range Errors(errors.Join(d.Errs...)) {
		taken[[2]int{e.Line, e.Col}] = true
	}
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	for _, e := range errs {
		field, msg := fieldOf(e)
		if raw.isPartial(prefix + field) {
			continue
		}
		loc, ok := location{}, false
		for f := field; f != "" && !ok; f = parentField(f) {
			loc, ok = raw.locs[prefix+f]
		}
		if loc.node != nil && taken[[2]int{loc.node.Line, loc.node.Column}] {
			continue
		}
		if field == "Plans" {
			msg += " (see examples/sluice.yaml)"
		}
		d.errorfIn(loc.file, loc.node, loc.path, "%s", msg)
	}
}

// withOverrides returns base with the limits of overrides replacing those of
// the same name and adding the others.
func withOverrides(base *httplimit.Plan, overrides []sluice.Limit) *httplimit.Plan {
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
	return strings.Join(names, ", ")
}

// keyNode returns the node of key in the mapping n, or n without one.
func keyNode(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i]
		}
	}
	return n
}

// hasMergeKey reports whether the mapping n has a merge key (<<), which
// the decoder refuses.
func hasMergeKey(n *yaml.Node) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Tag == "!!merge" {
			return true
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

// standardMethods are the methods of RFC 9110 and PATCH, as clients send them.
var standardMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace}

// method refuses m, a rule's method, when it is a standard method in
// another case ("get"): a rule matches a request's method in any case
// (httplimit.Rule.Methods), but only its GET matches HEAD too, and
// methods are written as clients send them.
func (d *decoder) method(n *yaml.Node, p, m string) {
	if up, ok := otherCase(m); ok {
		d.Errorf(n, p, "%q: write %s, as clients send it (a rule's GET matches HEAD too, its %s does not)", m, up, m)
	}
}

// patternMethod is method for the method of the ServeMux pattern s, if it
// has one ("get /healthz").
func (d *decoder) patternMethod(n *yaml.Node, p, s string) {
	i := strings.IndexAny(s, " \t")
	if i < 0 {
		return
	}
	if up, ok := otherCase(s[:i]); ok {
		d.Errorf(n, p, "%q never matches: methods are case-sensitive, and clients send %s (%s%s)", s, up, up, s[i:])
	}
}

// otherCase returns the standard method m is in another case, if it is one.
func otherCase(m string) (string, bool) {
	up := strings.ToUpper(m)
	return up, up != m && slices.Contains(standardMethods, up)
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
