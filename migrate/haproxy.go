package migrate

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-dev/sluice"
)

// haproxyTable is a stick table: where it is defined, the type of its
// keys and the data it stores (a rate's period; 0 for a count).
type haproxyTable struct {
	name    string
	keyType string
	// keyLen is the bytes of a string or binary key the table keeps (its
	// len, 32 by default); 0 for other types.
	keyLen int
	stores map[string]time.Duration
	// expire is how long an entry lives after it was last tracked (0:
	// not set, or longer than sluice's longest window).
	expire time.Duration
	peers  bool
	line   int
}

// haproxyTrack is a track-sc action: which stick counter, what key, into
// which table (by default its section's own), under which condition.
type haproxyTrack struct {
	sc    int
	fetch string
	table string
	cond  *haproxyCond
	line  int
	// before: tracked before any http-request rule of the section runs
	// (by tcp-request, or in the frontend of a backend's request).
	before bool
}

// haproxyDeny is an action that refuses a request (deny, tarpit, return,
// silent-drop, reject), with the status it answers and its condition.
type haproxyDeny struct {
	action string
	status int
	cond   *haproxyCond
	line   int
	// text is the rule as written up to its condition
	// ("http-request deny deny_status 429").
	text string
}

// haproxyProxy is what a frontend, listen or backend section holds of
// rate limiting.
type haproxyProxy struct {
	sec      *haproxySection
	acls     map[string][]haproxyACL
	trackers []haproxyTrack
	denies   []haproxyDeny
	allows   []haproxyAllow
	// routes, of a frontend or listen: use_backend and default_backend.
	routes []haproxyRoute
}

// haproxyRoute sends the requests of cond (nil: the default) to backend.
type haproxyRoute struct {
	backend string
	cond    *haproxyCond
	line    int
}

