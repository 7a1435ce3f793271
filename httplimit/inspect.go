package httplimit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/sluice-dev/sluice"
)

// LimitState is one limit's state for one subject, as a peek (a check of
// cost 0) finds it: nothing is consumed by reading it.
type LimitState struct {
	// Name is the limit's name ("per-minute", "uploads.per-minute").
	Name      string `json:"name"`
	Algorithm string `json:"algorithm"`
	Quantity  int64  `json:"quantity"`
	Window    string `json:"window"`
	// Burst is the most the limit admits at once: for a bucket the store
	// leases, its shared burst (see Middleware.Stated).
	Burst int64 `json:"burst"`
	// Remaining is the units available at once; Used is Burst − Remaining.
	Remaining int64 `json:"remaining"`
	Used      int64 `json:"used"`
	// ResetAfter is the time until the limit is back at full capacity.
	ResetAfter time.Duration `json:"-"`
}

// KeyNameSubject prefixes a subject given by a listed API key's name
// ("name:acme"), which Subject resolves to that key's subject.
const KeyNameSubject = "name:"

// subjectForms lists the subjects Subject takes, for its errors.
const subjectForms = "key:<SHA-256 of the key, 64 hex digits>, " + KeyNameSubject + "<listed key's name>, " +
	"user:<id>, user#<32 hex digits>, ip:<address or its group>, ip:unknown, " +
	"ext:<subject of the decision API>, rule:<rule>/<values, joined by |> or " + GlobalSubject + " (the global limits)"

// Subject returns the subject that subject names, as the client's
// requests are kept under it, or an error naming the forms a subject
// takes when it names none, so that a mistyped subject is never read as
// a client with its full quota. It takes:
//
//   - "key:" and a SHA-256 in hex, in either case: "key:" and the hex in
//     lower case;
//   - "name:<key name>" (KeyNameSubject): the subject of the listed API key of that name (an
//     error when no listed key has it, or several do: the error lists
//     their subjects);
//   - "user:<id>" of a non-empty id: "user:<id>", or its hash ("user#…")
//     for an id that is kept hashed (see UserSubject); "user#" and 32 hex
//     digits, in lower case;
//   - "ip:<address>": the address's group by the configured prefixes
//     ("ip:192.0.2.0/24"); "ip:<prefix>" of the configured length (of an
//     address of its group, "192.0.2.7/24"): that group; "ip:unknown",
//     a peer without an address (a Unix socket's);
//   - "ext:<subject>" of a non-empty subject, as a decision API caller
//     named it (Requester.Subject), as it is;
//   - "rule:<rule>/<values>", a rule's key, of a configured rule keyed by
//     more than the client alone (whose states are the client's): its
//     values, one per attribute of its key joined by "|", each named as
//     a request sends it or as a store key keeps it: the key its requests
//     are kept under (see ruleValue). A client's subject holding a "|"
//     ("ext:auth0|123") may be named as it is where the text reads one way
//     only (see ruleKeyReadings), or as it is kept ("ext#" and its hash);
//     an error names the keys of a text that reads two ways, each with
//     such a subject hashed;
//   - GlobalSubject, as it is.
//
// Subject does not check whether any state is kept under the subject.
func (m *Middleware) Subject(subject string) (string, error) {
	if m.zero() {
		return "", errZero()
	}
	if subject == GlobalSubject {
		return subject, nil
	}
	if rest, ok := strings.CutPrefix(subject, "user#"); ok {
		if len(rest) != 32 || !isHex(rest) {
			return "", fmt.Errorf("%q names no user: a hashed user id's subject is user# and 32 hex digits (user:<id> names a user by its id)", subject)
		}
		return "user#" + strings.ToLower(rest), nil
	}
	kind, rest, _ := strings.Cut(subject, ":")
	switch kind {
	case "ip":
		return m.ipSubject(subject, rest)
	case "user":
		if rest == "" {
			break
		}
		return m.UserSubject(rest), nil
	case "key":
		if len(rest) != 2*sha256.Size || !isHex(rest) {
			return "", fmt.Errorf("%q names no key: a key's subject is key: and the SHA-256 of the key, 64 hex digits (%s and a listed key's name names it too)", subject, KeyNameSubject)
		}
		return "key:" + strings.ToLower(rest), nil
	case "ext":
		if rest == "" {
			break
		}
		return subject, nil
	case "rule":
		return m.ruleSubject(subject, rest)
	case "name": // KeyNameSubject
		if rest == "" {
			break
		}
		return m.keyNameSubject(rest)
	}
	return "", fmt.Errorf("%q names no client: a subject is %s", subject, subjectForms)
}

