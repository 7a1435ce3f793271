package migrate

import (
	"fmt"
	"math/bits"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
)

// haproxyRules translates refusal d of proxy p into rules named after
// name, with trackers the stick counters tracked when d runs and route the
// conditions that sent the request to p (a backend). HAProxy refuses when
// any term of d's condition (as orTerms writes it) holds, as it would for
// one rule per term, and as sluice refuses when any rule's limit is over:
// each term that compares a counter becomes a rule of its own. A term that
// compares none refuses every request it matches, which no sluice limit
// does: it is reported, with the rule to keep in HAProxy. haproxyRules
// returns, for each rule it made, the client addresses the rule leaves out
// (a negated src ACL); it says why of each term it does not import.
func (t *Translation) haproxyRules(name string, d haproxyDeny, p *haproxyProxy, trackers []haproxyTrack, route []haproxyAtom, tables map[string]*haproxyTable) [][]string {
	where := fmt.Sprintf("%s %s, line %d", p.sec.kind, p.sec.name, d.line)
	if d.cond == nil {
		t.differs(where, "not imported: %s without a condition refuses every request; sluice has no such limit (leave it in HAProxy, or refuse those requests in the upstream).", d.action)
		return nil
	}
	terms, ok := d.cond.orTerms()
	if ok {
		terms, ok = splitCounterDefs(terms)
	}
	if !ok {
		t.differs(where, "not imported: written with if, this unless condition is more than %d terms joined by ||; write it with if, in fewer terms.", maxOrTerms)
		return nil
	}
	counts := func(atoms []haproxyAtom) bool {
		return slices.ContainsFunc(atoms, func(at haproxyAtom) bool {
			_, ok := counterOf(at.defs[0].fetch)
			return len(at.defs) == 1 && ok
		})
	}
	switch {
	case !slices.ContainsFunc(terms, counts):
		// A refusal that compares no counter is not rate limiting, but for
		// a variable compared with a number, which set-var may have set
		// from a counter.
		for _, term := range terms {
			for _, at := range term {
				if def := at.defs[0]; strings.HasPrefix(def.fetch, "var(") {
					if _, _, err := threshold(def.values); err == nil {
						t.differs(where, "not imported: %s compares a variable with a number, and sluice reads a rate only from a counter in the condition itself: if set-var gave the variable a counter, compare the counter there (such as { sc_http_req_rate(0) %s }) and import again.", def.fetch, strings.Join(def.values, " "))
						return nil
					}
				}
			}
		}
		return nil
	case len(terms) == 1:
		if ex, ok := t.haproxyRule(name, where, d, terms[0], p, trackers, route, tables); ok {
			return [][]string{ex}
		}
		return nil
	}
	var exempts [][]string
	for _, term := range terms {
		text := termText(term)
		where := where + ", term " + text
		if !counts(term) {
			t.differs(where, "not imported: it compares no counter, so HAProxy refuses every request it matches, at any rate; no sluice limit refuses so. Keep `%s if %s` in HAProxy in front of sluice (or refuse those requests in the upstream); each term that compares a counter is translated as a rule of its own.", d.text, text)
			continue
		}
		if ex, ok := t.haproxyRule(name, where, d, term, p, trackers, route, tables); ok {
			exempts = append(exempts, ex)
		}
	}
	return exempts
}

