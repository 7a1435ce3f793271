package migrate

import (
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// nginxZone is one limit_req_zone, or one limit_conn_zone (conn).
type nginxZone struct {
	name, key    string
	conn         bool
	quantity     int64
	window       time.Duration
	size         string
	sync         bool
	line         int
	used         bool
	burst, delay int64 // of its first limit_req
	n            int64 // of its first limit_conn
	nodelay      bool
	dryRun       bool
	// allow, for a key of nginx's allowlist shape (a map of a geo block),
	// are the address ranges it leaves out; the others count by address.
	allow []string
	// orAddress, for a key of a map that reads a variable when it is set
	// and the address otherwise (see orAddressMap), is that variable.
	orAddress string
	// methods, for a key of a map of $request_method that is the address
	// for these methods and empty for the others (see methodMap), are the
	// methods nginx counts.
	methods []string
	// claims: the configuration verifies tokens (identity.jwt), so a key's
	// $jwt_claim_ variables are verified claims sluice can key by.
	claims bool
}

// nginxUse is one limit_req, or one limit_conn (conn) of n requests at once.
type nginxUse struct {
	zone         string
	conn         bool
	n            int64
	burst, delay int64
	nodelay      bool
	line         int
}

// nginxScope is the limit_req and limit_conn set in force at one level.
type nginxScope struct {
	where   string   // "server", "location /api/"
	pattern []string // ServeMux patterns of a location; nil for a server
	uses    []nginxUse
	status  int
	dryRun  bool
	// connStatus and connDryRun are limit_conn_status and
	// limit_conn_dry_run, for the limit_conn uses.
	connStatus int
	connDryRun bool
	// server is the index of the server block it lies in (-1: none);
	// hosts are that server's rule hosts, when there are several servers
	// (nil: every host).
	server int
	hosts  []string
	// free: a location without limits whose paths cost 0, so that no rule
	// counts them (see nginxCosts).
	free bool
}

// dryRunOf reports whether use u only reports at s: limit_req_dry_run, or
// limit_conn_dry_run for a limit_conn.
func (s *nginxScope) dryRunOf(u nginxUse) bool {
	if u.conn {
		return s.connDryRun
	}
	return s.dryRun
}

// connLease is how long an imported concurrency limit holds a slot that
// is not given back: sluice's reverse proxy gives it back when the response
// ends; nginx holds one for as long as the request runs.
const connLease = 10 * time.Minute

// concurrencyLimit is the limit, called name, of n requests of a key in
// flight at once, as the source's (source) says: a slot not given back is
// freed after connLease.
func concurrencyLimit(name string, n int64, source string) Limit {
	return Limit{Name: name, Algorithm: "concurrency", Quantity: n, Window: connLease, Source: source}
}

// leaseNote reports, at where, how an imported concurrency limit gives its
// slots back where proxy (the source: "nginx") gives them back when the
// request ends: behind a forward-auth check (the source's forwardAuth)
// sluice never sees the end, so places (where the limits apply) belong
// behind sluice's reverse proxy.
func (t *Translation) leaseNote(where, proxy, forwardAuth, places string) {
	t.differs(where, "sluice's reverse proxy gives a slot back when the response ends, as %[1]s does when the request does; behind %[2]s (forward-auth) sluice never sees the end, so each slot is held for the whole lease (%[4]s): serve %[3]s through sluice's reverse proxy. A slot not given back (a request running longer than the lease, a crash) is freed after %[4]s, where %[1]s holds it as long as the request runs.", proxy, forwardAuth, places, formatWindow(connLease))
}

// nginxStockInclude are the files nginx's packages ship for include that
// hold no limits (MIME types, parameters passed to upstreams).
var nginxStockInclude = map[string]bool{
	"mime.types": true, "fastcgi_params": true, "fastcgi.conf": true, "proxy_params": true, "uwsgi_params": true, "scgi_params": true,
}

// Nginx translates nginx's limit_req_zone and limit_req directives, and
// limit_conn_zone and limit_conn, found in a whole nginx.conf or in a file
// included in its http block. source names the file in the configuration
// and report.
func Nginx(src, source string) (*Translation, error) {
	ds, err := parseNginx(src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	t := &Translation{Format: FormatNginx, Source: source, Costs: map[string]int64{}}
	zones := map[string]*nginxZone{}
	geos, maps, orAddress := map[string]*nginxGeo{}, map[string]*nginxMap{}, map[string]string{}
	methods := map[string][]string{}
	var order []string
	var scopes []nginxScope
	var servers []nginxServer
	directives := 0 // limit_req and limit_conn, each a rule's setting at most
	var realIP nginxRealIP
	var includes []string // "line N: include <files>", which the import does not read
	var streams []string  // the limits of stream blocks, not imported (nginxStream)
	var walk func(ds []directive, where string, pattern []string, inherited nginxScope) error
	walk = func(ds []directive, where string, pattern []string, inherited nginxScope) error {
		own := nginxScope{where: where, pattern: pattern, status: inherited.status, dryRun: inherited.dryRun,
			connStatus: inherited.connStatus, connDryRun: inherited.connDryRun, server: inherited.server}
		var reqs, conns []nginxUse // this level's own
		for _, d := range ds {
			switch d.name {
			case "limit_req_zone", "limit_conn_zone":
				parse := parseZone
				if d.name == "limit_conn_zone" {
					parse = parseConnZone
				}
				z, err := parse(d)
				if err != nil {
					return err
				}
				if zones[z.name] != nil {
					return fmt.Errorf("line %d: zone %s is defined twice", d.line, excerpt(z.name))
				}
				zones[z.name], order = z, append(order, z.name)
			case "limit_req":
				u, err := parseUse(d)
				if err != nil {
					return err
				}
				reqs = append(reqs, u)
				if directives++; directives > MaxPlaces {
					return tooManyPlaces(directives, "limit_req and limit_conn directives")
				}
			case "limit_conn":
				u, err := parseConnUse(d)
				if err != nil {
					return err
				}
				conns = append(conns, u)
				if directives++; directives > MaxPlaces {
					return tooManyPlaces(directives, "limit_req and limit_conn directives")
				}
			case "limit_req_status", "limit_conn_status":
				if len(d.args) != 1 {
					return fmt.Errorf("line %d: %s takes one status", d.line, d.name)
				}
				s, err := strconv.Atoi(d.args[0])
				if err != nil || s < 400 || s > 599 {
					return fmt.Errorf("line %d: %s %s is not a status in 400..599", d.line, d.name, excerpt(d.args[0]))
				}
				if d.name == "limit_req_status" {
					own.status = s
				} else {
					own.connStatus = s
				}
			case "geo":
				if name, g, ok := parseGeo(d); ok {
					geos[name] = g
				}
			case "map":
				if name, src, ok := orAddressMap(d); ok {
					orAddress[name] = src
				} else if name, ms, ok := methodMap(d); ok {
					methods[name] = ms
				} else if name, m, ok := parseMap(d); ok {
					maps[name] = m
				}
			case "auth_jwt_key_file", "auth_jwt_key_request":
				t.nginxJWTKeys(d)
			case "include":
				if len(d.args) != 1 || !nginxStockInclude[filepath.Base(d.args[0])] {
					includes = append(includes, fmt.Sprintf("line %d: include %s", d.line, strings.Join(d.args, " ")))
				}
			case "set_real_ip_from", "real_ip_header", "real_ip_recursive":
				if err := realIP.read(d); err != nil {
					return err
				}
			case "limit_req_dry_run":
				own.dryRun = len(d.args) == 1 && d.args[0] == "on"
			case "limit_conn_dry_run":
				own.connDryRun = len(d.args) == 1 && d.args[0] == "on"
			}
		}
		// Each directive is inherited only by a level that has none of
		// its own.
		if len(reqs) == 0 {
			reqs = slices.DeleteFunc(slices.Clone(inherited.uses), func(u nginxUse) bool { return u.conn })
		}
		if len(conns) == 0 {
			conns = slices.DeleteFunc(slices.Clone(inherited.uses), func(u nginxUse) bool { return !u.conn })
		}
		own.uses = append(reqs, conns...)
		if scopes = append(scopes, own); len(scopes) > MaxPlaces {
			return tooManyPlaces(len(scopes), "locations and servers")
		}
		for _, d := range ds {
			if !d.hasBlock {
				continue
			}
			switch d.name {
			case "http":
				if err := walk(d.block, d.name, nil, own); err != nil {
					return err
				}
			case "stream":
				streams = append(streams, t.nginxStream(d)...)
			case "server":
				in := own
				servers, in.server = append(servers, parseServer(d)), len(servers)
				if err := walk(d.block, d.name, nil, in); err != nil {
					return err
				}
			case "location":
				p, ok := locationPatterns(d.args)
				if !ok {
					t.differs("location "+strings.Join(d.args, " "), "%s", unpatternedLocation(d))
					continue
				}
				if err := walk(d.block, "location "+strings.Join(d.args, " "), p, own); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(ds, "http", nil, nginxScope{status: 503, connStatus: 503, server: -1}); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	if len(includes) == 0 && !slices.ContainsFunc(scopes, func(s nginxScope) bool { return len(s.uses) > 0 }) {
		return nil, fmt.Errorf("%s: %w", source, t.nginxNothing(streams))
	}
	if len(servers) > 1 {
		// nginx gives every request to a server, whose scope holds the
		// limits it inherits: the levels above apply through them.
		for i := range scopes {
			if scopes[i].server < 0 {
				scopes[i].uses = nil
			}
		}
	}
	t.nginxServerHosts(servers, scopes)
	t.nginxRealIP(realIP)
	for _, inc := range includes {
		where, files, _ := strings.Cut(inc, ": include ")
		t.differs(where+" include", "nginx reads %s in place of the include; the import reads %s alone, so the limit_req_zone, limit_req, limit_conn, server and location blocks in them are not imported: write them in place of the include and import the file again.", files, source)
	}
	for _, z := range zones {
		z.allow, _ = allowlist(z.key, geos, maps)
		z.orAddress = orAddress[z.key]
		z.methods = methods[z.key]
		z.claims = t.JWT != nil
	}
	if err := t.nginxLimits(zones, order, scopes, includes); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return t, nil
}

// nginxJWTKeys reads where nginx Plus's auth_jwt finds its keys: a key
// file (a JWK Set) becomes identity.jwt's jwks_file, so that zones keyed by
// $jwt_claim_ variables count by verified claims; a key request (a
// subrequest to the provider) cannot be read, and is reported.
func (t *Translation) nginxJWTKeys(d directive) {
	where := fmt.Sprintf("line %d %s", d.line, d.name)
	switch {
	case d.name == "auth_jwt_key_request" || len(d.args) != 1:
		t.differs(where, "nginx Plus fetches its JWT keys by a subrequest; set identity.jwt's jwks_url to the identity provider's JWK Set yourself, and key rules by claim:<name> where nginx keys by $jwt_claim_<name>.")
	case !filepath.IsAbs(d.args[0]) || strings.Contains(d.args[0], "$"):
		t.differs(where, "%s is not an absolute path: set identity.jwt's jwks_file to the key file yourself.", d.args[0])
	case t.JWT != nil:
		if t.JWT.JWKSFile != d.args[0] {
			t.differs(where, "sluice verifies tokens with one key set (identity.jwt): %s is not imported; %s is.", d.args[0], t.JWT.JWKSFile)
		}
	default:
		t.JWT = &JWT{JWKSFile: d.args[0]}
		t.same(where, "tokens verified with the JWK Set in %s: sluice's identity.jwt (jwks_file); a zone keyed by $jwt_claim_<name> counts by that claim of the verified token (claim:<name>; user for sub).", d.args[0])
		t.differs(where, "nginx Plus refuses a request whose token does not verify (401, auth_jwt); sluice does not authenticate: it passes such a request on, for the upstream to refuse, and limits it by its address.")
	}
}

// locationPatterns turns a location's arguments into ServeMux patterns:
// a prefix "/api/" is itself; a prefix without the trailing slash "/api" is
// "/api" and "/api/"; "= /login" is exact. ok is false for regular
// expressions, named locations and a path with a "*" (nginx matches it as
// written; sluice refuses it as a glob written by mistake).
func locationPatterns(args []string) (patterns []string, ok bool) {
	var mod, p string
	switch len(args) {
	case 1:
		p = args[0]
	case 2:
		mod, p = args[0], args[1]
	default:
		return nil, false
	}
	if (mod != "" && mod != "=" && mod != "^~") || !strings.HasPrefix(p, "/") || strings.ContainsAny(p, "{}$ *") {
		return nil, false
	}
	switch {
	case mod == "=" && strings.HasSuffix(p, "/"):
		patterns = []string{p + "{$}"}
	case mod == "=" || strings.HasSuffix(p, "/"):
		patterns = []string{p}
	default:
		patterns = []string{p, p + "/"}
	}
	for _, pat := range patterns {
		if !validPattern(pat) {
			return nil, false
		}
	}
	return patterns, true
}

// validPattern reports whether ServeMux accepts pattern, and a rule too:
// it has no empty segment ("//").
func validPattern(pattern string) (ok bool) {
	if strings.Contains(pattern, "//") || strings.Contains(pattern, "*") {
		return false
	}
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	http.NewServeMux().Handle(pattern, http.NotFoundHandler())
	return true
}

// nginxLimits turns the zones in use into limits or rules, costs and
// differences. When every limited place uses the same zones, each with one
// setting, and every zone counts clients by address or counts everyone
// together, the zones become the plan's limits and global limits. Otherwise
// each setting of a zone (its burst, delay and nodelay) becomes a rule of
// the paths whose location uses it, keyed as the zone is (nginxRules).
// includes are the file's include directives, whose files may use its
// zones: a zone in use nowhere in the file is then a difference, and a
// file that uses none is refused.
func (t *Translation) nginxLimits(zones map[string]*nginxZone, order []string, scopes []nginxScope, includes []string) error {
	limited := map[string]bool{} // scopes' zone sets, to find locations that differ
	everywhere, varies := false, false
	status, dryRun, conns := 0, false, false
	connStatus, connDryRun := 0, false
	for _, s := range scopes {
		for _, u := range s.uses {
			z := zones[u.zone]
			directive := map[bool]string{false: "limit_req", true: "limit_conn"}[u.conn]
			switch {
			case z == nil:
				return fmt.Errorf("line %d: %s uses zone %s, which no %s_zone defines in this file: when it is declared in the file that includes this one (nginx.conf's http block, for a site in sites-enabled/ or conf.d/), write this file in place of its include there and import that file", u.line, directive, excerpt(u.zone), directive)
			case z.conn != u.conn:
				return fmt.Errorf("line %d: %s uses zone %s, which is not a %s_zone", u.line, directive, excerpt(u.zone), directive)
			case !z.used:
				z.used, z.burst, z.delay, z.nodelay, z.n, z.dryRun = true, u.burst, u.delay, u.nodelay, u.n, s.dryRunOf(u)
			case z.burst != u.burst || z.delay != u.delay || z.nodelay != u.nodelay || z.n != u.n || z.dryRun != s.dryRunOf(u):
				varies = true
			}
			// The status compared is one other than 429 where any place
			// refuses with one.
			if u.conn {
				conns, connDryRun = true, connDryRun || s.connDryRun
				if connStatus == 0 || s.connStatus != 429 {
					connStatus = s.connStatus
				}
			} else {
				dryRun = dryRun || s.dryRun
				if status == 0 || s.status != 429 {
					status = s.status
				}
			}
		}
		if len(s.uses) > 0 {
			set := useSet(s.uses)
			limited[set] = true
			if s.pattern == nil {
				everywhere = true
			}
		}
	}
	if len(includes) > 0 && !slices.ContainsFunc(order, func(name string) bool { return zones[name].used }) {
		return fmt.Errorf("no limit_req or limit_conn in this file, which includes others (%s) that the import does not read: write them in place of the include and import the file again", strings.Join(includes, "; "))
	}
	t.nginxAllowlists(zones, order)
	rules := len(limited) > 1 || varies || slices.ContainsFunc(scopes, func(s nginxScope) bool { return len(s.uses) > 0 && s.hosts != nil })
	for _, name := range order {
		// With identity.jwt, a plan's limits count each verified token's
		// subject: a zone that counts by something else is a rule.
		k, _ := zones[name].keyKind()
		if zones[name].used && (k == keyAttrs || len(zones[name].methods) > 0 || t.JWT != nil && k != keyConstant) {
			rules = true
		}
		if zones[name].used && t.JWT != nil && k == keyAddress {
			t.same("zone "+name+" key", "with identity.jwt sluice's plan limits count each verified token's subject; nginx counts %s by address whatever the token: a rule keyed by the address (ip/32/128), not a plan limit.", zones[name].key)
		}
	}
	if !everywhere {
		// Only some locations are limited: everything else costs nothing.
		t.Costs["/"] = 0
		t.same("paths", "limit_req and limit_conn appear only in some locations: requests elsewhere cost 0 (\"/\": 0) and the limited locations cost 1, so the same paths are limited.")
		t.nginxCosts(scopes, rules)
	}
	for _, s := range scopes {
		if s.pattern == nil || len(s.uses) == 0 {
			continue
		}
		if len(s.pattern) == 2 {
			t.differs(s.where, "nginx's prefix %s also matches %sx…; the ServeMux patterns %s and %s match the path itself and what lies below it, not other names that start the same way.", s.pattern[0], s.pattern[0], s.pattern[0], s.pattern[1])
		}
	}
	for _, name := range order {
		z := zones[name]
		switch {
		case !z.used && len(includes) > 0:
			t.differs("zone "+z.name, "used by no limit_req or limit_conn in this file: not imported. If an included file uses it, write that file in place of its include and import again.")
			continue
		case !z.used:
			t.same("zone "+z.name, "defined but used by no limit_req or limit_conn: not imported.")
			continue
		}
		t.nginxZoneNotes(z)
		if !rules {
			l := t.nginxLimit(z, nginxUse{zone: z.name, conn: z.conn, n: z.n, burst: z.burst, delay: z.delay, nodelay: z.nodelay}, t.limitName(z.name), "zone "+z.name)
			l.Shadow = z.dryRun
			t.nginxKey(z, &l)
			t.Limits = append(t.Limits, l)
		}
	}
	if rules {
		t.nginxRules(zones, scopes)
	}
	if conns {
		both := slices.ContainsFunc(scopes, func(s nginxScope) bool {
			return slices.ContainsFunc(s.uses, func(u nginxUse) bool { return u.conn }) && slices.ContainsFunc(s.uses, func(u nginxUse) bool { return !u.conn })
		})
		t.nginxConnNotes(connStatus, connDryRun, both)
	}
	if status > 0 {
		if status != 429 {
			t.differs("limit_req_status", "nginx refused with %d; sluice refuses with 429 Too Many Requests, Retry-After and a problem+json body saying which limit and when to retry. Clients that treat %d specially need to know.", status, status)
		} else {
			t.same("limit_req_status", "429, as sluice answers (sluice adds Retry-After and a problem+json body).")
		}
		if dryRun {
			t.same("limit_req_dry_run", "on: the limits are imported in shadow mode, reported and never enforced, as before.")
		}
		t.differs("clock", "nginx reads time in whole milliseconds, once per event-loop iteration; sluice in microseconds, per request. A request within a millisecond of the moment its slot frees may be decided differently.")
	}
	if len(t.Limits) > 0 || len(t.SluiceRules) > 0 {
		t.differs("headers", "nginx sends no rate-limit headers; sluice sends RateLimit-Policy and RateLimit (IETF draft) on every response, so clients can slow down before they are refused.")
	}
	return nil
}

// nginxConnNotes compares what limit_conn does beyond its count; both:
// some place uses limit_conn and limit_req together.
func (t *Translation) nginxConnNotes(status int, dryRun, both bool) {
	if status != 429 {
		t.differs("limit_conn_status", "nginx refused with %d; sluice refuses with 429 Too Many Requests, Retry-After and a problem+json body.", status)
	} else {
		t.same("limit_conn_status", "429, as sluice answers.")
	}
	if dryRun {
		t.same("limit_conn_dry_run", "on: the concurrency limits are imported in shadow mode.")
	}
	t.leaseNote("limit_conn", "nginx", "auth_request", "limit_conn's locations")
	if both {
		t.differs("limit_conn with limit_req", "nginx runs limit_req before limit_conn, each deciding alone: a request limit_conn refuses has already spent its place in limit_req's bucket, where sluice decides a location's limits in one call and a refusal spends nothing, so after limit_conn's refusals sluice admits more than nginx. And nginx takes the connection slot only once limit_req's delay is over (without nodelay), where sluice holds the slot while the request waits in the queue, so it may refuse a request nginx would have admitted. The two agree where limit_conn refuses nothing: compare them during the shadow rollout where it does.")
	}
}

func useSet(uses []nginxUse) string {
	var names []string
	for _, u := range uses {
		names = append(names, u.zone)
	}
	slices.Sort(names)
	return strings.Join(names, ",")
}

// nginxPerMinuteNote says how nginx's rate of quantity per window differs
// from sluice's exact one: nginx keeps a rate in thousandths of a request
// per second, rounded down, so a rate per minute whose thousandths are not
// whole drains slower. It returns "" for a rate nginx keeps exactly.
func nginxPerMinuteNote(quantity int64, window time.Duration) string {
	if window != time.Minute || quantity*1000%60 == 0 {
		return ""
	}
	return fmt.Sprintf("nginx keeps the rate in thousandths of a request per second, so %dr/m drains at %d/1000 per second instead of %.3f: nginx is slightly slower to free a slot than sluice's exact %d per minute.",
		quantity, quantity*1000/60, float64(quantity)/60, quantity)
}

// nginxZoneNotes compares what a zone in use does beyond its bucket: its
// size, its sharing between instances, nginx's rate in thousandths.
func (t *Translation) nginxZoneNotes(z *nginxZone) {
	where := "zone " + z.name
	if note := nginxPerMinuteNote(z.quantity, z.window); note != "" {
		t.differs(where, "%s", note)
	}
	if z.sync {
		t.Instances, t.OnStoreError = 2, "local"
		t.differs(where, "sync shares the zone between nginx instances (NGINX Plus): sluice shares state through Redis; set store.redis.instances to your number of instances.")
	}
	t.differs(where+" size", "a zone of %s holds about %d states and, when full, drops the least recently used ones (refusing with the status when it cannot); sluice's memory store keeps up to max_keys (1,000,000 by default) and never evicts a client that is being refused.",
		z.size, zoneStates(z.size))
}

// nginxLimit returns the limit, called name, that decides as limit_req u
// on zone z does, and says why (where names it in the report).
func (t *Translation) nginxLimit(z *nginxZone, u nginxUse, name, where string) Limit {
	if u.conn {
		t.same(where, "nginx refuses a request when %d requests of its key are being processed; a concurrency limit of %d admits the same, and gives a slot back when a response ends.", u.n, u.n)
		return concurrencyLimit(name, u.n, fmt.Sprintf("limit_conn_zone %s; limit_conn %s %d", z.key, z.name, u.n))
	}
	l := Limit{Name: name, Quantity: z.quantity, Window: z.window}
	unit := "r/s"
	if z.window == time.Minute {
		unit = "r/m"
	}
	l.Source = fmt.Sprintf("limit_req_zone %s rate=%d%s, burst=%d", z.key, z.quantity, unit, u.burst)
	switch {
	case u.nodelay || u.delay >= u.burst:
		l.Algorithm, l.Burst = "gcra", u.burst+1
		if u.nodelay {
			l.Source += " nodelay"
		} else if u.delay > 0 {
			l.Source += fmt.Sprintf(" delay=%d", u.delay)
		}
		t.same(where, "nginx admits a request when its bucket — one plus the previous excess drained at %d per %s — holds at most burst+1 = %d; gcra %d per %s with burst %d admits exactly the same requests, and refuses the same ones without consuming anything.",
			z.quantity, formatWindow(z.window), u.burst+1, z.quantity, formatWindow(z.window), u.burst+1)
	default:
		l.Algorithm, l.Burst = "leaky-bucket", u.delay+1
		l.MaxWait = longestWait(int64(u.burst-u.delay), z.window, int64(z.quantity))
		if u.delay > 0 {
			l.Source += fmt.Sprintf(" delay=%d", u.delay)
		}
		t.same(where, "without nodelay nginx holds each request until its excess above delay=%d has drained, refusing those that would wait beyond burst=%d; a leaky-bucket queue of burst %d draining %d per %s with max_wait %s admits the same requests after the same waits.",
			u.delay, u.burst, l.Burst, z.quantity, formatWindow(z.window), l.MaxWait)
		t.differs(where+" held requests", "while nginx holds requests its bucket sometimes drains as if from a moment up to a fraction of a slot away from the arrivals (its error log's excess shows it): replayed side by side, each client's total admissions agree, but one admission can move into the neighbouring second.")
	}
	return l
}

// longestWait is the wait of the n-th request nginx holds at quantity per
// window, n·window/quantity, rounded up to the whole microseconds that
// max_wait is kept in: the waits of a queue are whole slots apart, a slot
// is a microsecond or more at any rate nginx takes, so the rounding admits
// no other request.
func longestWait(n int64, window time.Duration, quantity int64) time.Duration {
	us := n * int64(window/time.Microsecond)
	return time.Duration((us+quantity-1)/quantity) * time.Microsecond
}

// unpatternedLocation says what the import does with location d, a
// regular-expression or named location, which no ServeMux pattern can
// match: which of its limits are not imported, and how its requests count.
func unpatternedLocation(d directive) string {
	var limits []string
	var collect func(ds []directive)
	collect = func(ds []directive) {
		for _, e := range ds {
			switch {
			case e.name == "limit_req" || e.name == "limit_conn":
				limits = append(limits, e.name+" "+strings.Join(e.args, " "))
			case e.name == "location" || e.name == "if":
				collect(e.block)
			}
		}
	}
	collect(d.block)
	lost := "it sets no limit_req or limit_conn"
	if len(limits) > 0 {
		lost = "its " + strings.Join(limits, "; ") + " is not imported"
		if len(limits) > 1 {
			lost = "its " + strings.Join(limits, "; ") + " are not imported"
		}
	}
	if len(d.args) == 1 && strings.HasPrefix(d.args[0], "@") {
		return "a named location takes requests by internal redirect (try_files, error_page), which no rule can match: " + lost + "; limit them in the service, or where the redirect comes from."
	}
	return "a regular-expression location cannot be a rule's pattern: " + lost + ", and the requests it takes count as the prefix locations holding them are, where nginx applies this location's limits instead (its own, else those of its server). Express it as prefixes (location = /exact/path, location /prefix/) and import again, or limit it in the service."
}
