package httplimit

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/redact"
	"github.com/sluice-dev/sluice/internal/routes"
)

// A FieldError is one invalid field of Options.
type FieldError struct {
	// Field is the field's path in Options, in Go syntax:
	// "DefaultPlan", "Plans[1].Limits[0]", `Plans[0].Costs["POST /x"]`,
	// "Keys[2].Plan.Limits".
	Field string
	// Err says what is wrong, without the field: `"fre" is not a plan
	// (plans: free, pro)`.
	Err error
}

// Error returns the problem with its field:
//
//	httplimit: Options.DefaultPlan: "fre" is not a plan (plans: free, pro)
//
// A FieldError without Err says "invalid".
func (e *FieldError) Error() string {
	why := "invalid"
	if e.Err != nil {
		why = e.Err.Error()
	}
	return "httplimit: Options." + e.Field + ": " + why
}

// Unwrap returns e.Err.
func (e *FieldError) Unwrap() error { return e.Err }

// Validate reports every reason New would refuse o, each as a *FieldError,
// joined (errors.Join), in field order; nil when New accepts o. Empty
// fields are judged by their defaults (see WithDefaults). It checks:
//
//   - Plans: at least one; none nil; names valid (sluice.ValidName) and
//     unique; each with at least one limit, every limit valid
//     (sluice.Limit.Err), named once in the plan and apart from the
//     global limits, and of an ID (sluice.Limit.ID) no other limit of the
//     plan has, at most sluice.MaxChecks limits with the global ones;
//     costs of valid, non-conflicting ServeMux patterns, none negative or
//     above a limit's burst; upgrades to a plan of Plans, at an absolute
//     URL.
//   - Global: valid limits, each name and ID once.
//   - DefaultPlan, AnonymousPlan: names of Plans.
//   - Scope: empty or a sluice.ValidName string.
//   - Keys: each SHA-256 once; each plan valid as Plans' are (a key's
//     own limits merged in, no two of one ID).
//   - APIKeyHeaders, TokenHeaders, UserHeader, PlanHeader: valid header names.
//   - TrustedProxies: valid prefixes.
//   - ForwardedHeader, UnknownKeys, Headers: known values, in any case.
//   - IPv4Prefix in [1, 32], IPv6Prefix in [1, 128].
//   - Exempt: valid, non-conflicting ServeMux patterns.
//   - RefusalTemplate: one JSON value whose placeholders are known.
//   - GlobalStatus: 0, 429 or 503.
//   - DocsURL and each plan's Upgrade.URL: absolute http or https URLs.
//   - RetryJitter: in [0, MaxRetryJitter].
//   - Count: names of limits or rules, each "all", "successes",
//     "failures", CountHeader and a header name, or CountStatus and a list
//     of statuses (100 to 599) and classes (1xx to 5xx); only fixed
//     windows, sliding logs and sliding counters count by the answer.
//   - Penalty: zero, or Refusals ≥ 1 and durations as a Limit's window;
//     no limit named "penalty" or "penalty-refusals"; at most
//     sluice.MaxChecks-1 limits per plan with the global ones and every
//     rule's (the box's guard is checked with them).
//   - ExemptAddresses: valid prefixes; ExemptKeys: names of Keys;
//     ExemptUsers: non-empty, with a UserHeader to read them from;
//     ExemptPlans: names of plans.
//   - Rules: names valid and unique; methods, header names and hosts
//     valid; paths valid ServeMux path patterns; key attributes known
//     ("user" with a UserHeader, "path:" with a wildcard of every path,
//     "header:" believed from trusted proxies only when there are some);
//     HeaderFrom and Fallback known values; each entry of Except naming
//     a method, path, host or header, without ExceptPaths, its fields
//     valid as a rule's own; at least one valid limit each,
//     named at most 64 characters with the rule's name, a name no plan's,
//     global or other rule's limit has and an ID no plan's or other rule's
//     limit has (each as the rule names it: "<rule>.<limit>"); a Cost that
//     each limit can hold; at most sluice.MaxChecks limits per plan with
//     the global ones and every rule's.
func (o Options) Validate() error {
	v := &validator{}
	v.options(o.WithDefaults())
	return errors.Join(v.errs...)
}