// ipSubject is Subject of subject, "ip:" and rest.
func (m *Middleware) ipSubject(subject, rest string) (string, error) {
	if rest == "unknown" {
		return subject, nil
	}
	if a, err := netip.ParseAddr(rest); err == nil {
		_, sub := m.id.ipSubject(a.Unmap())
		return sub, nil
	}
	v4, v6 := m.id.ipv4Prefix, m.id.ipv6Prefix
	if p, err := netip.ParsePrefix(rest); err == nil && !p.Addr().Is4In6() &&
		(p.Addr().Is4() && p.Bits() == v4 || p.Addr().Is6() && p.Bits() == v6) {
		_, sub := m.id.ipSubject(p.Addr())
		return sub, nil
	}
	return "", fmt.Errorf("%q names no client: an address's subject is ip: and the address, or its group by the configured prefixes (/%d for IPv4, /%d for IPv6), or ip:unknown for a peer without one",
		subject, v4, v6)
}

// ruleSubject is Subject of subject, "rule:" and rest: rest is the rule's
// name, "/" and its key's values, one per attribute of its key joined by
// "|" (a key of one attribute takes the whole text as its value; in one of
// more, a client's subject may hold a "|": see ruleKeyReadings), each read
// as the rule's store key keeps it (see ruleValue).
func (m *Middleware) ruleSubject(subject, rest string) (string, error) {
	name, key, ok := strings.Cut(rest, "/")
	if !ok || key == "" {
		return "", fmt.Errorf("%q names no rule's key: a rule's key is rule:<rule>/<values>", subject)
	}
	i := slices.IndexFunc(m.rules, func(ru *rule) bool { return ru.name == name })
	switch {
	case i < 0:
		return "", fmt.Errorf("%q names no rule's key: no rule %q", subject, name)
	case m.rules[i].clientOnly:
		return "", fmt.Errorf("%q names no rule's key: rule %q is keyed by the client alone, whose subject names its states", subject, name)
	}
	ru := m.rules[i]
	values := []string{key}
	if len(ru.parts) > 1 {
		values = strings.Split(key, "|")
	}
	if len(values) > len(ru.parts) {
		switch rs := m.ruleKeyReadings(ru, values); len(rs) {
		case 1:
			values = rs[0]
		case 2:
			a, _ := m.ruleKeyName(ru, rs[0])
			b, _ := m.ruleKeyName(ru, rs[1])
			return "", fmt.Errorf("%q names no rule's key: it reads as %s and as %s (a subject holds a |): name one of them", subject, a, b)
		}
	}
	if len(values) != len(ru.parts) {
		return "", fmt.Errorf("%q names no rule's key: rule %q is keyed by %d values joined by | (%s)", subject, name, len(ru.parts), ru.keyKinds())
	}
	rk, err := m.ruleKeyName(ru, values)
	if err != nil {
		return "", fmt.Errorf("%q names no rule's key: %w", subject, err)
	}
	return rk, nil
}

// ruleKeyName returns the rule's key of values, one of each attribute of
// ru's key, each read by ruleValue.
func (m *Middleware) ruleKeyName(ru *rule, values []string) (string, error) {
	var b strings.Builder
	b.WriteString("rule:" + ru.name + "/")
	for j, v := range values {
		sv, err := m.ruleValue(ru, &ru.parts[j], v)
		if err != nil {
			return "", fmt.Errorf("its %s value: %w", ru.parts[j].kind, err)
		}
		if j > 0 {
			b.WriteByte('|')
		}
		b.WriteString(sv)
	}
	return b.String(), nil
}

