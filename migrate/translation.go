package migrate

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sluice-dev/sluice/internal/routes"
)

// Format names, as `sluice import -from` takes them.
const (
	FormatNginx   = "nginx"
	FormatEnvoy   = "envoy"
	FormatKong    = "kong"
	FormatTraefik = "traefik"
	FormatHAProxy = "haproxy"
	// FormatIngressNginx is Kubernetes Ingresses with ingress-nginx's
	// rate-limit annotations.
	FormatIngressNginx = "ingress-nginx"
	// FormatAPIGateway is Amazon API Gateway's usage plans, as the AWS CLI
	// prints them.
	FormatAPIGateway = "aws-apigateway"
	// FormatEnvoyGateway is Envoy Gateway's BackendTrafficPolicy rate
	// limits, with the HTTPRoutes they target.
	FormatEnvoyGateway = "envoy-gateway"
)

// MaxPlaces is the most places a source may limit apart (nginx locations,
// Kong routes, Traefik routers, HAProxy sections, Ingresses,
// envoyproxy/ratelimit descriptors); a source with more is refused, to be
// imported a part at a time. The bound exists because places become path
// patterns that are compared pair by pair, or rules of a tree the report
// lists one by one.
const MaxPlaces = 5000

// tooManyPlaces is the error of a source of n places of kind, above
// MaxPlaces.
func tooManyPlaces(n int, kind string) error {
	return fmt.Errorf("%d %s, more than the %d one import translates: import the file a part at a time", n, kind, MaxPlaces)
}

// Formats lists the formats Import reads.
func Formats() []string {
	return []string{FormatNginx, FormatEnvoy, FormatEnvoyGateway, FormatKong, FormatTraefik, FormatHAProxy, FormatIngressNginx, FormatAPIGateway}
}

// Limit is one translated limit, as the configuration writes it.
type Limit struct {
	// Name, Algorithm, Quantity, Window, Burst and MaxWait are the sluice
	// limit (Burst and MaxWait 0 when not set).
	Name      string
	Algorithm string
	Quantity  int64
	Window    time.Duration
	Burst     int64
	MaxWait   time.Duration
	// Period, when not "", makes a fixed-window limit a calendar limit of
	// the UTC calendar (sluice.Calendar): "day", "week", "month" or
	// "year", written as its window; Window is then 0. Starts is the
	// configuration's starts: a weekday for a week ("sunday"), a day of the
	// month from 1 to 28 for a month ("15"); "" for the period's own start
	// (Monday, the 1st).
	Period string
	Starts string
	// Global limits count every client together (the config's global
	// section); the others count each client apart.
	Global bool
	// Shadow is true when the source already only reports the limit
	// (nginx's limit_req_dry_run, envoy's shadow_mode).
	Shadow bool
	// Source is the limit as the source wrote it, with its place.
	Source string
	// ID, when not "", is the limit's id: the identity of its state, in
	// place of its name: a plan's limit on the Redis store whose name
	// another plan's limit of another algorithm takes (idsApartByAlgorithm).
	ID string
}

// JWT is identity.jwt as an import writes it: the issuer's JWK Set (at a
// URL, or in a file), and the claims a token must carry.
type JWT struct {
	JWKSURL, JWKSFile, Issuer string
	// Discover: the keys are where Issuer's discovery document says.
	Discover  bool
	Audiences []string
}

// Plan is a plan besides the imported one: the limits of the clients its
// keys name.
type Plan struct {
	Name   string
	Limits []Limit
}

// HeaderMatch is a header a rule's requests carry, with this value.
type HeaderMatch struct {
	Name, Value string
}

// Key is an API key, by the hex SHA-256 of its value (never the value),
// with the plan it chooses.
type Key struct {
	Name, SHA256, Plan string
}