// haproxyRule translates atoms, a conjunction of ACLs on which refusal d
// of proxy p refuses, into a rule named after name (see haproxyRules);
// where names d in the report. It reports the client addresses the rule
// leaves out (a negated src ACL), and false, having said why, when atoms
// are no rate limit sluice can import.
func (t *Translation) haproxyRule(name, where string, d haproxyDeny, atoms []haproxyAtom, p *haproxyProxy, trackers []haproxyTrack, route []haproxyAtom, tables map[string]*haproxyTable) ([]string, bool) {
	skip := func(format string, args ...any) ([]string, bool) {
		t.differs(where, "not imported: "+format, args...)
		return nil, false
	}
	var rate *haproxyAtom
	var rest []haproxyAtom
	for i := range atoms {
		if len(atoms[i].defs) == 1 {
			if _, ok := counterOf(atoms[i].defs[0].fetch); ok {
				if rate != nil {
					return skip("two counters in one condition (both must be over); sluice refuses when any limit is over: write a rule for each.")
				}
				rate = &atoms[i]
				continue
			}
		}
		rest = append(rest, atoms[i])
	}
	if rate == nil {
		return nil, false // a refusal that compares no counter: not rate limiting
	}
	def := rate.defs[0]
	c, _ := counterOf(def.fetch)
	most, over, err := threshold(def.values)
	if err != nil {
		return skip("%s: %v.", def.fetch, err)
	}
	if rate.neg {
		over = !over
	}
	if !over {
		return skip("it refuses while %s is low, not over a limit.", def.fetch)
	}
	if most < 1 {
		return skip("%s %s %s refuses every tracked request.", def.fetch, def.values[0], def.values[1])
	}
	// Which key and table the counter reads.
	var tr haproxyTrack
	if c.sc >= 0 {
		k := slices.IndexFunc(trackers, func(tr haproxyTrack) bool { return tr.sc == c.sc && (tr.before || tr.line < d.line) })
		if k < 0 {
			return skip("no track-sc%d before it: HAProxy never counts sc%d there, so this rule never refuses.", c.sc, c.sc)
		}
		tr = trackers[k]
	} else {
		tr = haproxyTrack{sc: -1, fetch: c.lookup, table: p.sec.name}
	}
	table := c.table
	if table == "" {
		table = tr.table
	}
	tb := tables[table]
	if tb == nil {
		return skip("%s reads table %s, which the file does not define.", def.fetch, table)
	}
	if c.sc < 0 && !slices.ContainsFunc(trackers, func(o haproxyTrack) bool {
		return o.fetch == c.lookup && o.table == table
	}) {
		return skip("%s reads table %s, but nothing here tracks %s into it: the counter never moves.", def.fetch, table, c.lookup)
	}
	period, stored := tb.stores[c.data]
	if !stored {
		return skip("table %s does not store %s, so %s is never over.", table, c.data, def.fetch)
	}
	// A lookup reads the count its table's trackers of the key write.
	lookupFirst := false
	if c.sc < 0 {
		w, ok := t.haproxyWriter(trackers, c.lookup, table, where)
		if !ok {
			return nil, false
		}
		tr.cond, tr.line = w.cond, w.line
		lookupFirst = !slices.ContainsFunc(trackers, func(o haproxyTrack) bool {
			return o.fetch == c.lookup && o.table == table && (o.before || o.line < d.line)
		})
	}
	most0 := most
	if lookupFirst {
		most++ // the lookup reads the count without the request
	}
	if table != p.sec.name {
		name += "-" + strings.ReplaceAll(table, "/", "-")
	}
	r := Rule{Name: t.ruleName(name)}
	n := len(t.Differences)
	var l Limit
	switch c.data {
	case "http_req_rate":
		if period <= 0 {
			return skip("http_req_rate without a period.")
		}
		l = Limit{Name: defaultLimitName(period), Algorithm: "sliding-window-counter", Quantity: most, Window: period,
			Source: fmt.Sprintf("%s: %s %s %s, table %s http_req_rate(%s)", where, def.fetch, def.values[0], def.values[1], table, formatWindow(period))}
		t.same(where, "HAProxy's http_req_rate(%s) is a sliding window counter: the current period's count plus the previous period's weighted by the share of it still inside the last %s, rounded down, as sluice's sliding-window-counter of %d per %s estimates it; the request is refused when the estimate with it is over %d.",
			formatWindow(period), formatWindow(period), most, formatWindow(period), most)
		if lookupFirst {
			t.same(where, "%s comes before every tracker of %s into table %s, so HAProxy reads the count without the request and refuses only once %d have been counted; a refused request, stopped before its tracker, is not counted: %d per %s of admitted requests, sluice's limit of %d counting admitted requests alone.",
				def.fetch, c.lookup, table, most, most, formatWindow(period), most)
			t.differs(where, "HAProxy starts a client's periods at its first request after an idle period, sluice at multiples of %s: near the end of a period the two weigh the previous one differently.", formatWindow(period))
		} else {
			t.differs(where, "HAProxy counts every request it tracks, the refused ones too, so a client that keeps sending above %d per %s stays refused until it slows down; sluice counts only admitted requests, so such a client gets %d per %s. HAProxy starts a client's periods at its first request after an idle period, sluice at multiples of %s: near the end of a period the two weigh the previous one differently. Put a penalty box on the rule (docs/rules.md) if you relied on refusing clients that keep retrying.",
				most, formatWindow(period), most, formatWindow(period), formatWindow(period))
		}
		t.haproxyExpire(tb, period, where)
	case "conn_cur":
		if lookupFirst {
			t.same(where, "%s comes before every tracker of %s into table %s, so HAProxy reads the count without the request's connection: %s %d admits %d at once.", def.fetch, c.lookup, table, def.values[0], most0, most)
		}
		l = Limit{Name: "concurrent", Algorithm: "concurrency", Quantity: most, Window: connLease,
			Source: fmt.Sprintf("%s: %s %s %s, table %s conn_cur", where, def.fetch, def.values[0], def.values[1], table)}
		t.differs(where, "conn_cur counts a client's open connections; sluice's concurrency limit of %d counts its requests in flight, which is the same for clients that send one request at a time on each connection and fewer for idle keep-alive connections. A slot not given back (a request running longer than %s) is freed after %s.",
			most, formatWindow(connLease), formatWindow(connLease))
	default:
		return skip("sluice has no limit on %s (it limits request rates and requests in flight); keep it in HAProxy.", c.data)
	}
	r.Limits = []Limit{l}
	// A rule not imported keeps only the reason why in the report.
	dropNotes := func() ([]string, bool) {
		kept := t.Differences[:n]
		for _, d := range t.Differences[n:] {
			if strings.Contains(d.Text, "not imported") {
				kept = append(kept, d)
			}
		}
		t.Differences = kept
		return nil, false
	}
	if !t.haproxyKey(&r, tr, tb, where) {
		return dropNotes()
	}
	match := append(slices.Clone(route), rest...)
	if tr.cond != nil {
		if len(tr.cond.terms) == 1 && !tr.cond.unless {
			// "<key> -m found" tracks only the requests that have the key,
			// which a key's fallback: skip counts already.
			match = append(match, slices.DeleteFunc(slices.Clone(tr.cond.terms[0]), func(at haproxyAtom) bool {
				return !at.neg && len(at.defs) == 1 && at.defs[0].fetch == tr.fetch && at.defs[0].method == "found" && r.Fallback == "skip"
			})...)
			if c.sc >= 0 {
				t.haproxyFallback(&r, trackers, slices.Index(trackers, tr), d, where)
			}
		} else {
			dropNotes()
			return skip("track-sc%d's condition (line %d) is not one conjunction of ACLs.", tr.sc, tr.line)
		}
	}
	exempt, ok := t.haproxyMatch(&r, match, where)
	if !ok {
		return dropNotes()
	}
	allowed, ok := t.haproxyAllowed(&r, p, d, tr, where)
	if !ok {
		return dropNotes()
	}
	exempt = append(exempt, allowed...)
	if narrows(rest) || len(route) > 0 && tr.before {
		t.differs(where, "HAProxy's counter counts every request track-sc%d tracks; sluice's rule counts only the requests it matches. Where the tracker tracks more than this rule refuses, HAProxy refuses sooner.", max(tr.sc, 0))
	}
	switch d.status {
	case 429:
		t.same(where+" status", "429, as sluice answers.")
	case 0:
		t.differs(where+" status", "%s closes the connection without an answer; sluice answers 429 Too Many Requests with Retry-After.", d.action)
	default:
		t.differs(where+" status", "HAProxy answered %d (%s); sluice answers 429 Too Many Requests with Retry-After and a problem+json body.", d.status, d.action)
	}
	if c.sc < 0 && tr.cond != nil {
		t.differs(where, "%s reads the count of the requests the tracker of line %d tracks, those its condition matches; HAProxy refuses every request this rule matches once that count is over, and sluice's rule counts and refuses the tracked requests alone: a client over the limit still gets its other requests through here. Where that matters, keep this rule in HAProxy.", def.fetch, tr.line)
	}
	if tb.peers {
		t.Instances, t.OnStoreError = 2, "local"
		t.differs("table "+table, "a peers table is copied between HAProxy instances, each still deciding on its own copy; sluice's Redis store decides on one shared state: set store.redis.addresses and instances.")
	}
	t.SluiceRules = append(t.SluiceRules, r)
	return exempt, true
}