// ruleKeyReadings returns the first two ways, or fewer, of reading texts,
// a rule's key split at each '|', as values of the attributes of ru's key,
// each of which ruleValue takes, when there are more texts than
// attributes: a value of several texts is a client's subject holding a '|'
// ("ext:auth0|123"), of an attribute whose value may be a subject (see
// takesSubject); any other value holding one is named by its hash. It
// takes time linear in len(texts) × len(ru.parts).
func (m *Middleware) ruleKeyReadings(ru *rule, texts []string) [][]string {
	t, p := len(texts), len(ru.parts)
	// n[at(i, j)]: the readings of texts[i:] as values of ru.parts[j:], at
	// most 2; from[at(i, j)]: those of texts[i':] for every i' ≥ i.
	at := func(i, j int) int { return i*(p+1) + j }
	n := make([]uint8, (t+1)*(p+1))
	from := make([]uint8, (t+2)*(p+1))
	single := make([]bool, t*p) // texts[i] is a value of ru.parts[j]
	n[at(t, p)], from[at(t, p)] = 1, 1
	for i := t - 1; i >= 0; i-- {
		for j := p - 1; j >= 0; j-- {
			kp := &ru.parts[j]
			c := 0
			if _, err := m.ruleValue(ru, kp, texts[i]); err == nil {
				single[i*p+j] = true
				c += int(n[at(i+1, j+1)])
			}
			if strings.HasPrefix(texts[i], "ext:") && ru.takesSubject(kp) {
				c += int(from[at(i+2, j+1)])
			}
			n[at(i, j)] = uint8(min(c, 2))
		}
		for j := 0; j <= p; j++ {
			from[at(i, j)] = min(n[at(i, j)]+from[at(i+1, j)], 2)
		}
	}
	read := func(k int) []string {
		values := make([]string, 0, p)
		for i, j := 0, 0; j < p; j++ {
			if single[i*p+j] {
				c := int(n[at(i+1, j+1)])
				if k < c {
					values = append(values, texts[i])
					i++
					continue
				}
				k -= c
			}
			for end := i + 2; ; end++ { // a subject: n[at(i, j)] > k
				c := int(n[at(end, j+1)])
				if k < c {
					values = append(values, strings.Join(texts[i:end], "|"))
					i = end
					break
				}
				k -= c
			}
		}
		return values
	}
	readings := make([][]string, n[at(0, 0)])
	for k := range readings {
		readings[k] = read(k)
	}
	return readings
}

// takesSubject reports whether a value of kp, an attribute of ru's key,
// may be a client's subject (see ruleValue): the client's, or under
// FallbackIP that of a client without a value of its own.
func (ru *rule) takesSubject(kp *keyPart) bool {
	return kp.kind == KeyClient ||
		kp.kind != KeyRoute && kp.kind != KeyRule && ru.fallback != FallbackShared && ru.fallback != FallbackSkip
}

// keyKinds returns the kinds of the attributes of ru's key, joined by "|".
func (ru *rule) keyKinds() string {
	kinds := make([]string, len(ru.parts))
	for i := range ru.parts {
		kinds[i] = ru.parts[i].kind
	}
	return strings.Join(kinds, "|")
}

