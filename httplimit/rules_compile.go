package httplimit

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/sluice-dev/sluice"
)

// maxKeyParts bounds the attributes of one rule's key.
const maxKeyParts = 8

// compileRules compiles validated rules; prefix starts every store key.
func compileRules(o *Options, prefix string, hidden map[string]bool, stated *statedLimits) ([]*rule, error) {
	var out []*rule
	for i := range o.Rules {
		ru, err := compileRule(&o.Rules[i], o, prefix, hidden, stated)
		if err != nil {
			return nil, fmt.Errorf("httplimit: rule %s: %w", o.Rules[i].Name, err)
		}
		out = append(out, ru)
	}
	return out, nil
}

func compileRule(r *Rule, o *Options, prefix string, hidden map[string]bool, stated *statedLimits) (*rule, error) {
	ru := &rule{name: r.Name, plans: r.Plans, fallback: r.Fallback, cost: -1,
		anyHeader: r.HeaderFrom == HeaderFromAny, keyPrefix: prefix + "rule:" + r.Name + "/"}
	if r.Cost != nil {
		ru.cost = *r.Cost
	}
	exc, lowerExc, excPaths, upperExc, err := compileExcept(r.Except)
	if err != nil {
		return nil, err
	}
	ru.exc = exc
	for _, mt := range r.Alternatives() {
		a, err := compileAlt(&mt, len(ru.paths), exc, lowerExc, excPaths, upperExc)
		if err != nil {
			return nil, err
		}
		ru.paths = append(ru.paths, a.paths...)
		ru.alts = append(ru.alts, a)
	}
	key := r.Key
	if len(key) == 0 {
		key = []string{KeyClient}
	}
	for _, s := range key {
		kp, err := parseKeyPart(s, o, ru.altPaths())
		if err != nil {
			return nil, err
		}
		ru.parts = append(ru.parts, kp)
	}
	ru.clientOnly = len(ru.parts) == 1 && ru.parts[0].kind == KeyClient
	for _, l := range r.Limits {
		ru.limits = append(ru.limits, ruleLimit(r.Name, l))
	}
	if ru.policy, err = newPolicyHeaders(ru.limits, hidden, stated); err != nil {
		return nil, err
	}
	return ru, nil
}

// compileExcept compiles a rule's Except entries: exc as written, lower
// with their paths' literals in lower case; paths reports whether some
// entry has paths, upper whether some literal of them has an upper-case
// letter. Nil entries give nil.
func compileExcept(entries []Match) (exc, lower []exceptEntry, paths, upper bool, err error) {
	for _, mt := range entries {
		e := exceptEntry{methods: mt.Methods, hosts: compileHosts(mt.Hosts), headers: canonicalHeaders(mt.Headers)}
		for _, s := range mt.Paths {
			pp, err := parsePathPattern(s)
			if err != nil {
				return nil, nil, false, false, err
			}
			e.paths = append(e.paths, pp)
		}
		exc = append(exc, e)
		le := e
		if len(e.paths) > 0 {
			paths = true
			le.paths = lowerPatterns(e.paths, &upper)
		}
		lower = append(lower, le)
	}
	return exc, lower, paths, upper, nil
}

// compileHosts returns hosts as alt.hosts holds them.
func compileHosts(hosts []string) []string {
	var out []string
	for _, h := range hosts {
		h = strings.TrimPrefix(strings.ToLower(h), "*")
		if len(h) > 1 {
			h = strings.TrimSuffix(h, ".") // the root dot, as hostOnly drops it
		}
		out = append(out, h)
	}
	return out
}

// canonicalHeaders returns hs with their names in canonical form and
// their values without the whitespace around them (see trimValue), as
// headerMatches compares a request's: a Value of "1 " or " 1\n" (a YAML
// block scalar's) is 1, not a value no request is read as.
func canonicalHeaders(hs []HeaderMatch) []HeaderMatch {
	var out []HeaderMatch
	for _, h := range hs {
		out = append(out, HeaderMatch{Name: http.CanonicalHeaderKey(h.Name), Value: trimValue(h.Value)})
	}
	return out
}