// haproxyKey sets r's key as tracker tr keys table tb, and reports false,
// having said why, when sluice cannot key a count so.
func (t *Translation) haproxyKey(r *Rule, tr haproxyTrack, tb *haproxyTable, where string) bool {
	parts := splitTopLevel(tr.fetch)
	fetch, conv := parts[0], parts[1:]
	name, arg, _ := strings.Cut(strings.TrimSuffix(fetch, ")"), "(")
	arg, _, _ = strings.Cut(arg, ",")
	v4, v6 := 32, 128
	for _, c := range conv {
		cname, carg, _ := strings.Cut(strings.TrimSuffix(c, ")"), "(")
		switch {
		case cname == "ipmask" && (name == "src" || strings.HasSuffix(name, "hdr_ip")):
			a, b, has6 := strings.Cut(carg, ",")
			n4, err4 := strconv.Atoi(a)
			if err4 != nil || n4 < 1 || n4 > 32 {
				t.differs(where+" key", "ipmask(%s) is not a prefix length sluice reads: not imported.", carg)
				return false
			}
			v4 = n4
			if has6 {
				n6, err := strconv.Atoi(b)
				if err != nil || n6 < 1 || n6 > 128 {
					t.differs(where+" key", "ipmask(%s) is not a prefix length sluice reads: not imported.", carg)
					return false
				}
				v6 = n6
			}
		case cname == "lower":
			t.differs(where+" key", "%s lowers the key's case; sluice keys on the value as sent, so values that differ only in case count apart.", tr.fetch)
		default:
			t.differs(where+" key", "sluice cannot key a count on %s (the converter %s): not imported.", tr.fetch, c)
			return false
		}
	}
	ip := fmt.Sprintf("ip/%d/%d", v4, v6)
	switch {
	case name == "src":
		r.Key = []string{ip}
		t.same(where+" key", "%s: one count per client address (key %s).", tr.fetch, ip)
		if tb.keyType == "ip" {
			t.differs(where+" key", "a table of type ip holds no IPv6 address, so HAProxy never limits an IPv6 client; sluice counts each (use type ipv6 in HAProxy to compare).")
		}
	case name == "hdr_ip" || name == "req.hdr_ip":
		r.Key = []string{ip}
		t.differs(where+" key", "%s reads the client's address from a header anyone can send; sluice believes X-Forwarded-For only from identity.trusted_proxies (list your load balancers there) and otherwise counts by the connection's address.", tr.fetch)
	case (name == "hdr" || name == "req.hdr" || name == "req.fhdr") && strings.EqualFold(arg, "host"):
		r.Key, r.Fallback = []string{"host"}, "skip"
		t.same(where+" key", "%s: one count per host name (key host: sluice drops the port and lowers the case); a request without one is not tracked, so not counted (fallback: skip).", tr.fetch)
	case (name == "hdr" || name == "req.hdr" || name == "req.fhdr") && validHeaderName(arg):
		r.Key, r.HeaderFrom, r.Fallback = []string{"header:" + http.CanonicalHeaderKey(arg)}, "any", "skip"
		t.same(where+" key", "%s: one count per value of %s, whoever sends it (header_from: any, as HAProxy reads it); a request without it is not tracked, so not counted (fallback: skip).", tr.fetch, arg)
	case (name == "req.cook" || name == "cook") && arg != "":
		r.Key, r.Fallback = []string{"cookie:" + arg}, "skip"
		t.same(where+" key", "%s: one count per value of cookie %s; a request without it is not counted (fallback: skip).", tr.fetch, arg)
	case (name == "url_param" || name == "urlp") && arg != "":
		r.Key, r.Fallback = []string{"query:" + arg}, "skip"
		t.same(where+" key", "%s: one count per value of query parameter %s; a request without it is not counted (fallback: skip).", tr.fetch, arg)
	case name == "path":
		r.Key = []string{"path"}
		t.same(where+" key", "path: one count per path.")
	case name == "base" || name == "base32":
		r.Key, r.Fallback = []string{"host", "path"}, "shared"
		t.same(where+" key", "%s: one count per host and path together.", tr.fetch)
	case name == "base32+src":
		r.Key, r.Fallback = []string{"host", "path", ip}, "shared"
		t.same(where+" key", "%s: one count per host, path and client address together.", tr.fetch)
	default:
		t.differs(where+" key", "sluice cannot key a count on %s: not imported. Key on an address, a header, a query parameter, a cookie, the host or the path, or keep this limit in HAProxy.", tr.fetch)
		return false
	}
	if len(r.Key) > 0 && strings.HasPrefix(r.Key[0], "header:") && tb.keyType != "string" && tb.keyType != "binary" {
		t.differs(where+" key", "a table of type %s keeps only header values that convert to it; sluice counts every value.", tb.keyType)
	}
	if (tb.keyType == "string" || tb.keyType == "binary") && tb.keyLen > 0 && name != "base32+src" {
		t.differs(where+" key", "a table of type %s keeps the first %d bytes of a key (its len), so values of %s that share them count together in HAProxy; sluice counts each whole value apart.", tb.keyType, tb.keyLen, tr.fetch)
	}
	return true
}

