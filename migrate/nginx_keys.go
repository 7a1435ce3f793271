package migrate

import (
	"net/http"
	"slices"
	"strings"
)

// keyKind is what an nginx zone key counts by.
type keyKind int

const (
	keyAddress  keyKind = iota // $binary_remote_addr, $remote_addr
	keyConstant                // no variable, or $server_name: one count (of a server)
	keyAttrs                   // variables a rule's key reads (headers, host, query, …)
	keyOther                   // anything else: not readable by sluice
)

// keyKind classifies the zone's key (see nginxKeyKind); an allowlist's key
// counts by address.
func (z *nginxZone) keyKind() (keyKind, []string) {
	if len(z.allow) > 0 {
		return keyAddress, []string{"ip/32/128"}
	}
	if z.orAddress != "" {
		return nginxKeyKind(z.orAddress, z.claims)
	}
	if len(z.methods) > 0 {
		return keyAddress, []string{"ip/32/128"}
	}
	return nginxKeyKind(z.key, z.claims)
}

// nginxVars are the nginx variables a rule's key reads, by their rule key
// attribute; $http_, $arg_ and $cookie_ variables are read by prefix.
var nginxVars = map[string]string{
	"binary_remote_addr": "ip/32/128", "remote_addr": "ip/32/128",
	"host": "host", "uri": "path", "document_uri": "path", "request_uri": "path",
}

// nginxKeyKind classifies a zone key, a text of variables ($name or
// ${name}) and literal characters, and returns the rule key attributes of
// its variables (constants and literal text count nothing apart). With
// claims, nginx Plus's $jwt_claim_<name> is the verified token's claim
// (its subject, "user", for sub); without, sluice cannot read it.
func nginxKeyKind(key string, claims bool) (keyKind, []string) {
	var attrs []string
	for rest := key; rest != ""; {
		i := strings.IndexByte(rest, '$')
		if i < 0 {
			break
		}
		rest = rest[i+1:]
		var name string
		if strings.HasPrefix(rest, "{") {
			end := strings.IndexByte(rest, '}')
			if end < 0 {
				return keyOther, nil
			}
			name, rest = rest[1:end], rest[end+1:]
		} else {
			end := strings.IndexFunc(rest, func(r rune) bool {
				return !(r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
			})
			if end < 0 {
				end = len(rest)
			}
			name, rest = rest[:end], rest[end:]
		}
		var attr string
		switch {
		case name == "server_name":
			continue
		case nginxVars[name] != "":
			attr = nginxVars[name]
		case strings.HasPrefix(name, "http_") && validHeaderName(name[len("http_"):]):
			attr = "header:" + http.CanonicalHeaderKey(strings.ReplaceAll(name[len("http_"):], "_", "-"))
		case strings.HasPrefix(name, "arg_") && validHeaderName(name[len("arg_"):]):
			attr = "query:" + name[len("arg_"):]
		case strings.HasPrefix(name, "cookie_") && validHeaderName(name[len("cookie_"):]):
			attr = "cookie:" + name[len("cookie_"):]
		case name == "jwt_claim_sub" && claims:
			attr = "user"
		case strings.HasPrefix(name, "jwt_claim_") && claims:
			attr = "claim:" + name[len("jwt_claim_"):]
		default:
			return keyOther, nil
		}
		if !slices.Contains(attrs, attr) {
			attrs = append(attrs, attr)
		}
	}
	switch {
	case len(attrs) == 0:
		return keyConstant, nil
	case len(attrs) == 1 && attrs[0] == "ip/32/128":
		return keyAddress, attrs
	}
	return keyAttrs, attrs
}

// nginxKey maps a zone's key onto sluice's identity, for a plan's limit:
// the key counts by address (or a key sluice cannot read, counted so) or
// counts everyone together (a global limit).
func (t *Translation) nginxKey(z *nginxZone, l *Limit) {
	where := "zone " + z.name + " key"
	switch kind, _ := z.keyKind(); kind {
	case keyAddress:
		t.IPv6Prefix = 128
		t.same(where, "%s: one client per address, as sluice's identity by address; ipv6_prefix: 128 keeps nginx's one client per IPv6 address (sluice's default groups a /64).", z.key)
	case keyConstant:
		l.Global = true
		t.same(where, "%s is one value for every request (one server): a global limit, one count for all clients.", z.key)
	default:
		t.differs(where, "sluice cannot key a limit on %s: the limit is imported per client address instead. Key on an address, a header or the host, or keep this limit in nginx.", z.key)
	}
}