// Rule is one translated rule of the configuration's rules: section: its
// limits count only the requests it matches, each key of them apart.
type Rule struct {
	// Name names the rule; its limits are "<Name>.<limit>" in headers,
	// bodies and metrics.
	Name string
	// Paths are the ServeMux patterns it matches; empty: every path.
	Paths []string
	// Hosts are the host names it matches; empty: every host.
	Hosts []string
	// Methods and Headers are the methods and headers it matches; empty:
	// any.
	Methods []string
	Headers []HeaderMatch
	// ExceptPaths are ServeMux patterns it leaves out, even where Paths
	// matches: places below it whose own limits replace its there.
	ExceptPaths []string
	// Any are alternatives to Paths, Hosts, Methods, Headers and
	// ExceptPaths, which are then empty (httplimit's Rule.Any; match: a
	// list): a request is the rule's when one of them matches it, one
	// count across them all.
	Any []RuleMatch
	// Except are requests it leaves out, whichever alternative matched
	// them (httplimit's Rule.Except; except:): those of another route of
	// the source, which takes them first or has limits of its own, each
	// by all the paths, hosts, methods and headers it names (none of its
	// ExceptPaths).
	Except []RuleMatch
	// Plans are the plans whose clients it applies to; empty: every plan.
	Plans []string
	// Key lists the request attributes that name a count (httplimit's
	// Rule.Key: "ip/32/128", "header:X-Api-Key", "host", "route", …).
	Key []string
	// HeaderFrom is "any" when a header key is believed from any peer, as
	// the source read it; "" is the default (trusted proxies only).
	HeaderFrom string
	// Fallback is "skip" when a request without the key's value is not
	// counted; "" is the default (counted by address).
	Fallback string
	// Cost is what a request costs the rule's limits; nil: the request's
	// cost (its plan's).
	Cost *int64
	// Limits are the rule's limits; their Global is false.
	Limits []Limit
	// everyPlan: the rule applies to the clients of every plan, even where
	// the consumers' plans scope the others to the imported plan (Kong's
	// plugins on routes where no consumer is named).
	everyPlan bool
}

// RuleMatch is one alternative of a Rule's Any: the fields of the Rule of
// those names.
type RuleMatch struct {
	Paths, Hosts, Methods []string
	Headers               []HeaderMatch
	ExceptPaths           []string
}

// alternatives returns r's Any, or else its own fields as its one
// alternative.
// every reports whether m names nothing, and so takes every request.
func (m RuleMatch) every() bool {
	return len(m.Paths)+len(m.Hosts)+len(m.Methods)+len(m.Headers)+len(m.ExceptPaths) == 0
}

func (r *Rule) alternatives() []RuleMatch {
	if len(r.Any) > 0 {
		return r.Any
	}
	return []RuleMatch{{Paths: r.Paths, Hosts: r.Hosts, Methods: r.Methods, Headers: r.Headers, ExceptPaths: r.ExceptPaths}}
}

// leaveOut adds patterns, a place below r's paths whose own limits replace
// r's there, to r.ExceptPaths, and reports whether it could: not when a
// pattern of own (the places r does apply to) lies below one of them, as
// except_paths would leave that place out too.
func (r *Rule) leaveOut(patterns, own []string) bool {
	for _, q := range patterns {
		if slices.ContainsFunc(own, func(p string) bool { return below(p, q) }) {
			return false
		}
	}
	for _, q := range patterns {
		if !slices.Contains(r.ExceptPaths, q) {
			r.ExceptPaths = append(r.ExceptPaths, q)
		}
	}
	return true
}

// leaveOutAt is leaveOut on r's alternative alt (r.Any[alt]), or on r's
// own match when alt is -1.
func (r *Rule) leaveOutAt(alt int, patterns, own []string) bool {
	if alt < 0 {
		return r.leaveOut(patterns, own)
	}
	a := &r.Any[alt]
	q := Rule{ExceptPaths: a.ExceptPaths}
	if !q.leaveOut(patterns, own) {
		return false
	}
	a.ExceptPaths = q.ExceptPaths
	return true
}