// haproxyMatch narrows r to the requests atoms match: paths (path_beg, path),
// methods, hosts and a header; a negated path leaves paths out. It returns
// the addresses a negated src ACL leaves out, and false, having said why,
// for a condition sluice cannot match.
func (t *Translation) haproxyMatch(r *Rule, atoms []haproxyAtom, where string) ([]string, bool) {
	var exempt []string
	anyCase := "" // the header whose value is matched in any case
	fail := func(format string, args ...any) ([]string, bool) {
		t.differs(where, "not imported: "+format, args...)
		return nil, false
	}
	for _, at := range atoms {
		fetch, method, values := at.defs[0].fetch, at.defs[0].method, []string(nil)
		for _, d := range at.defs {
			if d.fetch != fetch || d.method != method {
				return fail("ACL %s is defined with different fetches; sluice matches one kind of attribute per condition.", at.name)
			}
			values = append(values, d.values...)
		}
		name, arg, _ := strings.Cut(strings.TrimSuffix(fetch, ")"), "(")
		switch {
		case fetch == "always_true" && !at.neg:
		case fetch == "src" && at.neg && method == "file":
			t.differs(where, "the addresses it leaves out are in %s, which the import does not read: add them to exempt.addresses; until then sluice limits them too.", at.defs[0].file)
		case method == "file":
			return fail("%s reads its values from a file (-f); list them in the rule's match.", fetch)
		case (fetch == "path_beg" || fetch == "path" && method == "beg" || fetch == "url_beg") && len(values) > 0:
			var patterns []string
			for _, v := range values {
				if !validPathValue(v) {
					return fail("path %q is not a path sluice matches.", v)
				}
				patterns = append(patterns, prefixPatterns(v)...)
				if !strings.HasSuffix(v, "/") {
					t.differs(where+" path", "path_beg %s also matches paths such as %sx; sluice's rule matches %s and the paths below %s/.", v, v, v, v)
				}
			}
			if !t.haproxyPaths(r, patterns, at.neg) {
				return fail("two path conditions that must both hold.")
			}
		case fetch == "path" && (method == "" || method == "str") && len(values) > 0:
			var patterns []string
			for _, v := range values {
				if !validPathValue(v) {
					return fail("path %q is not a path sluice matches.", v)
				}
				patterns = append(patterns, exactPattern(v))
			}
			if !t.haproxyPaths(r, patterns, at.neg) {
				return fail("two path conditions that must both hold.")
			}
		case fetch == "method" && !at.neg && len(values) > 0:
			if len(r.Methods) > 0 {
				return fail("two method conditions that must both hold.")
			}
			for _, v := range values {
				if !validHeaderName(v) {
					return fail("method %q is not a method.", v)
				}
				r.Methods = append(r.Methods, strings.ToUpper(v))
			}
		case (name == "hdr" || name == "req.hdr") && strings.EqualFold(arg, "host") && !at.neg && (method == "" || method == "str") && len(values) > 0:
			for _, v := range values {
				host := strings.ToLower(v)
				if !validHostName(host) {
					return fail("host %q is not a host name sluice matches (without a port).", v)
				}
				r.Hosts = append(r.Hosts, host)
			}
		case (name == "hdr" || name == "req.hdr") && validHeaderName(arg) && !strings.EqualFold(arg, "host") && !at.neg && method == "found" && len(values) == 0:
			if h := http.CanonicalHeaderKey(arg); !slices.ContainsFunc(r.Headers, func(m HeaderMatch) bool { return m.Name == h }) {
				r.Headers = append(r.Headers, HeaderMatch{Name: h})
			}
		case (name == "hdr" || name == "req.hdr") && validHeaderName(arg) && !at.neg && (method == "" || method == "str") && len(values) == 1 && !slices.ContainsFunc(r.Headers, func(m HeaderMatch) bool { return m.Value != "" }) && printable(values[0]):
			h := http.CanonicalHeaderKey(arg)
			r.Headers = slices.DeleteFunc(r.Headers, func(m HeaderMatch) bool { return m.Name == h })
			r.Headers = append(r.Headers, HeaderMatch{Name: h, Value: values[0]})
			other := strings.ToUpper(values[0])
			if other == values[0] {
				other = strings.ToLower(values[0])
			}
			switch {
			case other == values[0] || !slices.ContainsFunc(at.defs, func(d haproxyACL) bool { return d.icase }):
			case spellings(values[0]) != nil:
				anyCase = h
			default:
				t.differs(where+" header", "%s -i %s matches %s's value in any case (%s too), so HAProxy refuses every spelling over the limit; sluice's rules match a header's value only as written (they have no match in any case), so a request whose %s is %s or another spelling but %s is neither counted nor refused by this rule: a client escapes the limit by changing the case. Have the clients, or a proxy in front of sluice, send one spelling. A rule with an alternative per spelling would count them all once, but %s has more spellings than the %d alternatives the import writes (a value of at most %d letters).",
					fetch, values[0], h, other, h, other, values[0], values[0], maxSpellings, bits.Len(maxSpellings)-1)
			}
		case fetch == "src" && at.neg && len(values) > 0:
			for _, v := range values {
				pfx, err := parsePrefix(v)
				if err != nil {
					return fail("src %q is not an address or a prefix.", v)
				}
				exempt = append(exempt, pfx)
			}
		default:
			words := []string{fetch}
			if at.neg {
				words[0] = "!" + fetch
			}
			if method != "" {
				words = append(words, "-m", method)
			}
			return fail("sluice's rules match paths (path, path_beg), methods, the Host, one header's value and headers present (-m found); the condition %s is none of them.", strings.Join(append(words, values...), " "))
		}
	}
	if anyCase != "" {
		i := slices.IndexFunc(r.Headers, func(m HeaderMatch) bool { return m.Name == anyCase })
		value := r.Headers[i].Value
		for _, v := range spellings(value) {
			hs := slices.Clone(r.Headers)
			hs[i].Value = v
			r.Any = append(r.Any, RuleMatch{Paths: r.Paths, Hosts: r.Hosts, Methods: r.Methods, Headers: hs, ExceptPaths: r.ExceptPaths})
		}
		r.Paths, r.Hosts, r.Methods, r.Headers, r.ExceptPaths = nil, nil, nil, nil, nil
		t.same(where+" header", "-i %s matches %s's value in any case: the rule has an alternative for each of its %d spellings (match: a list), one count across them, as HAProxy counts every spelling together.", value, anyCase, len(r.Any))
	}
	return exempt, true
}