// HAProxy translates HAProxy's rate limiting: stick tables storing
// http_req_rate (or conn_cur), track-sc actions that key them, and the
// http-request deny (tarpit, return, silent-drop) or tcp-request reject
// rules whose conditions compare a tracked rate with a threshold. Each
// such rule (each term of its condition, for terms joined by ||) becomes
// a sluice rule matching the rule's other conditions
// (path_beg, path, method, Host, a header; a negated src list becomes
// exempt addresses), keyed as the tracker keys its table. source names
// the file.
func HAProxy(src, source string) (*Translation, error) {
	secs, err := parseHAProxy(src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	t := &Translation{Format: FormatHAProxy, Source: source}
	tables := map[string]*haproxyTable{}
	var proxies []*haproxyProxy
	for i := range secs {
		s := &secs[i]
		switch s.kind {
		case "peers":
			for _, l := range s.lines {
				if l.words[0] == "table" && len(l.words) > 1 {
					tb, err := parseStickTable(s.name+"/"+l.words[1], l.words[2:], l.line)
					if err != nil {
						return nil, fmt.Errorf("%s: %w", source, err)
					}
					tb.peers = true
					tables[tb.name] = tb
				}
			}
		case "defaults":
			for _, l := range s.lines {
				if l.words[0] == "http-request" || l.words[0] == "tcp-request" {
					t.differs(fmt.Sprintf("defaults %s, line %d", s.name, l.line), "not imported: a rule in a defaults section (HAProxy 2.5+) applies to the proxies that use those defaults; write it in each, or as a sluice rule.")
				}
			}
		case "frontend", "listen", "backend":
			p, err := readProxy(s, tables)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", source, err)
			}
			proxies = append(proxies, p)
			t.haproxyClientAddress(s)
		}
	}
	if n := len(proxies); n > MaxPlaces {
		return nil, fmt.Errorf("%s: %w", source, tooManyPlaces(n, "sections"))
	}
	denies := 0 // each a rule or more
	for _, p := range proxies {
		denies += len(p.denies)
	}
	if denies > MaxPlaces {
		return nil, fmt.Errorf("%s: %w", source, tooManyPlaces(denies, "deny and reject rules"))
	}
	var exempts [][]string
	for _, p := range proxies {
		if p.sec.kind == "backend" {
			continue
		}
		for _, d := range p.denies {
			exempts = append(exempts, t.haproxyRules(p.sec.name, d, p, p.trackers, nil, tables)...)
		}
	}
	for _, p := range proxies {
		if p.sec.kind != "backend" || len(p.denies) == 0 {
			continue
		}
		var via []haproxyRoute
		var from []*haproxyProxy
		for _, f := range proxies {
			for _, r := range f.routes {
				if r.backend == p.sec.name {
					via, from = append(via, r), append(from, f)
				}
			}
		}
		if len(via) == 0 {
			t.differs("backend "+p.sec.name, "no frontend sends requests to it (use_backend, default_backend): its rules are not imported.")
			continue
		}
		start := len(t.SluiceRules)
		var names []string // of the routes imported, each route's base name
		var sizes []int    // how many rules each made
		for k, r := range via {
			var route []haproxyAtom
			routeWhere := fmt.Sprintf("backend %s (line %d)", p.sec.name, r.line)
			if r.cond == nil {
				routeWhere = fmt.Sprintf("backend %s (default of %s)", p.sec.name, from[k].sec.name)
			}
			if r.cond != nil {
				if len(r.cond.terms) != 1 || r.cond.unless {
					t.differs(routeWhere, "use_backend's condition is not one conjunction of ACLs: the backend's rules are not imported for it; write them as rules matching its requests.")
					continue
				}
				route = r.cond.terms[0]
			}
			earlier := t.haproxyEarlier(from[k], r, p.sec.name, routeWhere)
			name := p.sec.name
			if len(via) > 1 {
				name = p.sec.name + "-via-" + from[k].sec.name
			}
			var trackers []haproxyTrack
			for _, tr := range from[k].trackers {
				tr.before = true
				trackers = append(trackers, tr)
			}
			trackers = append(trackers, p.trackers...)
			n := len(t.SluiceRules)
			for _, d := range p.denies {
				exempts = append(exempts, t.haproxyRules(name, d, p, trackers, route, tables)...)
			}
			t.haproxyLeaveOutEarlier(n, earlier, routeWhere)
			names, sizes = append(names, name), append(sizes, len(t.SluiceRules)-n)
		}
		t.haproxyJoinRoutes(p.sec.name, start, names, sizes)
	}
	if len(t.SluiceRules) == 0 {
		return nil, fmt.Errorf("%s: no rate limit sluice can import: HAProxy limits rates with a stick table storing http_req_rate, a track-sc action and an http-request deny (or tcp-request reject) comparing sc_http_req_rate with a number%s", source, notImported(t.Differences))
	}
	t.exemptions(exempts)
	if countFrontends(proxies) > 1 {
		t.differs("frontends", "HAProxy applies each frontend's rules to the connections of its bind lines; sluice's reverse proxy has one public listener, so every imported rule applies to every request. Add hosts to the rules of a frontend that serves other host names.")
	}
	t.differs("headers", "HAProxy sends no rate-limit headers; sluice sends RateLimit-Policy and RateLimit (IETF draft) on every response and Retry-After with a problem+json body on 429, so clients can slow down before they are refused.")
	return t, nil
}

// haproxyClientAddress reports what makes src, the address the tables
// count by, another than the connection's peer in section s: set-src (from
// a load balancer's X-Forwarded-For, say) and a bind line's accept-proxy
// (the PROXY protocol). sluice believes such an address only from
// identity.trusted_proxies or proxy_protocol, which the user lists.
func (t *Translation) haproxyClientAddress(s *haproxySection) {
	for _, l := range s.lines {
		where := fmt.Sprintf("%s %s, line %d", s.kind, s.name, l.line)
		switch {
		case (l.words[0] == "http-request" || l.words[0] == "tcp-request") && slices.Contains(l.words[1:min(3, len(l.words))], "set-src"):
			t.differs(where, "%s makes src the address it reads, which the tables count by; sluice counts by the connection's address unless it comes from identity.trusted_proxies, whose X-Forwarded-For it believes: list there the load balancers set-src trusts, or every client behind one counts as its address.", strings.Join(l.words, " "))
		case l.words[0] == "bind" && slices.Contains(l.words, "accept-proxy"):
			t.differs(where, "accept-proxy makes src the client the PROXY protocol header of each connection names; list those load balancers in sluice.yaml's proxy_protocol, or every client behind one counts as its address.")
		}
	}
}

func countFrontends(proxies []*haproxyProxy) int {
	n := 0
	for _, p := range proxies {
		if p.sec.kind != "backend" && (len(p.denies) > 0 || len(p.routes) > 0) {
			n++
		}
	}
	return n
}