// validator collects field errors.
type validator struct {
	errs []error
}

func (v *validator) errorf(field, format string, args ...any) {
	v.errs = append(v.errs, &FieldError{Field: field, Err: fmt.Errorf(format, args...)})
}

func (v *validator) wrap(field string, err error) {
	v.errs = append(v.errs, &FieldError{Field: field, Err: err})
}

func (v *validator) options(o Options) {
	if len(o.Plans) == 0 {
		v.errorf("Plans", "at least one plan is needed")
	}
	if o.DocsURL != "" {
		v.webURL("DocsURL", o.DocsURL)
	}
	names := map[string]string{} // plan name → field
	for i, p := range o.Plans {
		field := fmt.Sprintf("Plans[%d]", i)
		if p == nil {
			v.errorf(field, "nil plan")
			continue
		}
		if f, dup := names[p.Name]; dup {
			v.errorf(field+".Name", "%q is already the name of %s", p.Name, f)
		}
		names[p.Name] = field
	}
	list := planList(o.Plans)
	v.limits("Global", o.Global)
	for i, p := range o.Plans {
		if p != nil {
			v.plan(fmt.Sprintf("Plans[%d]", i), p, o.Global, names, list)
		}
	}
	if _, ok := names[o.DefaultPlan]; !ok && len(names) > 0 {
		v.errorf("DefaultPlan", "%q is not a plan (plans: %s)", o.DefaultPlan, list)
	}
	if _, ok := names[o.AnonymousPlan]; !ok && len(names) > 0 && o.AnonymousPlan != o.DefaultPlan {
		v.errorf("AnonymousPlan", "%q is not a plan (plans: %s)", o.AnonymousPlan, list)
	}
	if o.Scope != "" && !sluice.ValidName(o.Scope) {
		v.errorf("Scope", "%q is not a scope name (1 to 64 of A-Z a-z 0-9 . _ -)", o.Scope)
	}
	keys := map[[32]byte]int{}
	for i, k := range o.Keys {
		field := fmt.Sprintf("Keys[%d]", i)
		if j, dup := keys[k.SHA256]; dup {
			v.errorf(field+".SHA256", "the same key is configured twice (Keys[%d])", j)
		}
		keys[k.SHA256] = i
		switch {
		case k.Plan == nil:
			// No default plan to take: DefaultPlan's error says why.
		case planNamed(o.Plans, k.Plan.Name) == k.Plan:
		default:
			v.plan(field+".Plan", k.Plan, o.Global, names, list)
		}
	}
	for i, h := range o.TokenHeaders {
		v.headerName(fmt.Sprintf("TokenHeaders[%d]", i), h)
	}
	for i, h := range o.APIKeyHeaders {
		v.headerName(fmt.Sprintf("APIKeyHeaders[%d]", i), h)
	}
	if o.UserHeader != "" {
		v.headerName("UserHeader", o.UserHeader)
	}
	if o.PlanHeader != "" {
		v.headerName("PlanHeader", o.PlanHeader)
	}
	for i, p := range o.TrustedProxies {
		if !p.IsValid() {
			v.errorf(fmt.Sprintf("TrustedProxies[%d]", i), "%v is not an IP address or CIDR prefix", p)
		}
	}
	v.oneOf("ForwardedHeader", o.ForwardedHeader, forwardedXFF, forwardedRFC7239)
	v.oneOf("UnknownKeys", o.UnknownKeys, unknownKeysIP, unknownKeysKey)
	v.between("IPv4Prefix", o.IPv4Prefix, 1, 32)
	v.between("IPv6Prefix", o.IPv6Prefix, 1, 128)
	ok := true
	for i, p := range o.Exempt {
		if err := checkPattern(p); err != nil {
			v.wrap(fmt.Sprintf("Exempt[%d]", i), err)
			ok = false
		}
	}
	if ok {
		if i, j := conflict(o.Exempt); i >= 0 {
			v.errorf(fmt.Sprintf("Exempt[%d]", j), "%q conflicts with %q: both match some requests, neither more specifically", o.Exempt[j], o.Exempt[i])
		}
	}
	v.exemptions(&o)
	v.hidden(&o)
	v.count(&o)
	v.penalty(&o)
	v.statusReads(&o)
	if o.RefusalTemplate != "" {
		if _, err := compileTemplate(o.RefusalTemplate); err != nil {
			v.wrap("RefusalTemplate", err)
		}
	}
	switch o.GlobalStatus {
	case 0, http.StatusTooManyRequests, http.StatusServiceUnavailable:
	default:
		v.errorf("GlobalStatus", "%d: a refusal by global limits is 429 or 503", o.GlobalStatus)
	}
	if o.RetryJitter < 0 || o.RetryJitter > MaxRetryJitter {
		v.errorf("RetryJitter", "%v: a jitter is between 0 and %v", o.RetryJitter, MaxRetryJitter)
	}
	v.rules(&o)
	for i, m := range o.Headers {
		switch m {
		case ModeIETF, ModeDraft7, ModeDraft6, ModeLegacy:
		default:
			v.errorf(fmt.Sprintf("Headers[%d]", i), "%q is not a header mode (%s, %s, %s, %s)", m, ModeIETF, ModeDraft7, ModeDraft6, ModeLegacy)
		}
	}
}