// maxSpellings is the most spellings of a header value matched in any
// case that a rule has an alternative for: 2^n for a value of n letters.
const maxSpellings = 64

// spellings returns every spelling of v in ASCII upper and lower case, as
// HAProxy's -i matches it, v first; nil when they are more than
// maxSpellings.
func spellings(v string) []string {
	out := []string{""}
	for i := 0; i < len(v); i++ {
		c := v[i]
		lower, upper := c|0x20, c&^0x20
		if lower < 'a' || lower > 'z' {
			for k := range out {
				out[k] += string(c)
			}
			continue
		}
		if 2*len(out) > maxSpellings {
			return nil
		}
		other := lower
		if c == lower {
			other = upper
		}
		for k, n := 0, len(out); k < n; k++ {
			out = append(out, out[k]+string(other))
			out[k] += string(c)
		}
	}
	return out
}

// haproxyPaths narrows r's paths to patterns (both must hold), or,
// negated, adds them to its except paths. It reports false when sluice
// cannot match both: when neither set of patterns lies within the other.
func (t *Translation) haproxyPaths(r *Rule, patterns []string, neg bool) bool {
	if neg {
		r.ExceptPaths = append(r.ExceptPaths, patterns...)
		return true
	}
	within := func(ps, qs []string) bool {
		return !slices.ContainsFunc(ps, func(p string) bool {
			return !slices.ContainsFunc(qs, func(q string) bool { return p == q || below(p, q) })
		})
	}
	switch {
	case len(r.Paths) == 0 || within(patterns, r.Paths):
		r.Paths = patterns
	case within(r.Paths, patterns):
	default:
		return false
	}
	return true
}

