package migrate

import (
	"strconv"
	"strings"
)

// kongLegacyFormat reports whether a decK file's _format_version is that
// of Kong before 3.0 ("1.1"): its router reads a route path as a regular
// expression by its characters, not by a leading "~". A file without one
// is read as Kong 3's.
func kongLegacyFormat(version string) bool {
	major, _, _ := strings.Cut(strings.TrimSpace(version), ".")
	n, err := strconv.Atoi(major)
	return err == nil && n < 3
}

// kongLegacyPath returns route path p of a file of Kong before 3.0 as
// Kong 3 writes it: a path of other characters than letters, digits and
// . - _ ~ / % is a regular expression there, which Kong 3 marks with a
// leading "~" (as decK's file convert writes it).
func kongLegacyPath(p string) string {
	if strings.Trim(p, alnum+".-_~/%") == "" {
		return p
	}
	return "~" + p
}

// kongLegacyPaths marks the regular-expression paths of the routes of a
// file of Kong before 3.0 (kongLegacyPath), and says so once.
func (t *Translation) kongLegacyPaths(f *kongFile) {
	if !kongLegacyFormat(f.FormatVersion) {
		return
	}
	marked := 0
	mark := func(r *kongRoute) {
		for i, p := range r.Paths {
			if q := kongLegacyPath(p); q != p {
				r.Paths[i], marked = q, marked+1
			}
		}
	}
	for i := range f.Services {
		for j := range f.Services[i].Routes {
			mark(&f.Services[i].Routes[j])
		}
	}
	for j := range f.Routes {
		mark(&f.Routes[j])
	}
	if marked > 0 {
		t.same("_format_version "+f.FormatVersion, "Kong before 3.0 reads a route path with other characters than letters, digits and . - _ ~ / %% as a regular expression, without the \"~\" Kong 3.0 asks for: the import reads %s so (as decK's file convert marks them), each reported where it is limited or not.", plural(marked, "such path"))
	}
}

// kongRouteSNIs makes the snis of the routes of f their hosts where they
// have none, and reports at each route that the rule matches the Host
// header where Kong's router matches the TLS server name (SNI): a client
// may send them different, and a route of snis takes no plain HTTP
// request. A route of hosts and snis keeps its hosts, the snis reported
// as not matched. Kong's router tells routes apart by their snis, so two
// routes of different snis and the same paths are no tie.
func (t *Translation) kongRouteSNIs(f *kongFile) {
	conv := func(r *kongRoute) {
		if len(r.SNIs) == 0 {
			return
		}
		where := "route " + or(r.Name, strings.Join(routePaths(*r), " "))
		if len(r.Hosts) > 0 {
			t.differs(where, "Kong's router matches its snis (%s), the TLS server name, beside its hosts; the rule matches the hosts alone, whatever the server name, so requests of other snis on its hosts count too.", strings.Join(r.SNIs, ", "))
			return
		}
		r.Hosts = append([]string(nil), r.SNIs...)
		t.differs(where, "Kong's router matches its snis (%s) against the TLS server name (SNI) of an HTTPS request; the rule matches them as the Host header, which a client may send different from the server name, and counts plain HTTP requests of those hosts too, which the route does not take: check that your clients' SNI and Host agree.", strings.Join(r.SNIs, ", "))
	}
	for i := range f.Services {
		for j := range f.Services[i].Routes {
			conv(&f.Services[i].Routes[j])
		}
	}
	for j := range f.Routes {
		conv(&f.Routes[j])
	}
}

// kongLegacyDefaultPolicy reports plugin configuration c without a policy
// (rate-limiting-advanced: strategy) in a file of Kong before 3.0, which
// the import reads as local: Kong 2.x defaulted it to cluster on a node
// with a database (one count shared by the nodes) and to local only in
// DB-less and hybrid mode; Kong 3.0 made local the default everywhere.
// The file does not say which mode its Kong ran in.
func (t *Translation) kongLegacyDefaultPolicy(c kongConfig) {
	field := "policy"
	if c.advanced {
		field = "strategy"
	}
	t.differs(field+" (unset, Kong before 3.0)", "the plugin sets no %s, and the file is of Kong before 3.0 (_format_version below 3.0), which then counted with %s cluster on a node with a database (one count shared by all nodes, kept in the database) and with %s local only in DB-less or hybrid mode (each node apart; Kong 3.0 made local the default in every mode). The import reads it as local: the memory store, one node's count. If your Kong had a database, the count was shared: set store.type: redis with instances (your number of sluice instances) for one count across sluice's instances, the limit as written. If it was DB-less or hybrid, N nodes admitted up to N times the limit: keep one sluice beside each node on its memory store, or use the Redis store and multiply the quantities by N.", field, field, field)
}