// plan checks one plan; field is its path, names the plans' names, list
// their list for messages.
func (v *validator) plan(field string, p *Plan, global []sluice.Limit, names map[string]string, list string) {
	if !sluice.ValidName(p.Name) {
		v.errorf(field+".Name", "plan name %q must be 1-64 characters of A-Z a-z 0-9 . _ -", p.Name)
	}
	if len(p.Limits) == 0 {
		v.errorf(field+".Limits", "a plan needs at least one limit")
	}
	v.limits(field+".Limits", p.Limits)
	for j, l := range p.Limits {
		for _, g := range global {
			if l.Name() == g.Name() {
				v.errorf(fmt.Sprintf("%s.Limits[%d]", field, j), "limit %q has the name of a global limit (names identify limits in headers and problem bodies)", l.Name())
			}
		}
	}
	if n := len(p.Limits) + len(global); n > sluice.MaxChecks {
		v.errorf(field+".Limits", "%d limits with the global ones, at most %d", n, sluice.MaxChecks)
	}
	ok := true
	patterns := slices.Sorted(maps.Keys(p.Costs))
	for _, ep := range patterns {
		cf := fmt.Sprintf("%s.Costs[%q]", field, ep)
		if err := checkPattern(ep); err != nil {
			v.wrap(cf, err)
			ok = false
			continue
		}
		cost := p.Costs[ep]
		if cost < 0 {
			v.errorf(cf, "%d is out of range [0, %d]", cost, int64(sluice.MaxQuantity))
			continue
		}
		for _, l := range append(p.Limits[:len(p.Limits):len(p.Limits)], global...) {
			if l.Err() == nil && cost > l.Burst() {
				v.errorf(cf, "costs %d, more than limit %s can ever hold (%d): such requests could never be admitted", cost, l.Name(), l.Burst())
				break
			}
		}
	}
	if ok {
		if i, j := conflict(patterns); i >= 0 {
			v.errorf(fmt.Sprintf("%s.Costs[%q]", field, patterns[j]), "%q conflicts with %q: both match some requests, neither more specifically", patterns[j], patterns[i])
		}
	}
	if u := p.Upgrade; u != nil {
		if _, ok := names[u.Plan]; !ok {
			v.errorf(field+".Upgrade.Plan", "%q is not a plan (plans: %s)", u.Plan, list)
		}
		if u.URL != "" {
			v.webURL(field+".Upgrade.URL", u.URL)
		}
	}
}