// validPathValue reports whether v is a path a ServeMux pattern can hold
// as it is: absolute, no empty segment, no wildcard braces or blanks.
func validPathValue(v string) bool {
	return strings.HasPrefix(v, "/") && !strings.Contains(v, "//") && !strings.ContainsAny(v, "{} *") && printable(v) && len(v) <= 512
}

// printable reports whether v is visible ASCII or spaces, as a header
// value or path the configuration writes must be.
func printable(v string) bool {
	return !strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r > 0x7e })
}

// parsePrefix reads an address or prefix as a prefix.
func parsePrefix(v string) (string, error) {
	if strings.Contains(v, "/") {
		p, err := netip.ParsePrefix(v)
		if err != nil {
			return "", err
		}
		return p.Masked().String(), nil
	}
	a, err := netip.ParseAddr(v)
	if err != nil {
		return "", err
	}
	return netip.PrefixFrom(a, a.BitLen()).String(), nil
}

// exemptions makes the addresses the imported rules leave out (one list
// per rule) the configuration's exempt addresses: exactly so when every
// rule leaves out the same ones.
func (t *Translation) exemptions(perRule [][]string) {
	var all []string
	for _, ex := range perRule {
		for _, a := range ex {
			if !slices.Contains(all, a) {
				all = append(all, a)
			}
		}
	}
	if all = t.withoutEveryAddress(all); len(all) == 0 {
		return
	}
	t.ExemptAddresses = all
	for _, ex := range perRule {
		if len(narrowed(ex)) != len(all) {
			t.differs("exemptions", "some of the source's limits leave out %s and others do not; sluice's exempt.addresses leaves them out of every limit. Keep those addresses out only where the source did by moving them into a plan of their own.", strings.Join(all, ", "))
			return
		}
	}
	t.same("exemptions", "%s are left out of every rate limit, as the source left them out: exempt.addresses, never limited and never counted.", strings.Join(all, ", "))
}