// compileAlt compiles the alternative mt, whose first pattern is the
// first-th of its rule's, under the rule's Except entries exc (lowerExc
// in lower case; excPaths: some has paths; upperExc: some literal of
// theirs has an upper-case letter).
func compileAlt(mt *Match, first int, exc, lowerExc []exceptEntry, excPaths, upperExc bool) (alt, error) {
	a := alt{methods: mt.Methods, first: first, exc: exc, upperLits: upperExc, exceptions: len(mt.ExceptPaths) > 0 || excPaths}
	for _, s := range mt.Paths {
		pp, err := parsePathPattern(s)
		if err != nil {
			return a, err
		}
		pp.key = routeValue(s)
		a.paths = append(a.paths, pp)
	}
	for _, s := range mt.ExceptPaths {
		pp, err := parsePathPattern(s)
		if err != nil {
			return a, err
		}
		a.except = append(a.except, pp)
	}
	if len(a.paths)+len(a.except) > 0 || excPaths {
		a.lower = &alt{paths: lowerPatterns(a.paths, &a.upperLits), except: lowerPatterns(a.except, &a.upperLits), exc: lowerExc}
	}
	a.hosts = compileHosts(mt.Hosts)
	a.headers = canonicalHeaders(mt.Headers)
	return a, nil
}

// altPaths returns the patterns of each of the rule's alternatives.
func (ru *rule) altPaths() [][]pathPattern {
	out := make([][]pathPattern, len(ru.alts))
	for i := range ru.alts {
		out[i] = ru.alts[i].paths
	}
	return out
}

// lowerPatterns returns copies of ps with their literal segments in lower
// case, setting *upper when some literal had an upper-case letter.
func lowerPatterns(ps []pathPattern, upper *bool) []pathPattern {
	out := make([]pathPattern, len(ps))
	for i, pp := range ps {
		pp.segs = slices.Clone(pp.segs)
		for j := range pp.segs {
			if lit := strings.ToLower(pp.segs[j].lit); lit != pp.segs[j].lit {
				pp.segs[j].lit, *upper = lit, true
			}
		}
		out[i] = pp
	}
	return out
}

// ruleLimit returns l as rule name has it: named "<rule>.<limit>", and with
// an ID of its own likewise.
func ruleLimit(name string, l sluice.Limit) sluice.Limit {
	q := l.Named(name + "." + l.Name())
	if id := l.ID(); id != l.Name() {
		q = q.WithID(name + "." + id)
	}
	return q
}

// routeValue returns the path pattern s as a "route" key value: "/" as
// "_", the bytes a store key keeps as they are (A-Z a-z 0-9 . -), and
// every other byte as "@" and its two hex digits ("/t/{id}" is
// "_t_@7bid@7d"). Each pattern has a value of its own, whatever the other
// patterns of its rule and their order, so that a rule's routes keep their
// counts when patterns are added, removed or reordered.
func routeValue(s string) string {
	const hexDigits = "0123456789abcdef"
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '/':
			b = append(b, '_')
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-':
			b = append(b, c)
		default:
			b = append(b, '@', hexDigits[c>>4], hexDigits[c&15])
		}
	}
	return string(b)
}