// webURL checks that s, a link a client is sent (in a 429 body, on the
// docs page), is an absolute http or https URL.
func (v *validator) webURL(field, s string) {
	switch u, err := url.Parse(s); {
	case err != nil || u.Scheme == "":
		v.errorf(field, "%q is not an absolute URL", redact.URL(s))
	case !strings.EqualFold(u.Scheme, "http") && !strings.EqualFold(u.Scheme, "https") || u.Host == "":
		v.errorf(field, "%q is not an http or https URL", redact.URL(s))
	}
}

// limits checks a list of limits: each valid, each name once, each ID
// once. The limits of a list (a plan's, a key's plan with its own limits,
// the global ones, a rule's) are checked in one call under one key, and
// sluice.ValidateChecks refuses a call that spends one state (one ID) for
// one key twice: every request would be left undecided.
func (v *validator) limits(field string, ls []sluice.Limit) {
	seen := map[string]bool{}
	ids := map[string]string{} // a limit's ID: its name
	for i, l := range ls {
		lf := fmt.Sprintf("%s[%d]", field, i)
		if err := l.Err(); err != nil {
			v.wrap(lf, err)
			continue
		}
		if seen[l.Name()] {
			v.errorf(lf, "%q is already a limit of this list", l.Name())
		} else if other, dup := ids[l.ID()]; dup {
			v.errorf(lf, "%q has the ID %q of limit %q of this list: the two would share one state", l.Name(), l.ID(), other)
		}
		seen[l.Name()] = true
		if _, dup := ids[l.ID()]; !dup {
			ids[l.ID()] = l.Name()
		}
	}
}

func (v *validator) headerName(field, name string) {
	if !validToken(name) {
		v.errorf(field, "%q is not a valid header name", name)
	}
}

func (v *validator) oneOf(field, s string, options ...string) {
	for _, o := range options {
		if s == o {
			return
		}
	}
	v.errorf(field, "%q is not one of %s", s, strings.Join(options, ", "))
}

func (v *validator) between(field string, n, lo, hi int) {
	if n < lo || n > hi {
		v.errorf(field, "%d is out of range [%d, %d]", n, lo, hi)
	}
}

// planList lists the names of plans for messages: "free, pro".
func planList(plans []*Plan) string {
	var names []string
	for _, p := range plans {
		if p != nil {
			names = append(names, p.Name)
		}
	}
	return strings.Join(names, ", ")
}

// validToken reports whether s is an HTTP token (a valid header name).
func validToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' ||
			c == '!' || c == '#' || c == '$' || c == '%' || c == '&' || c == '\'' || c == '*' || c == '+' || c == '^' || c == '`' || c == '|' || c == '~') {
			return false
		}
	}
	return s != ""
}

// conflict returns the first pair i < j of valid patterns that a ServeMux
// refuses to hold together, or -1, -1, each registered with its host in
// lower case and without the root dot, as endpoints match them.
func conflict(patterns []string) (i, j int) {
	mux := http.NewServeMux()
	for j := range patterns {
		if handle(mux, routes.LowerHost(patterns[j])) == nil {
			continue
		}
		for i := range j {
			pair := http.NewServeMux()
			if handle(pair, routes.LowerHost(patterns[i])) == nil && handle(pair, routes.LowerHost(patterns[j])) != nil {
				return i, j
			}
		}
		return j, j // refused alone: checkPattern says why
	}
	return -1, -1
}

// handle registers pattern on mux, turning its panic into an error.
func handle(mux *http.ServeMux, pattern string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	mux.Handle(pattern, http.NotFoundHandler())
	return nil
}

// checkPattern reports whether s is a valid net/http ServeMux pattern,
// without a segment written as a glob (see routes.GlobError).
func checkPattern(s string) error {
	if err := routes.Check(s); err != nil {
		return err
	}
	_, j := routes.HostSpan(s)
	if err := routes.GlobError(s[j:]); err != nil {
		return fmt.Errorf("%q: %w", s, err)
	}
	return nil
}