// exceptMatch leaves the requests m matches out of r, whichever
// alternative matched them (an entry of r.Except): merged into an entry of
// the same hosts, methods and headers, else a new one.
func (r *Rule) exceptMatch(m RuleMatch) {
	for i := range r.Except {
		e := &r.Except[i]
		if !sameSet(e.Hosts, m.Hosts) || !sameSet(e.Methods, m.Methods) || !slices.Equal(e.Headers, m.Headers) {
			continue
		}
		switch {
		case len(e.Paths) == 0: // every path already
		case len(m.Paths) == 0:
			e.Paths = nil
		default:
			for _, q := range m.Paths {
				if !slices.Contains(e.Paths, q) {
					e.Paths = append(e.Paths, q)
				}
			}
		}
		return
	}
	r.Except = append(r.Except, m)
}

// dropUnreached removes from each rule's ExceptPaths the patterns none of
// its Paths reaches (routes.PathsOverlap): they leave nothing out, and
// sluice refuses an except_paths pattern that leaves out nothing.
func (t *Translation) dropUnreached() {
	for i := range t.SluiceRules {
		r := &t.SluiceRules[i]
		if len(r.Paths) > 0 {
			r.ExceptPaths = unreachedDropped(r.Paths, r.ExceptPaths)
		}
		for j := range r.Any {
			if a := &r.Any[j]; len(a.Paths) > 0 {
				a.ExceptPaths = unreachedDropped(a.Paths, a.ExceptPaths)
			}
		}
	}
}

// unreachedDropped returns except without the patterns none of paths
// reaches (routes.PathsOverlap).
func unreachedDropped(paths, except []string) []string {
	return slices.DeleteFunc(except, func(q string) bool {
		return !slices.ContainsFunc(paths, func(p string) bool { return routes.PathsOverlap(p, q) })
	})
}

// Difference is one place where sluice's behaviour and the source's are
// compared.
type Difference struct {
	// Where names the source's setting ("zone one", "plugin on route api").
	Where string
	// Same is true when sluice decides exactly as the source (Text says
	// why); false when it differs (Text says how, and what to do).
	Same bool
	Text string
}

// Translation is what an importer found and how it maps onto sluice.
type Translation struct {
	// Format is the source's format; Source its file name.
	Format, Source string
	// Limits are the per-client and global limits of the one plan,
	// "imported", that the configuration holds.
	Limits []Limit
	// Costs are ServeMux patterns and their cost: a source that limits
	// only some paths becomes "/": 0 plus a cost of 1 on those paths.
	Costs map[string]int64
	// APIKeyHeaders and UserHeader identify clients; empty: by address.
	// KeysOnlyListed: an API key not under Keys is no client of its own
	// (the source counted such requests by address).
	APIKeyHeaders  []string
	KeysOnlyListed bool
	UserHeader     string
	// IPv6Prefix groups IPv6 clients (0: sluice's default, /64).
	IPv6Prefix int
	// TrustedProxies are identity.trusted_proxies: the peers whose
	// X-Forwarded-For names the client, as the source believed them
	// (addresses, CIDR prefixes, "unix:").
	TrustedProxies []string
	// JWT, when set, is identity.jwt: whose tokens name clients.
	JWT *JWT
	// ExemptAddresses are client address ranges no limit counts (the
	// configuration's exempt.addresses).
	ExemptAddresses []string
	// Headers are the RateLimit header modes that match what clients saw
	// before (empty: ietf).
	Headers []string
	// HideHeaders: the source sent no rate-limit headers, so the
	// configuration hides every limit (response.hide). RetryJitter is its
	// response.retry_jitter (0: none).
	HideHeaders bool
	RetryJitter time.Duration
	// Instances and OnStoreError describe a shared store when the source
	// had one (0 and "": the memory store).
	Instances    int
	OnStoreError string
	// RedisAddress and RedisDB, when the source names its Redis
	// ("host:port", the database), are the shared store's; without one
	// the configuration has a placeholder to fill in.
	RedisAddress string
	RedisDB      int
	// Plans are plans besides the imported one (Kong's consumers'), and
	// Keys the API keys that choose them.
	Plans []Plan
	Keys  []Key
	// SluiceRules are the rules: section: limits that count only the
	// requests a rule matches, by a key of their own (nginx zones used on
	// some locations only, or keyed by a header or the host).
	SluiceRules []Rule
	// Rules, for Format envoy, are the rules of the envoyproxy/ratelimit
	// file, listed for the report: they stay in that file, which sluice's
	// Envoy service reads, and are not plan limits.
	Rules []Limit
	// EnvoyRules, for Format envoy, is the rules file the configuration
	// loads (name and content).
	EnvoyRules     string
	EnvoyRulesText string
	// EnvoyHeaders, for Format envoy, is the envoy section's headers mode
	// and draft-6 names (key → value: headers, limit_header,
	// remaining_header, reset_header) translated from
	// envoyproxy/ratelimit's environment settings; nil when the source
	// did not hold them.
	EnvoyHeaders map[string]string
	// Differences are every place the semantics were compared.
	Differences []Difference
	// local: Format envoy read Envoy's local rate limit filter, not
	// envoyproxy/ratelimit's rules.
	local bool
	// keyAuthHeaders, for Format kong, are the headers its key-auth plugins
	// read a consumer's key from (canonical; nil: none configured).
	keyAuthHeaders []string
	// kongAnonymous, for Format kong, is set when no authentication
	// plugin of the file names a request's consumer, so that Kong's
	// limit_by consumer counts every request by its address.
	kongAnonymous bool
	// kongUnauthRoutes, for Format kong, name the routes no authentication
	// plugin runs on when one runs on others: Kong names no consumer there.
	kongUnauthRoutes []string
	// kongUnauthPaths, for Format kong, are the ServeMux patterns of those
	// routes' paths.
	kongUnauthPaths []string
	// kongConsumerPlans, for Format kong: a consumer or consumer group has
	// a rate-limiting plugin, which becomes a plan.
	kongConsumerPlans bool
	// kongLegacy, for Format kong: the file is a decK file of Kong before
	// 3.0 (kongLegacyFormat), whose plugins without a policy counted as
	// policy cluster on a node with a database (kongSettings).
	kongLegacy bool
	// kongAuthed, for Format kong, is what the routes an authentication
	// plugin runs on match, when it runs on some routes only (nil
	// otherwise): where Kong runs the consumers' plugins.
	kongAuthed *kongMatch
	// claimHeaders, for Format envoy-gateway, are the request headers
	// Envoy copies a verified token's claims into (canonical name → claim).
	claimHeaders map[string]string
}