// readProxy reads the stick table, ACLs, trackers, refusals and routes of
// a frontend, listen or backend section, adding its table to tables.
func readProxy(s *haproxySection, tables map[string]*haproxyTable) (*haproxyProxy, error) {
	p := &haproxyProxy{sec: s, acls: map[string][]haproxyACL{}}
	for _, l := range s.lines {
		w := l.words
		switch {
		case w[0] == "stick-table":
			tb, err := parseStickTable(s.name, w[1:], l.line)
			if err != nil {
				return nil, err
			}
			tables[s.name] = tb
		case w[0] == "acl":
			if len(w) < 3 {
				return nil, fmt.Errorf("line %d: acl wants a name and a fetch", l.line)
			}
			def, err := parseACL(w[2:], l.line)
			if err != nil {
				return nil, err
			}
			p.acls[w[1]] = append(p.acls[w[1]], def)
		case w[0] == "use_backend" || w[0] == "default_backend":
			if len(w) < 2 {
				return nil, fmt.Errorf("line %d: %s wants a backend", l.line, w[0])
			}
			_, cond, err := splitCond(w[2:], p.acls, l.line)
			if err != nil {
				return nil, err
			}
			if w[0] == "default_backend" {
				cond = nil
			}
			p.routes = append(p.routes, haproxyRoute{backend: w[1], cond: cond, line: l.line})
		case w[0] == "http-request" || w[0] == "tcp-request":
			if err := p.readAction(l); err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}

// readAction reads an http-request or tcp-request line that tracks or
// refuses.
func (p *haproxyProxy) readAction(l haproxyLine) error {
	w := l.words[1:]
	if l.words[0] == "tcp-request" {
		if len(w) == 0 {
			return nil
		}
		w = w[1:] // connection, session, content, inspect-delay
	}
	words, cond, err := splitCond(w, p.acls, l.line)
	if err != nil || len(words) == 0 {
		return err
	}
	action := words[0]
	switch {
	case strings.HasPrefix(action, "track-sc"):
		n, err := strconv.Atoi(strings.TrimPrefix(action, "track-sc"))
		if err != nil || len(words) < 2 {
			return fmt.Errorf("line %d: %s wants a counter number and a key, such as track-sc0 src", l.line, action)
		}
		tr := haproxyTrack{sc: n, fetch: words[1], cond: cond, line: l.line, before: l.words[0] == "tcp-request", table: p.sec.name}
		if len(words) >= 4 && words[2] == "table" {
			tr.table = words[3]
		}
		// A stick counter is tracked by the first track-sc whose condition
		// holds: one after an unconditional one never runs.
		if !slices.ContainsFunc(p.trackers, func(o haproxyTrack) bool { return o.sc == n && o.cond == nil }) {
			p.trackers = append(p.trackers, tr)
		}
	case action == "allow" && l.words[0] == "http-request":
		p.allows = append(p.allows, haproxyAllow{cond: cond, line: l.line})
	case action == "deny" || action == "tarpit" || action == "reject" || action == "silent-drop" || action == "return":
		text := l.words
		if i := slices.IndexFunc(text, func(w string) bool { return w == "if" || w == "unless" }); i >= 0 {
			text = text[:i]
		}
		d := haproxyDeny{action: action, status: 403, cond: cond, line: l.line, text: strings.Join(text, " ")}
		switch action {
		case "tarpit":
			d.status = 500
		case "return":
			d.status = 200
		case "reject", "silent-drop":
			d.status = 0
		}
		for i := 1; i+1 < len(words); i++ {
			if words[i] == "deny_status" || words[i] == "status" {
				if n, err := strconv.Atoi(words[i+1]); err == nil {
					d.status = n
				}
			}
		}
		p.denies = append(p.denies, d)
	}
	return nil
}

// parseStickTable reads the arguments of stick-table (or a peers table).
func parseStickTable(name string, words []string, line int) (*haproxyTable, error) {
	tb := &haproxyTable{name: name, stores: map[string]time.Duration{}, line: line}
	for i := 0; i+1 < len(words); i++ {
		switch words[i] {
		case "type":
			tb.keyType = words[i+1]
			if tb.keyType == "string" || tb.keyType == "binary" {
				tb.keyLen = 32
			}
		case "expire":
			if d, err := haproxyDuration(words[i+1]); err == nil {
				tb.expire = d // one longer than any window never matters
			}
		case "len":
			n, err := strconv.Atoi(words[i+1])
			if err != nil || n < 1 {
				return nil, fmt.Errorf("line %d: stick-table len %q is not a length", line, words[i+1])
			}
			tb.keyLen = n
		case "store":
			for _, item := range strings.Split(words[i+1], ",") {
				data, arg, _ := strings.Cut(strings.TrimSuffix(item, ")"), "(")
				var period time.Duration
				if arg != "" {
					d, err := haproxyDuration(arg)
					if err != nil {
						return nil, fmt.Errorf("line %d: store %s: %w", line, item, err)
					}
					period = d
				}
				tb.stores[data] = period
			}
		}
	}
	if tb.keyType == "" {
		return nil, fmt.Errorf("line %d: stick-table without a type", line)
	}
	return tb, nil
}

// haproxyDuration reads an HAProxy time: a number with a unit of us, ms,
// s, m, h or d; milliseconds without one.
func haproxyDuration(s string) (time.Duration, error) {
	num := strings.TrimRight(s, "usmhd")
	unit := s[len(num):]
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a time (such as 10s)", s)
	}
	scale := map[string]time.Duration{"": time.Millisecond, "us": time.Microsecond, "ms": time.Millisecond,
		"s": time.Second, "m": time.Minute, "h": time.Hour, "d": 24 * time.Hour}[unit]
	if scale == 0 {
		return 0, fmt.Errorf("%q: unknown unit %q (us, ms, s, m, h, d)", s, unit)
	}
	if n > int64(sluice.MaxWindow/scale) {
		return 0, fmt.Errorf("%q is longer than sluice's longest window", s)
	}
	return time.Duration(n) * scale, nil
}

// notImported lists the places ds reports as not imported, each with its
// reason, as the end of an error refusing a file: "" when there are none.
func notImported(ds []Difference) string {
	var b strings.Builder
	for _, d := range ds {
		if !d.Same && strings.Contains(d.Text, "not imported") {
			fmt.Fprintf(&b, "; %s: %s", d.Where, strings.TrimSuffix(d.Text, "."))
		}
	}
	return b.String()
}

// haproxyJoinRoutes joins the rules that backend's routes made,
// t.SluiceRules[start:] (sizes[k] of them from route k, named after
// names[k]): the backend's table counts a key once whichever use_backend
// sent the request, so where each route made the same rules but for what
// they match, rule j of every route becomes one rule of an alternative per
// route, named after the backend. Rules that count otherwise (another
// table, key or limit for some route) are left as they are.
func (t *Translation) haproxyJoinRoutes(backend string, start int, names []string, sizes []int) {
	if len(sizes) < 2 || sizes[0] == 0 || slices.ContainsFunc(sizes, func(n int) bool { return n != sizes[0] }) {
		return
	}
	n, rules := sizes[0], t.SluiceRules[start:]
	counts := func(a, b Rule) bool {
		return slices.Equal(a.Key, b.Key) && a.HeaderFrom == b.HeaderFrom && a.Fallback == b.Fallback && slices.Equal(a.Plans, b.Plans) &&
			(a.Cost == nil) == (b.Cost == nil) && (a.Cost == nil || *a.Cost == *b.Cost) && slices.Equal(a.Limits, b.Limits) && len(a.Any)+len(b.Any) == 0
	}
	for k := 1; k < len(sizes); k++ {
		for j := range n {
			a, b := rules[j], rules[k*n+j]
			if !counts(a, b) {
				return
			}
			if !slices.EqualFunc(a.Except, b.Except, sameRuleMatch) {
				// except: is the rule's, not an alternative's.
				t.differs("backend "+backend, "its use_backend lines leave out different requests (those of earlier use_backend lines, or of allows), so its rules stay one per route, each its own count, where its table counts a key once whichever route sent the request: a client gets each route's limit. Join them by hand into one rule whose match: is a list if the routes' requests do not overlap the left-out ones.")
				return
			}
		}
	}
	joined := make([]Rule, n)
	for j := range n {
		q := rules[j]
		q.Paths, q.Hosts, q.Methods, q.Headers, q.ExceptPaths, q.Any = nil, nil, nil, nil, nil, nil
		for k := range sizes {
			q.Any = append(q.Any, rules[k*n+j].alternatives()[0])
		}
		if rest, ok := strings.CutPrefix(q.Name, names[0]); ok {
			q.Name = backend + rest
		}
		joined[j] = q
	}
	t.SluiceRules = t.SluiceRules[:start]
	for _, q := range joined {
		q.Name = t.ruleName(q.Name)
		t.SluiceRules = append(t.SluiceRules, q)
	}
	t.same("backend "+backend, "%d use_backend lines send requests to it, and its table counts a key once whichever sent it: each of its rules has an alternative per route (match: a list), one count across them.", len(sizes))
}
