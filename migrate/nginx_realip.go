package migrate

import (
	"fmt"
	"slices"
	"strings"
)

// nginxRealIP is what nginx's realip module reads: the peers
// set_real_ip_from trusts (addresses and prefixes, "unix:"; names in
// names, which nginx resolves at start), the header real_ip_header names
// (X-Real-IP when unset) and real_ip_recursive.
type nginxRealIP struct {
	from, names []string
	header      string
	recursive   bool
}

// read takes in one realip directive; other directives are not its.
func (r *nginxRealIP) read(d directive) error {
	switch d.name {
	case "set_real_ip_from":
		if len(d.args) != 1 {
			return fmt.Errorf("line %d: set_real_ip_from takes one address, prefix or unix:", d.line)
		}
		v := d.args[0]
		if v != "unix:" {
			p, err := parsePrefix(v)
			if err != nil {
				if !slices.Contains(r.names, v) {
					r.names = append(r.names, v)
				}
				return nil
			}
			v = p
		}
		if !slices.Contains(r.from, v) {
			r.from = append(r.from, v)
		}
	case "real_ip_header":
		if len(d.args) != 1 {
			return fmt.Errorf("line %d: real_ip_header takes one header", d.line)
		}
		r.header = d.args[0]
	case "real_ip_recursive":
		r.recursive = len(d.args) == 1 && d.args[0] == "on"
	}
	return nil
}

// nginxRealIP compares where nginx and sluice read the client's address.
// Without set_real_ip_from nginx's address is the connection's peer, as
// sluice's without trusted proxies. With it and real_ip_header
// X-Forwarded-For, the trusted peers become identity.trusted_proxies,
// whose X-Forwarded-For sluice believes; any other header is reported, as
// sluice reads the address from X-Forwarded-For (or Forwarded) alone.
func (t *Translation) nginxRealIP(r nginxRealIP) {
	if len(r.from) == 0 && len(r.names) == 0 {
		return
	}
	peers := strings.Join(slices.Concat(r.from, r.names), ", ")
	header := or(r.header, "X-Real-IP")
	switch {
	case strings.EqualFold(header, "X-Forwarded-For"):
		t.TrustedProxies = r.from
		t.same("real_ip_header", "nginx takes the client's address from X-Forwarded-For when the peer is one of set_real_ip_from's (%s); identity.trusted_proxies lists the same peers, whose X-Forwarded-For sluice believes, so clients behind them count apart as in nginx.", peers)
		if !r.recursive {
			t.differs("real_ip_recursive", "off (nginx's default): nginx takes the last address of X-Forwarded-For even when it is a trusted proxy's; sluice takes the rightmost address not in trusted_proxies, as real_ip_recursive on does. Behind two trusted proxies nginx counted every client as the nearer proxy's address; sluice counts each client apart.")
		}
		if len(r.names) > 0 {
			t.differs("set_real_ip_from", "%s: host names, which nginx resolves at start; add their addresses to identity.trusted_proxies, or the clients behind them count as their addresses.", strings.Join(r.names, ", "))
		}
	case strings.EqualFold(header, "proxy_protocol"):
		t.differs("real_ip_header", "proxy_protocol: nginx takes the client's address from the PROXY protocol header of the connections of %s; list those load balancers in sluice.yaml's proxy_protocol (and trusted_proxies if they forward X-Forwarded-For), or every client behind one counts as its address.", peers)
	default:
		t.differs("real_ip_header", "nginx takes the client's address from %s when the peer is one of set_real_ip_from's (%s); sluice reads it from X-Forwarded-For (or Forwarded) sent by identity.trusted_proxies only: have those proxies send X-Forwarded-For and list them there, or every client behind one counts as its address.", header, peers)
	}
}