func (t *Translation) same(where, format string, args ...any) {
	t.Differences = append(t.Differences, Difference{Where: where, Same: true, Text: fmt.Sprintf(format, args...)})
}

func (t *Translation) differs(where, format string, args ...any) {
	t.Differences = append(t.Differences, Difference{Where: where, Text: fmt.Sprintf(format, args...)})
}

// nameRe is what sluice accepts as a limit name.
var nameRe = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// limitName makes s a sluice limit name, distinct from those in t.
func (t *Translation) limitName(s string) string { return uniqueName(s, 56, t.hasLimit) }

// ruleName makes s a rule name, distinct from those in t, short enough
// that "<rule>.per-minute" names its limit.
func (t *Translation) ruleName(s string) string {
	base := nameBase(s, 48)
	// used[k] is whether base-k (base itself for k = 1) is a rule's name,
	// read in one pass; with n rules one of 1 to n+1 is free.
	used := make([]bool, len(t.SluiceRules)+2)
	for _, r := range t.SluiceRules {
		if r.Name == base {
			used[1] = true
		} else if rest, ok := strings.CutPrefix(r.Name, base+"-"); ok {
			if k, err := strconv.Atoi(rest); err == nil && k >= 2 && k < len(used) && strconv.Itoa(k) == rest {
				used[k] = true
			}
		}
	}
	k := slices.Index(used[1:], false) + 1
	if k == 1 {
		return base
	}
	return base + "-" + strconv.Itoa(k)
}

// uniqueName makes s a name sluice accepts, of at most maxLen characters, and
// distinct from every name taken reports.
func uniqueName(s string, maxLen int, taken func(string) bool) string {
	return firstFree(nameBase(s, maxLen), taken)
}

// firstFree returns base, or base-2, base-3 and so on: the first that taken
// does not report.
func firstFree(base string, taken func(string) bool) string {
	name := base
	for i := 2; taken(name); i++ {
		name = fmt.Sprintf("%s-%d", base, i)
	}
	return name
}