// ruleValue returns v, a value of attribute kp of ru's key, as the rule's
// store key keeps it (see Middleware.appendPart), so that a value named
// as a request sends it names the state that request counted in:
//
//   - a value in a form only a store key holds is kept: "#" and 32 hex
//     digits (a hashed value; in lower case), "~" of a header, query,
//     cookie, form or JSON value (one upstreams read differently),
//     under fallback shared "-" (an absent value) and, of a value that may
//     be a client's subject (see takesSubject), "ext#" and 32 hex digits
//     (a caller's subject kept hashed, see appendSubject; in lower case);
//   - a route's and a rule's value is kept as it is written;
//   - a client's subject (Subject's forms but rule: and *), read as
//     Subject reads it, is a client's or an API key's value, a token
//     user's ("user#…"), or, under fallback ip, an absent value's, kept as
//     appendSubject keeps it (text in such a form that names no client is
//     a value as a request sends it; a value sent in the form of a
//     client's subject is named by its hash);
//   - a user's value is its id, after "user:" or alone; an address's is
//     the address or a group of the attribute's prefixes, after "ip:" or
//     alone: its group;
//   - any other is the value a request sends (see rawRuleValue; a
//     cookie's with its escapes decoded, "~" when upstreams decode them
//     differently), kept as it is when it is at most 64 characters of
//     A-Z a-z 0-9 . _ - @ (in lower case for a host, a path, a form or a
//     JSON value), else hashed (see appendKeyValue).
//
// An empty value, and one that no request's value is kept as, is an error.
func (m *Middleware) ruleValue(ru *rule, kp *keyPart, v string) (string, error) {
	switch {
	case v == "":
		return "", errors.New("an empty value")
	case kp.kind == KeyRoute || kp.kind == KeyRule:
		return v, nil
	case len(v) == 33 && v[0] == '#' && isHex(v[1:]):
		return strings.ToLower(v), nil
	case len(v) == len(hashedSubject)+32 && strings.HasPrefix(v, hashedSubject) && isHex(v[len(hashedSubject):]) && ru.takesSubject(kp):
		return hashedSubject + strings.ToLower(v[len(hashedSubject):]), nil
	case v == ambiguousValue && kp.trimmed(), v == sharedValue && ru.fallback == FallbackShared:
		return v, nil
	}
	subject := clientSubjectForm(v)
	switch kp.kind {
	case KeyIP:
		if s, ok := strings.CutPrefix(v, "ip:"); (ok || !subject) && s != "unknown" {
			return kp.ipValue(s)
		}
	case KeyUser:
		if id, ok := strings.CutPrefix(v, "user:"); ok || !subject {
			return userValue(id)
		}
	}
	own := kp.kind == KeyClient || kp.kind == KeyAPIKey && (strings.HasPrefix(v, "key:") || strings.HasPrefix(v, KeyNameSubject)) ||
		kp.kind == KeyUser && strings.HasPrefix(v, "user#")
	if subject && (own || ru.fallback != FallbackShared && ru.fallback != FallbackSkip) {
		sub, err := m.Subject(v)
		switch {
		case err == nil:
			return string(appendSubject(nil, sub)), nil
		case own:
			return "", err
		}
	}
	if kp.kind == KeyClient || kp.kind == KeyAPIKey || kp.kind == KeyUser || kp.kind == KeyIP {
		return "", fmt.Errorf("%q names no client", v)
	}
	raw, ambiguous := rawRuleValue(kp, v)
	switch {
	case ambiguous:
		return ambiguousValue, nil
	case raw == "":
		return "", fmt.Errorf("%q is empty once read as a request's value is", v)
	}
	return string(appendKeyValue(nil, raw, kp.lower())), nil
}

