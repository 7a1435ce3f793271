package migrate

import (
	"fmt"
	"slices"
	"strings"
)

// nginxServer is one server block: where it is, its server_name and listen
// arguments, and the host names a rule of its can match.
type nginxServer struct {
	line      int
	names     []string // server_name's arguments
	listens   []string // each listen's address and port
	isDefault bool     // a listen of it says default_server
	// hosts are the rule hosts of its names; nil: a rule of it matches
	// every host (no name a rule can match).
	hosts []string
}

// parseServer reads a server block's server_name and listen directives.
func parseServer(d directive) nginxServer {
	s := nginxServer{line: d.line}
	for _, c := range d.block {
		switch c.name {
		case "server_name":
			s.names = append(s.names, c.args...)
		case "listen":
			if len(c.args) > 0 {
				s.listens = append(s.listens, c.args[0])
			}
			if slices.Contains(c.args, "default_server") || slices.Contains(c.args, "default") {
				s.isDefault = true
			}
		}
	}
	return s
}

// serverHost returns the rule hosts of a server_name argument: an exact
// name, a leading wildcard (*.example.com, any name ending so, as in
// nginx), or both of a name with a leading dot (.example.com); ok is false
// for a regular expression (~…), a trailing wildcard (www.example.*) or a
// name with a variable, which rules cannot match.
func serverHost(name string) (hosts []string, ok bool) {
	n := strings.ToLower(name)
	switch {
	case strings.HasPrefix(n, "*.") && validHostName(n[2:]):
		return []string{n}, true
	case strings.HasPrefix(n, ".") && validHostName(n[1:]):
		return []string{n[1:], "*" + n}, true
	case validHostName(n) && !strings.HasPrefix(n, "."):
		return []string{n}, true
	}
	return nil, false
}

// nginxServerHosts sets each server's hosts and the hosts of the scopes in
// it, when there are several servers (nginx gives one server every request
// it receives), and reports what nginx's choice of a server does that a
// rule's hosts cannot: names rules cannot match, an exact name under
// another server's wildcard (the exact name wins in nginx), the default
// server (it also takes every Host no server names) and servers on
// different ports.
func (t *Translation) nginxServerHosts(servers []nginxServer, scopes []nginxScope) {
	if len(servers) < 2 {
		return
	}
	limited := make([]bool, len(servers))
	for _, s := range scopes {
		if s.server >= 0 && len(s.uses) > 0 {
			limited[s.server] = true
		}
	}
	def := slices.IndexFunc(servers, func(s nginxServer) bool { return s.isDefault })
	if def < 0 {
		def = 0
	}
	for i := range servers {
		sv := &servers[i]
		where := fmt.Sprintf("server at line %d", sv.line)
		var lost []string
		for _, name := range sv.names {
			if name == "" || name == "_" {
				continue // no host, or the catch-all convention: nothing by name
			}
			hs, ok := serverHost(name)
			if !ok {
				lost = append(lost, name)
			}
			for _, h := range hs {
				if !slices.Contains(sv.hosts, h) {
					sv.hosts = append(sv.hosts, h)
				}
			}
		}
		if !limited[i] {
			continue
		}
		switch {
		case len(sv.hosts) == 0:
			t.differs(where, "server_name %s has no name a rule's hosts can match: its rules match every host, so they also count requests nginx gives the other servers.", or(strings.Join(serverNames(sv.names), " "), `""`))
		case len(lost) > 0:
			t.differs(where, "server_name %s: a regular expression, a trailing wildcard or a variable cannot be a rule's host; its rules match %s only, so requests nginx gives this server by those names are not limited.", strings.Join(serverNames(lost), " "), strings.Join(sv.hosts, ", "))
		default:
			t.same(where, "nginx gives this server the requests whose Host is %s: its rules match those hosts (match.hosts).", strings.Join(sv.names, " "))
		}
		if i == def && len(sv.hosts) > 0 {
			how := "the first server"
			if sv.isDefault {
				how = "listen … default_server"
			}
			t.differs(where, "it is the default server (%s): nginx also gives it every request whose Host no server_name matches; its rules match its names only, so such requests are not limited.", how)
		}
		for j, o := range servers {
			for _, name := range o.names {
				hs, ok := serverHost(name)
				if j == i || !ok || strings.HasPrefix(hs[0], "*.") {
					continue
				}
				if hostMatches(sv.hosts, hs[0]) && !slices.Contains(sv.hosts, hs[0]) {
					t.differs(where, "%s, a name of the server at line %d, lies under this server's wildcard: nginx gives it to that server (an exact name wins), and this server's rules match it too.", name, o.line)
				}
			}
		}
	}
	var listens []string
	for _, sv := range servers {
		for _, l := range or2(sv.listens, []string{"80"}) {
			if !slices.Contains(listens, l) {
				listens = append(listens, l)
			}
		}
	}
	if len(listens) > 1 {
		t.differs("listen", "the servers listen on %s: nginx chooses among the servers of the address and port a request came to; sluice's rules match host names on any port, so a server's rules also match its names on the other ports.", strings.Join(listens, ", "))
	}
	for i := range scopes {
		if s := &scopes[i]; s.server >= 0 {
			s.hosts = servers[s.server].hosts
		}
	}
}

// hostMatches reports whether host matches one of hosts, where a
// "*.example.com" matches every name that ends in ".example.com".
func hostMatches(hosts []string, host string) bool {
	for _, h := range hosts {
		if h == host || strings.HasPrefix(h, "*.") && strings.HasSuffix(host, h[1:]) {
			return true
		}
	}
	return false
}

// or2 returns s, or def when s is empty.
func or2(s, def []string) []string {
	if len(s) == 0 {
		return def
	}
	return s
}

// serverNames writes each of names as the configuration would: "" quoted.
func serverNames(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n
		if n == "" {
			out[i] = `""`
		}
	}
	return out
}