// parseKeyPart reads one attribute of Rule.Key, with o's defaults applied,
// for a rule whose alternatives have the patterns alts, each its own.
func parseKeyPart(s string, o *Options, alts [][]pathPattern) (keyPart, error) {
	kp := keyPart{kind: s}
	switch {
	case s == KeyClient, s == KeyAPIKey, s == KeyHost, s == KeyRoute, s == KeyRule, s == KeyURLPath:
	case strings.HasPrefix(s, KeyQuery), strings.HasPrefix(s, KeyCookie):
		kind := KeyQuery
		if strings.HasPrefix(s, KeyCookie) {
			kind = KeyCookie
		}
		name := strings.TrimPrefix(s, kind)
		if !validToken(name) {
			return kp, fmt.Errorf("%q: %q is not a %s name", s, name, strings.TrimSuffix(kind, ":"))
		}
		kp.kind, kp.header = kind, name
	case strings.HasPrefix(s, KeyForm):
		name := strings.TrimPrefix(s, KeyForm)
		if name == "" || len(name) > 64 || strings.ContainsFunc(name, func(r rune) bool { return r <= ' ' || r >= 0x7f }) {
			return kp, fmt.Errorf("%q: a form field name of 1 to 64 printable ASCII characters", s)
		}
		if path, ok := jsonPathOf(name); ok && strings.Count(path, ".") >= maxJSONDepth {
			return kp, fmt.Errorf("%q: a bracketed form field name nests at most %d names (user[email]), as a json: path holds", s, maxJSONDepth)
		}
		kp.kind, kp.header = KeyForm, name
	case strings.HasPrefix(s, KeyJSON):
		path := strings.TrimPrefix(s, KeyJSON)
		names := strings.Split(path, ".")
		if len(path) > 256 || len(names) > maxJSONDepth || slices.Contains(names, "") {
			return kp, fmt.Errorf("%q: a JSON field path of 1 to %d names joined by dots (user.email)", s, maxJSONDepth)
		}
		kp.kind, kp.header = KeyJSON, path
	case s == KeyUser:
		if o.UserHeader == "" && o.Tokens == nil {
			return kp, errors.New(`"user" needs Options.UserHeader (identity.user_header) or Options.Tokens (identity.jwt)`)
		}
	case strings.HasPrefix(s, KeyClaim):
		name := strings.TrimPrefix(s, KeyClaim)
		if name == "" || len(name) > 64 {
			return kp, fmt.Errorf("%q: a claim name of 1 to 64 bytes", s)
		}
		if o.Tokens == nil {
			return kp, fmt.Errorf("%q needs Options.Tokens (identity.jwt)", s)
		}
		kp.kind, kp.header = KeyClaim, name
	case s == KeyIP || strings.HasPrefix(s, KeyIP+"/"):
		kp.kind, kp.v4, kp.v6 = KeyIP, o.IPv4Prefix, o.IPv6Prefix
		if rest, ok := strings.CutPrefix(s, KeyIP+"/"); ok {
			v4, v6, two := strings.Cut(rest, "/")
			var err error
			if kp.v4, err = strconv.Atoi(v4); err != nil || kp.v4 < 1 || kp.v4 > 32 {
				return kp, fmt.Errorf("%q: the IPv4 prefix is a length in [1, 32]", s)
			}
			if two {
				if kp.v6, err = strconv.Atoi(v6); err != nil || kp.v6 < 1 || kp.v6 > 128 {
					return kp, fmt.Errorf("%q: the IPv6 prefix is a length in [1, 128]", s)
				}
			}
		}
	case strings.HasPrefix(s, KeyHeader):
		name := strings.TrimPrefix(s, KeyHeader)
		if !validToken(name) {
			return kp, fmt.Errorf("%q: %q is not a header name", s, name)
		}
		kp.kind, kp.header = KeyHeader, http.CanonicalHeaderKey(name)
	case strings.HasPrefix(s, KeyPath):
		name := strings.TrimPrefix(s, KeyPath)
		if bare, ok := strings.CutPrefix(name, "{"); ok && strings.HasSuffix(bare, "}") {
			bare = strings.TrimSuffix(strings.TrimSuffix(bare, "}"), "...")
			return kp, fmt.Errorf("%q: a wildcard is named without its braces (write %q)", s, KeyPath+bare)
		}
		kp.kind = KeyPath
		for i, paths := range alts {
			if len(paths) == 0 {
				if len(alts) == 1 {
					return kp, fmt.Errorf("%q: the rule has no paths to take wildcard %q from", s, name)
				}
				return kp, fmt.Errorf("%q: alternative %d of %d has no paths to take wildcard %q from", s, i+1, len(alts), name)
			}
			for _, p := range paths {
				k := p.wildIndex(name)
				if k < 0 {
					return kp, fmt.Errorf("%q: path %q has no wildcard {%s}", s, p.text, name)
				}
				kp.wild = append(kp.wild, k)
			}
		}
	default:
		return kp, fmt.Errorf("%q is not a key attribute (client, api_key, user, ip, ip/N, ip/N/M, header:<name>, host, path, path:<wildcard>, query:<name>, cookie:<name>, form:<name>, json:<path>, claim:<name>, route, rule)", s)
	}
	return kp, nil
}