// narrows reports whether atoms match fewer requests than every one: a
// condition besides always-true ones and the addresses left out (which
// HAProxy counts but never refuses, and sluice neither counts nor refuses).
func narrows(atoms []haproxyAtom) bool {
	return slices.ContainsFunc(atoms, func(at haproxyAtom) bool {
		f := at.defs[0].fetch
		return !(f == "always_true" && !at.neg) && !(f == "src" && at.neg)
	})
}

// splitTopLevel splits a sample expression at the commas between its fetch
// and converters, not those inside their arguments.
func splitTopLevel(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// haproxyWriter returns the tracker of trackers that writes key into
// table, as a lookup of key in table reads it, and false, having said why
// at where, when there are several: HAProxy counts a request once for
// each of them that tracks it, which one rule cannot count.
func (t *Translation) haproxyWriter(trackers []haproxyTrack, key, table, where string) (haproxyTrack, bool) {
	var ws []haproxyTrack
	var lines []string
	for _, o := range trackers {
		if o.fetch == key && o.table == table {
			ws, lines = append(ws, o), append(lines, strconv.Itoa(o.line))
		}
	}
	if len(ws) > 1 {
		t.differs(where, "not imported: several track-sc lines (%s) write %s into table %s, and HAProxy counts a request once for each that tracks it; one sluice rule counts each request once. Keep one tracker of the key per table, or keep this rule in HAProxy.", strings.Join(lines, ", "), key, table)
		return haproxyTrack{}, false
	}
	return ws[0], true
}

// haproxyExpire reports a table whose entries expire sooner than period,
// the http_req_rate period a rule counts: HAProxy forgets a client idle
// that long, its count starting at 0 again, where sluice's window keeps
// its count the whole period.
func (t *Translation) haproxyExpire(tb *haproxyTable, period time.Duration, where string) {
	if tb.expire > 0 && tb.expire < period {
		t.differs(where, "table %s's entries expire %s after a client's last tracked request, sooner than its http_req_rate period of %s: HAProxy then forgets the client, and its count starts at 0 again, so a client pausing %s between bursts gets a fresh limit each burst; sluice keeps the count for the whole period and refuses such bursts sooner. Set expire at least the period in HAProxy to compare, or raise the rule's quantity.",
			tb.name, formatWindow(tb.expire), formatWindow(period), formatWindow(tb.expire))
	}
}