// clientSubjectForm reports whether s is in the form of a client's
// subject (see Subject): "ip:", "user:", "user#", "key:", "ext:" or
// KeyNameSubject, and more.
func clientSubjectForm(s string) bool {
	for _, p := range []string{"ip:", "user:", "user#", "key:", "ext:", KeyNameSubject} {
		if len(s) > len(p) && strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// userValue returns the value of KeyUser of the user id: "user:" and the
// id as appendKeyValue keeps it, or of an id already kept hashed ("#"
// and 32 hex digits).
func userValue(id string) (string, error) {
	switch {
	case id == "":
		return "", errors.New("an empty user id")
	case len(id) == 33 && id[0] == '#' && isHex(id[1:]):
		return "user:" + strings.ToLower(id), nil
	}
	return string(appendKeyValue([]byte("user:"), id, false)), nil
}

// ipValue returns the value of KeyIP's attribute kp of the address s, or
// of a group s of kp's prefix length: "ip:" and the group.
func (kp *keyPart) ipValue(s string) (string, error) {
	if a, err := netip.ParseAddr(s); err == nil {
		return string(appendAddrGroup([]byte("ip:"), a.Unmap(), kp.v4, kp.v6)), nil
	}
	if p, err := netip.ParsePrefix(s); err == nil && !p.Addr().Is4In6() &&
		(p.Addr().Is4() && p.Bits() == kp.v4 || p.Addr().Is6() && p.Bits() == kp.v6) {
		return string(appendAddrGroup([]byte("ip:"), p.Addr(), kp.v4, kp.v6)), nil
	}
	return "", fmt.Errorf("%q is no address, nor a group of one by the key's prefixes (/%d for IPv4, /%d for IPv6)", s, kp.v4, kp.v6)
}

// rawRuleValue returns v, a value of kp as a request sends it, as
// appendPart reads it: without the whitespace around it (see trimValue)
// for a header, query, cookie, form or JSON value; a cookie's also
// without the quotes around it and with its escapes decoded (see
// cookieValue, cookieDecoded), so that s%3Aabc, as a browser shows the
// cookie, names the count of s:abc, and ambiguous reports a value whose
// escapes upstreams decode differently, counted as ambiguousValue; a
// host without its port and trailing dots (see hostOnly, hostValue); a
// path without its parameters and trailing slash (see withoutParams,
// unslashed).
func rawRuleValue(kp *keyPart, v string) (raw string, ambiguous bool) {
	switch {
	case kp.kind == KeyCookie:
		v = trimValue(v)
		if len(v) > 1 && v[0] == '"' && v[len(v)-1] == '"' {
			v = trimValue(v[1 : len(v)-1])
		}
		return cookieDecoded(v)
	case kp.trimmed():
		return trimValue(v), false
	case kp.kind == KeyHost:
		return hostValue(hostOnly(v)), false
	case kp.kind == KeyURLPath:
		p := withoutParams(v)
		if u, ok := unslashed(p); ok {
			p = u
		}
		return p, false
	}
	return v, false
}

// trimmed reports whether kp's values are read without the whitespace
// around them, and may be read by upstreams differently (see appendPart):
// a header's, a query parameter's, a cookie's, a form's and a JSON value's.
func (kp *keyPart) trimmed() bool {
	switch kp.kind {
	case KeyHeader, KeyQuery, KeyCookie, KeyForm, KeyJSON:
		return true
	}
	return false
}

// lower reports whether kp's values are kept in lower case: a host's, a
// path's, a form's and a JSON value's (see appendPart).
func (kp *keyPart) lower() bool {
	switch kp.kind {
	case KeyHost, KeyURLPath, KeyForm, KeyJSON:
		return true
	}
	return false
}

// keyNameSubject returns the subject of the listed key named name.
func (m *Middleware) keyNameSubject(name string) (string, error) {
	var found []string
	for _, id := range m.id.keys {
		if id.KeyName == name {
			found = append(found, id.Subject)
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("no listed API key is named %q", name)
	case 1:
		return found[0], nil
	}
	slices.Sort(found)
	return "", fmt.Errorf("%d listed API keys are named %q, each a client of its own: name one by its subject (%s)", len(found), name, strings.Join(found, ", "))
}

// isHex reports whether s is hex digits, in either case.
func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil
}

// UserSubject returns the Identity.Subject of a user id (of UserHeader,
// Requester.User or a verified token's subject): "user:" and the id, or
// "user#" and a hash of an id longer than 64 bytes or of characters other
// than letters, digits and ".", "_", "-", "@".
func (m *Middleware) UserSubject(user string) string {
	if m.zero() {
		return ""
	}
	_, sub := m.id.userSubject(user)
	return sub
}

// SubjectLimits returns the store key and the limits of subject, a
// Identity.Subject ("key:…", "user:…", "ip:…", "ext:…"), a rule's key
// ("rule:<rule>/…") or GlobalSubject: a rule's limits for a rule's
// key, the global limits for the global subject, else the limits of plan
// (when not empty), of a listed key's plan for its subject, or of the
// default plan (the anonymous plan for "ip:" subjects), with those of the
// rules keyed by the client alone that apply to that plan, then, with a
// Penalty, the penalty box's: "penalty" (a GCRA bucket of 1 refilled
// every Penalty.For: 0 remaining while the client is in the box, until
// ResetAfter) and "penalty-refusals" (the refusals counted toward it).
//
// A caller that resets those states in the store lets the client out of
// the box; ForgetBox then has the middleware see it at once.
func (m *Middleware) SubjectLimits(subject, plan string) (key string, limits []sluice.Limit, err error) {
	if m.zero() {
		return "", nil, errZero()
	}
	if key, err = m.subjectKey(subject); err != nil {
		return "", nil, err
	}
	switch {
	case subject == GlobalSubject:
		return key, m.policy.Global, nil
	case strings.HasPrefix(subject, "rule:"):
		name, _, _ := strings.Cut(strings.TrimPrefix(subject, "rule:"), "/")
		for _, ru := range m.rules {
			if ru.name == name {
				return key, ru.limits, nil
			}
		}
		return "", nil, fmt.Errorf("no rule %q", name)
	}
	p := m.policy.Plan(plan)
	switch {
	case plan != "" && p == nil:
		return "", nil, fmt.Errorf("%w %q", ErrUnknownPlan, plan)
	case p != nil:
	case strings.HasPrefix(subject, "ip:"):
		p = m.policy.Plan(m.policy.AnonymousPlan)
	default:
		p = m.policy.Plan(m.policy.DefaultPlan)
		for _, id := range m.id.keys {
			if id.Subject == subject {
				p = id.Plan
			}
		}
	}
	if p == nil {
		return "", nil, fmt.Errorf("no plan for %q", subject)
	}
	limits = append(limits, p.Limits...)
	for _, ru := range m.rules {
		if ru.clientOnly && ru.appliesTo(p.Name) {
			limits = append(limits, ru.limits...)
		}
	}
	if m.penalty != nil {
		limits = append(limits, m.penalty.box, m.penalty.refusals)
	}
	return key, limits, nil
}

// subjectKey returns the store key of subject.
func (m *Middleware) subjectKey(subject string) (string, error) {
	if subject == "" || len(m.id.prefix)+len(subject) > sluice.MaxKeyLen {
		return "", fmt.Errorf("a subject is 1 to %d bytes", sluice.MaxKeyLen-len(m.id.prefix))
	}
	return m.id.prefix + subject, nil
}

// Inspect peeks at every limit of subject (see SubjectLimits): what it has
// used, what remains, when it is full again. It consumes nothing. When a
// state was not read from a store (sluice.Status.Unavailable: a failover's
// allow or deny while its store cannot be reached, which would show every
// limit full or used up), it returns no state and an error wrapping
// sluice.ErrStoreUnavailable.
func (m *Middleware) Inspect(ctx context.Context, subject, plan string) ([]LimitState, error) {
	key, limits, err := m.SubjectLimits(subject, plan)
	if err != nil {
		return nil, err
	}
	if len(limits) == 0 {
		return nil, nil
	}
	checks := make([]sluice.Check, len(limits))
	for i, l := range limits {
		checks[i] = sluice.Check{Key: key, Limit: l}
	}
	var d sluice.Decision
	if err := m.limiter.Allow(ctx, checks, &d); err != nil {
		return nil, err
	}
	for i, st := range d.Statuses {
		if st.Unavailable {
			return nil, fmt.Errorf("httplimit: %q: limit %s not read: the store could not decide: %w", subject, limits[i].Name(), sluice.ErrStoreUnavailable)
		}
	}
	out := make([]LimitState, len(limits))
	for i, l := range limits {
		st, b := d.Statuses[i], m.stated.of(l).Burst()
		out[i] = LimitState{Name: l.Name(), Algorithm: l.Algorithm().String(), Quantity: l.Quantity(),
			Window: WindowOf(l), Burst: b, Remaining: st.Remaining,
			Used: max(0, b-st.Remaining), ResetAfter: st.ResetAfter}
	}
	return out, nil
}

// ForgetBox has m forget what it remembers of the penalty box of the client
// whose states are kept under key (as SubjectLimits returns it), so that
// its next request asks the store: a caller that resets the box's state in
// the store calls it after the reset, on every Middleware it decides with,
// and the client is let out at once by them (by other instances within a
// second, see Penalty). Without a Penalty it does nothing.
func (m *Middleware) ForgetBox(key string) {
	if m.zero() || m.penalty == nil {
		return
	}
	m.penalty.held.forget(key)
}
