package config

import (
	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/netip"
	"path/filepath"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// TLS configures a listener's TLS. Paths are relative to the configuration
// file; the files are read again on every reload.
type TLS struct {
	// CertFile and KeyFile are a PEM certificate (chain) and its key. Both
	// empty: the listener speaks plain TCP (in YAML, no tls: section: one
	// without them, even empty, is refused).
	CertFile, KeyFile string
	// ClientCAFile, on the admin listener only, is a PEM bundle of the CAs
	// that sign client certificates. Set, the listener requires and
	// verifies a client certificate on every connection (mutual TLS).
	ClientCAFile string
}

// Enabled reports whether t configures TLS.
func (t TLS) Enabled() bool { return t.CertFile != "" }

// Scopes is a set of what a caller of the admin listener may do.
type Scopes uint8

// The scopes a caller can hold.
const (
	// ScopeRead: /metrics, /dashboard, /designer, GET /v1/degradation.
	ScopeRead Scopes = 1 << iota
	// ScopeCheck: the decision API, forward-auth and Envoy's RLS.
	ScopeCheck
	// ScopeOverridePlan: send "plan" to the decision API.
	ScopeOverridePlan
	// ScopeAdmin: change the degradation level and other operator writes.
	ScopeAdmin
)

// scopeNames are the scopes' names in YAML, in bit order.
var scopeNames = [...]string{"read", "check", "override_plan", "admin"}

// Has reports whether s holds every scope of want.
func (s Scopes) Has(want Scopes) bool { return s&want == want }

// String lists s's scope names, comma-separated ("" for none).
func (s Scopes) String() string {
	var names []string
	for i, n := range scopeNames {
		if s&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	return strings.Join(names, ",")
}

// Admin configures the private listener: the decision API, forward-auth,
// metrics, dashboard, designer and operator endpoints, and who may call them.
type Admin struct {
	// Listen is its address, "127.0.0.1:9090" by default.
	Listen string
	TLS    TLS
	// Callers are the authenticated callers, each with its scopes.
	Callers []Caller
	// LoopbackScopes are granted to a caller connecting from a loopback
	// address without credentials: ScopeRead by default (a Prometheus or an
	// operator on the same host). A token presented from loopback is checked
	// like any other. Every process on the host, and any relay running
	// there, shares this grant.
	LoopbackScopes Scopes
}

// Caller is one authenticated caller of the admin listener.
type Caller struct {
	// Name labels the caller in logs; it is never a secret.
	Name string
	// TokenHash is the SHA-256 of the caller's bearer token (sluice token
	// prints a token and its hash); zero when the caller uses a certificate.
	TokenHash [32]byte
	// Certificate is the common name or a DNS name of the client
	// certificate (mutual TLS) that identifies the caller; "" for a token.
	Certificate string
	Scopes      Scopes
}

// Connections bounds each listener's connections and the time a request
// may take. Zero values are replaced by the defaults at load, and by
// server.New in a Config built in Go (WithDefaults), but for
// StreamIdleTimeout's.
type Connections struct {
	// Max is the number of open connections per listener, 10,000 by
	// default. When the limit is reached the connection idle the longest is
	// closed to make room; with none idle, new ones wait in the kernel's
	// backlog.
	Max int
	// ReadHeaderTimeout bounds reading a request's headers (10s);
	// ReadTimeout the whole request, body included (60s), but for a body
	// the reverse proxy streams to the upstream, which it bounds between
	// reads instead (nginx's client_body_timeout); WriteTimeout the
	// response, counted from the end of the request's headers (120s), not
	// counting a leaky-bucket queue's wait for the request's turn — for
	// the reverse proxy, the wait for the upstream's answer to start (a
	// 504 after it; a reload changes this wait at once, the listeners'
	// bounds at the next start); IdleTimeout a keep-alive connection waiting for its
	// next request (120s).
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// StreamIdleTimeout bounds the silence of an answer the reverse proxy
	// has started (5m): an answer streams as long as it moves data, with at
	// most this long between two writes, and a connection switched to
	// another protocol (a WebSocket) closes after this long without a byte
	// in either direction; 0 (a Config built in Go without it) bounds no
	// stream's silence. Unlike the other bounds it takes effect at a
	// reload, for the requests that start after it.
	StreamIdleTimeout time.Duration
	// MaxHeaderBytes bounds a request's headers, 64 KiB by default.
	MaxHeaderBytes int
}

// Shutdown is how the server stops when told to (SIGTERM): first it stays
// up for Delay, serving every request while /readyz answers 503 and
// keep-alive connections end after their next answer, so that a load
// balancer watching readiness (a Kubernetes Service) stops sending it new
// connections before its listeners close; then it closes them and gives the
// requests in flight up to Drain to finish, and notify's queue what
// remains of it.
type Shutdown struct {
	// Delay is 0 by default (stop at once), at most 5 minutes.
	Delay time.Duration
	// Drain is 10s by default, from 1s to 10 minutes.
	Drain time.Duration
}

// Log says what the server logs of its decisions (log:).
type Log struct {
	// RefusalsPerSecond bounds the lines the server logs of the requests it
	// refuses — through the proxy, forward-auth, the decision API and
	// Envoy's service — 10 a second by default, so that a flood of refused
	// requests cannot flood the log: the lines left out are counted, and
	// said in one line, once a second. 0 logs none.
	RefusalsPerSecond int
}

// Designer bounds the designer's simulations (POST /designer/run).
type Designer struct {
	// Concurrency is the number of runs at a time; 0 means one per core.
	Concurrency int
	// MaxArrivals bounds the requests one run simulates, 200,000 by default.
	MaxArrivals int
	// Timeout bounds one run, 10s by default.
	Timeout time.Duration
}

// tls decodes a listener's tls: section. One with nothing in it (null or
// {}) is refused: a listener has no TLS without a certificate, and plain
// TCP where HTTPS was written would go unnoticed.
func (d *decoder) tls(n *yaml.Node, path string, t *TLS, clientCA bool) {
	if n.Tag == "!!null" || n.Kind == yaml.MappingNode && len(n.Content) == 0 {
		d.Errorf(n, path, "empty: give cert_file and key_file for HTTPS, or remove tls: for plain HTTP")
		return
	}
	fields := map[string]field{
		"cert_file": func(n *yaml.Node, p string) { t.CertFile = d.file(n, p) },
		"key_file":  func(n *yaml.Node, p string) { t.KeyFile = d.file(n, p) },
	}
	if clientCA {
		fields["client_ca_file"] = func(n *yaml.Node, p string) { t.ClientCAFile = d.file(n, p) }
	}
	d.Mapping(n, path, fields)
	if (t.CertFile == "") != (t.KeyFile == "") {
		d.Errorf(n, path, "cert_file and key_file go together")
	}
	if t.ClientCAFile != "" && t.CertFile == "" {
		d.Errorf(n, path+".client_ca_file", "mutual TLS needs the listener's own cert_file and key_file")
		return
	}
	if t.CertFile != "" && t.KeyFile != "" && !d.unread {
		if _, err := t.Load(); err != nil {
			d.tlsError(n, path, err)
		}
	}
}

// file returns the path of n, relative to the configuration file's folder,
// or "" when n names none. An empty name ("", as a template renders an
// unset value) is refused: read as no file, it would turn off what the
// file configures (TLS, client certificates, the keys file) without a word.
func (d *decoder) file(n *yaml.Node, p string) string {
	s := d.Str(n, p)
	if s == "" && written(n) {
		d.Errorf(n, p, "empty: name a file, or remove the line")
	}
	if s != "" && !filepath.IsAbs(s) {
		s = filepath.Join(filepath.Dir(d.File), s)
	}
	return s
}

// address decodes a listener's host:port, whose port is a number from 0
// to 65535 or a service's name, as net.Listen takes it.
func (d *decoder) address(n *yaml.Node, p string) string {
	if d.listens == nil {
		d.listens = map[string]*yaml.Node{}
	}
	d.listens[p] = n
	s := d.Str(n, p)
	_, port, err := net.SplitHostPort(s)
	if err == nil {
		_, err = net.LookupPort("tcp", port)
	}
	if err != nil {
		d.Errorf(n, p, "%q is not a host:port address (e.g. 127.0.0.1:9090 or :8080)", s)
	}
	return s
}

// listenersDiffer refuses two listeners of c on one port of one host (or
// of every host, for an address without one or 0.0.0.0 or ::), which
// could not both be opened, at the one read from the file.
func (d *decoder) listenersDiffer(c *Config) {
	addrs := []struct{ field, addr string }{{"listen", c.Listen}, {"admin.listen", c.Admin.Listen}}
	if c.Envoy.Enabled {
		addrs = append(addrs, struct{ field, addr string }{"envoy.listen", c.Envoy.Listen})
	}
	for i, a := range addrs {
		for _, b := range addrs[:i] {
			if !sameSocket(a.addr, b.addr) {
				continue
			}
			at, other := a, b
			if d.listens[a.field] == nil {
				at, other = b, a
			}
			if n := d.listens[at.field]; n != nil {
				d.Errorf(n, at.field, "%q takes the port of %s (%q): give each listener its own", at.addr, other.field, other.addr)
			}
		}
	}
}

// sameSocket reports whether listening on a and on b would take one port:
// the same port on the same host, on every host ("" or ::, as net.Listen
// takes them), or on every IPv4 host (0.0.0.0) and an IPv4 address.
// localhost, in any case, is 127.0.0.1, the address net.Listen takes for
// it. Port 0 (a port the system picks) never clashes.
func sameSocket(a, b string) bool {
	ha, pa, errA := net.SplitHostPort(a)
	hb, pb, errB := net.SplitHostPort(b)
	if errA != nil || errB != nil {
		return false
	}
	for _, h := range []*string{&ha, &hb} {
		if strings.EqualFold(*h, "localhost") {
			*h = "127.0.0.1"
		}
	}
	na, errA := net.LookupPort("tcp", pa)
	nb, errB := net.LookupPort("tcp", pb)
	if errA != nil || errB != nil || na != nb || na == 0 {
		return false
	}
	every := func(h string) bool { return h == "" || h == "::" }
	everyIPv4 := func(h, other string) bool {
		ip, err := netip.ParseAddr(other)
		return h == "0.0.0.0" && err == nil && ip.Is4()
	}
	return ha == hb || every(ha) || every(hb) || everyIPv4(ha, hb) || everyIPv4(hb, ha)
}

func (d *decoder) admin(n *yaml.Node, path string, a *Admin) {
	d.Mapping(n, path, map[string]field{
		"listen":          func(n *yaml.Node, p string) { a.Listen = d.address(n, p) },
		"tls":             func(n *yaml.Node, p string) { d.tls(n, p, &a.TLS, true) },
		"loopback_scopes": func(n *yaml.Node, p string) { a.LoopbackScopes = d.scopes(n, p) },
		"callers":         func(n *yaml.Node, p string) { a.Callers = d.callers(n, p) },
	})
	for _, c := range a.Callers {
		if c.Certificate != "" && a.TLS.ClientCAFile == "" {
			d.Errorf(n, path+".tls.client_ca_file", "caller %q is identified by a certificate: set the CA that signs it", c.Name)
			break
		}
	}
}

func (d *decoder) scopes(n *yaml.Node, path string) Scopes {
	var s Scopes
	d.List(n, path, func(_ int, e *yaml.Node, p string) {
		name := d.Str(e, p)
		for i, known := range scopeNames {
			if name == known {
				s |= 1 << i
				return
			}
		}
		d.Errorf(e, p, "unknown scope %q (want one of %s)", name, strings.Join(scopeNames[:], ", "))
	})
	return s
}

func (d *decoder) callers(n *yaml.Node, path string) []Caller {
	var out []Caller
	names := map[string]bool{}
	// A token or certificate names one caller: of two with the same, the
	// server would grant one's scopes to the other.
	tokens, certificates := map[[32]byte]string{}, map[string]string{}
	d.List(n, path, func(_ int, e *yaml.Node, path string) {
		var c Caller
		var token, scopes bool
		var tokenNode, certificateNode *yaml.Node
		d.Mapping(e, path, map[string]field{
			"name": func(n *yaml.Node, p string) { c.Name = d.label(n, p) },
			"token_sha256": func(n *yaml.Node, p string) {
				token = true
				if !d.Scalar(n, p, "a string") {
					return
				}
				s := n.Value
				b, err := hex.DecodeString(s)
				if err != nil || len(b) != sha256.Size {
					d.Errorf(n, p, "want the 64 hex digits of the token's SHA-256 (sluice token prints one), got %d characters", len(s))
					return
				}
				copy(c.TokenHash[:], b)
				tokenNode = n
			},
			"certificate": func(n *yaml.Node, p string) { c.Certificate, certificateNode = d.Str(n, p), n },
			"scopes":      func(n *yaml.Node, p string) { c.Scopes, scopes = d.scopes(n, p), true },
		})
		if e.Kind != yaml.MappingNode {
			return
		}
		switch {
		case c.Name == "":
			d.Errorf(e, path+".name", "missing: every caller has a name for the logs")
		case names[c.Name]:
			d.Errorf(e, path+".name", "%q is already a caller's name", c.Name)
		}
		names[c.Name] = true
		if token == (c.Certificate != "") {
			d.Errorf(e, path, "a caller has exactly one of token_sha256 (never the token itself) or certificate")
		}
		if !scopes || c.Scopes == 0 {
			d.Errorf(e, path+".scopes", "missing: list what the caller may do (%s)", strings.Join(scopeNames[:], ", "))
		}
		if tokenNode != nil {
			if other, dup := tokens[c.TokenHash]; dup {
				d.Errorf(tokenNode, path+".token_sha256", "the same token as caller %q: give each caller a token of its own (sluice token)", other)
			}
			tokens[c.TokenHash] = c.Name
		}
		if certificateNode != nil && c.Certificate != "" {
			if other, dup := certificates[c.Certificate]; dup {
				d.Errorf(certificateNode, path+".certificate", "%q already identifies caller %q", c.Certificate, other)
			}
			certificates[c.Certificate] = c.Name
		}
		out = append(out, c)
	})
	return out
}