// nameBase makes s a name sluice accepts, of at most maxLen characters:
// each character it does not take an underscore, "limit" for "".
func nameBase(s string, maxLen int) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	name := b.String()
	if len(name) > maxLen {
		name = name[:maxLen]
	}
	if name == "" {
		name = "limit"
	}
	return name
}

func (t *Translation) hasLimit(name string) bool {
	for _, l := range t.Limits {
		if l.Name == name {
			return true
		}
	}
	return false
}

// validHeaderName reports whether s is an HTTP field name (RFC 9110's
// token), as sluice's configuration accepts it.
func validHeaderName(s string) bool {
	return s != "" && strings.Trim(s, "!#$%&'*+-.^_`|~"+alnum) == ""
}

// validHostName reports whether s is a host name of letters, digits, dots
// and hyphens, as a rule's hosts match it: labels none of which is empty,
// the root's dot allowed at the end.
func validHostName(s string) bool {
	name := strings.TrimSuffix(s, ".")
	return name != "" && strings.Trim(name, ".-"+alnum) == "" && !strings.HasPrefix(name, ".") && !strings.Contains(name, "..")
}

const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// window writes l's window as the configuration reads it: a duration, or
// its calendar period.
func (l Limit) window() string {
	if l.Period != "" {
		return l.Period
	}
	return formatWindow(l.Window)
}

// formatWindow writes d as the configuration reads it: "1s", "1m", "24h".
func formatWindow(d time.Duration) string {
	s := d.String()
	s = strings.TrimSuffix(s, "m0s") + map[bool]string{true: "m", false: ""}[strings.HasSuffix(s, "m0s")]
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// Import translates src, in format (one of Formats), named source in the
// configuration and report. The report says, when the translation's rules
// match paths, that sluice's rules also count other spellings of a path;
// except paths that leave nothing out are dropped; on the Redis store, the
// plans' limits of one name and two algorithms count apart
// (idsApartByAlgorithm). An error for a file
// without format's signs, that Detect takes for another format, names that
// format.
func Import(format, src, source string) (*Translation, error) {
	var t *Translation
	var err error
	switch format {
	case FormatNginx:
		t, err = Nginx(src, source)
	case FormatEnvoy:
		t, err = Envoy(src, source)
	case FormatKong:
		t, err = Kong(src, source)
	case FormatTraefik:
		t, err = Traefik(src, source)
	case FormatHAProxy:
		t, err = HAProxy(src, source)
	case FormatIngressNginx:
		t, err = IngressNginx(src, source)
	case FormatAPIGateway:
		t, err = APIGateway(src, source)
	case FormatEnvoyGateway:
		t, err = EnvoyGateway(src, source)
	default:
		return nil, fmt.Errorf("format %q: use %s", format, strings.Join(Formats(), ", "))
	}
	if err != nil {
		if !looksLike(src, format) {
			if looks, ok := Detect(src); ok {
				return nil, fmt.Errorf("%w (the file looks like %s, not %s: import it as %s)", err, looks, format, looks)
			}
		}
		return nil, err
	}
	t.dropUnreached()
	t.idsApartByAlgorithm()
	if slices.ContainsFunc(t.SluiceRules, func(r Rule) bool {
		return slices.ContainsFunc(r.alternatives(), func(m RuleMatch) bool { return len(m.Paths) > 0 })
	}) {
		t.differs("paths", "sluice's rules also count the other spellings of the paths they match, which many upstreams serve as the same resource: with a trailing slash (/login/), with ;parameters (/login;jsessionid=1), in another case (/LOGIN). The source counts only the spelling it names, so a client respelling a path escaped its limit there and is limited here.")
	}
	return t, nil
}

// excerpt returns s quoted as %q quotes it, cut to its first 40 bytes (at
// the start of a UTF-8 sequence) with "…" after: what an error shows of a
// word it could not read, which may be a whole file given by mistake.
func excerpt(s string) string {
	const most = 40
	if len(s) <= most {
		return strconv.Quote(s)
	}
	n := most
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strconv.Quote(s[:n]) + "…"
}
