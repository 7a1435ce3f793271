package httplimit

import (
	"slices"

	"github.com/sluice-dev/sluice"
)

// A Rule limits the requests it matches by a key of its own, with limits of
// its own: uploads per tenant, searches per route and address, writes per
// user and host. Every rule of Options.Rules that matches a request applies
// to it, in order; its limits are checked together with the plan's and the
// global limits in one atomic call (all admitted, or none, and nothing
// consumed), so a refusal by a rule's limit spends nothing of the plan's.
//
// A rule's limits are named "<rule>.<limit>" in headers, problem bodies
// (violated-policies), metrics and the store: a refusal names its rule.
// The zero Rule matches every request, keys it by its client, and has no
// limit, which Validate refuses.
type Rule struct {
	// Name names the rule: a sluice.ValidName string, unique among the
	// rules. With each limit's name and a dot between them it names the
	// rule's limits, at most 64 characters in all, each apart from the
	// names of the plans', the global and other rules' limits and from
	// the IDs of the plans' limits.
	Name string

	// Methods are the request methods matched, in any case (GET also
	// matches HEAD, as in net/http's ServeMux): a request sent as "post"
	// is POST to an upstream that folds the case of a method (Django reads
	// it upper-cased), so a rule for POST limits it too. Empty: any
	// method.
	Methods []string
	// Paths are net/http ServeMux path patterns, without method or host:
	// "/v1/uploads" (that path only), "/v1/files/" (the subtree),
	// "/v1/tenants/{tenant}/uploads" (one segment for the wildcard),
	// "/v1/files/{path...}" (the rest of the path), "/v1/{$}" (that path
	// with its trailing slash only). They are matched against the request's
	// path after path cleaning ("//a/./b" is "/a/b"), read two ways when it
	// has escapes: decoded ("/files/a%2Fb" is "/files/a/b", as an upstream
	// that decodes before routing reads it), and as ServeMux reads it, by
	// the escaped path's segments, each unescaped ("/files/a%2Fb" is the
	// one segment "a/b" below /files). The rule applies when either reading
	// is its (Paths match it, and neither ExceptPaths nor an entry of
	// Except leaves it out), the decoded one tried first, then each reading
	// without its trailing slash ("/v1/login/" is the rule's of
	// "/v1/login", as Express, Rails, Laravel and ASP.NET Core serve it),
	// then the decoded path without its segments' path parameters
	// ("/v1/login;jsessionid=1" and "/v1/x/..;/login" are "/v1/login", as
	// Tomcat, Jetty and Spring route them), then each without its last
	// segment's format suffix ("/v1/login.json" is "/v1/login", as Rails
	// routes it; only under a pattern the path with its suffix does not
	// match), last the decoded readings in any case ("/V1/Login" is
	// "/v1/login", as Express and ASP.NET Core route it, a wildcard's value
	// then in lower case), and the escaped one so where it puts the
	// segments otherwise ("/API/a%2Fb" is the one segment "a/b" below
	// /api); a path wildcard's value is that of the reading
	// that applied, a "{x...}" value without its trailing slash.
	// Of several patterns that match a path, the most specific, as
	// ServeMux ranks them, is the one matched (KeyRoute's, and the one
	// KeyPath reads); of several that no other is more specific than (two
	// a ServeMux would refuse to hold together, "/a/{x}/b" and "/a/b/{y}",
	// or one listed twice), the first listed. Empty: any path.
	Paths []string
	// ExceptPaths are ServeMux path patterns the rule leaves out: a request
	// whose path matches one of them is not the rule's, even where Paths
	// matches it ("/v1/" except "/v1/health"). As a gateway applies the
	// limits of one location or route to a request, a rule for a prefix
	// can leave out the paths below it that are limited otherwise. A
	// pattern leaves out each reading of the path (see Paths) that it
	// matches, and each reading that one of those respells, as an
	// upstream serves it and a plan's Costs charge it: "/v1/" except
	// "/v1/bulk" leaves out /v1/bulk/, /v1/bulk;x, /v1/bulk.json and
	// /V1/BULK too, but not /v1/bulkfoo or /v1/bulk/x. A subtree's pattern
	// ("/v1/admin/", or one ending in {$} or {name...}) leaves out its root
	// with the trailing slash whole (/v1/admin/ is not read as /v1/admin
	// below /v1/), but not that root without the slash: /v1/admin and
	// /v1/admin.json stay the rule's. Upstreams differ on them (ServeMux
	// and a proxying nginx location redirect them to /v1/admin/; Express,
	// Rails and nginx without a proxy there serve them as a route of their
	// own), and counting them leaves them unlimited on none. A plan's cost
	// of the subtree's route ("POST /v1/admin/") charges POST /v1/admin too
	// (ServeMux's redirect), which the rule then counts at that cost: its
	// limits must hold it (config refuses them at load otherwise). A
	// reading that puts
	// the path's segments otherwise (an escaped slash or dot segment,
	// "/a/..;/b" without its parameters) respells none: the rule still
	// applies where another reading is its ("/api/" except "/api/admin/"
	// counts /api/admin/..%2Fsearch, decoded /api/search).
	ExceptPaths []string
	// Hosts are the host names matched, without port, in any case, with
	// or without the root dot ("api.example.com." is api.example.com);
	// "*.example.com" matches every name under example.com (not
	// example.com itself). Empty: any host.
	Hosts []string
	// Headers are headers the request must carry, all of them.
	Headers []HeaderMatch
	// Any are alternatives to Methods, Paths, ExceptPaths, Hosts and
	// Headers, which are then empty (Validate refuses a rule with both):
	// a request is the rule's when any one of them matches it, each with
	// the meaning those fields have, and it is counted under the rule's
	// key and limits whichever matched, one count for all of them
	// ("/orders" on a.example and "/billing" on b.example, but not
	// "/billing" on a.example). The alternatives are tried in order, each
	// under every reading of the path Paths describes, and the first that
	// matches is the request's: its pattern is the "route", its wildcards
	// the values of "path:" keys. Nil: the rule's own fields are its one
	// alternative.
	Any []Match
	// Except are requests the rule leaves out, whichever alternative (its
	// own fields or one of Any) matches them: a request that one entry
	// matches is not the rule's ("/api/" on every host but
	// internal.example, every method but OPTIONS, "/" but /health on
	// b.example). An entry matches a request when all the fields it names
	// do (an empty field: any), each as the Rule's field of that name
	// describes it, but for these, which leave a request out only as
	// every router reads it: Methods are matched as written (a router
	// that does not fold case serves "options" as no preflight, and one
	// that matches GET exactly gives HEAD to the rule's route: both stay
	// the rule's); Hosts match a request's host in any case but only
	// without a port or a trailing dot (a router that keeps them, as
	// Envoy's domains do, routes "b.example:8080" and "b.example." to
	// another virtual host); and a header of Headers with a Value matches
	// when the request carries it once, with that value (two field lines,
	// read joined as "1,2" or "1,1", are the rule's). Paths leave readings
	// of the path out as ExceptPaths do, the respellings of the route they
	// name included (a trailing slash, path parameters, a format suffix,
	// another case), and the rule applies when some reading is an
	// alternative's and left out by no entry. An entry names at least one
	// field, and has no ExceptPaths (no
	// nesting), which Validate checks. Nil: the rule leaves nothing out
	// but by ExceptPaths.
	Except []Match
	// Plans are the names of the plans whose clients the rule applies to
	// (a key's plan of its own counts as the plan of its name): a route
	// limited differently per plan is one rule per plan. Empty: clients of
	// every plan.
	Plans []string

	// Key lists the request attributes whose values, together, name the
	// rule's state: requests with the same values share the rule's limits.
	// Empty: KeyClient alone. Attributes:
	//
	//   - "client": the request's Identity (API key > token > user > IP), as the
	//     plan's limits are keyed (a subject longer than 128 bytes, which
	//     only a DecideFor caller's own can be, kept hashed);
	//   - "api_key": the API key's SHA-256: a listed key, or an unlisted
	//     one where Options.UnknownKeys is "key" (with "ip" an unlisted key
	//     is absent, and Fallback stands for it);
	//   - "user": the user id of Options.UserHeader, from TrustedProxies,
	//     else the subject of a token Options.Tokens verified;
	//   - "ip", "ip/N", "ip/N/M": the client address (through trusted
	//     proxies) grouped by Options' prefixes, or by /N for IPv4 and /M
	//     for IPv6 (default Options.IPv6Prefix);
	//   - "header:<Name>": the last value of a request header (of a header
	//     a trusted proxy appends to, its own), believed as HeaderFrom says;
	//   - "claim:<name>": a claim of the token Options.Tokens verified
	//     (TokenClaims.Claims): a tenant, a client application; absent
	//     without a verified token;
	//   - "host": the request's host, without port, in lower case (an
	//     IPv6 literal in its canonical spelling), hashed or not;
	//   - "path:<wildcard>": the value of a wildcard that every one of
	//     Paths has (of every alternative's Paths, with Any);
	//   - "path": the request's cleaned path, whole, in lower case and
	//     without a trailing slash or path parameters (each resource its
	//     own count, however its path is spelled to an upstream that
	//     ignores case, the slash or the parameters);
	//   - "query:<name>": the value of a query parameter, decoded, found
	//     by name in any case and as PHP names it ("ten.ant" is ten_ant);
	//   - "cookie:<name>": the value of a cookie, found as a query
	//     parameter is;
	//   - "form:<name>": the value of a field of an
	//     application/x-www-form-urlencoded or multipart/form-data body (a
	//     field, not a file) or of the query, found as a query parameter
	//     is, in lower case (the username of a login form: "Alice" and
	//     "alice" are one count);
	//   - "json:<path>": a field of a JSON object body (application/json
	//     or +json, or without a Content-Type when the body opens an
	//     object; after a leading byte order mark), names joined by dots,
	//     at most four ("user.email"): a string, in lower case, a whole
	//     number or a boolean, or the query parameter Rails names so
	//     ("user[email]"). A POST body without a Content-Type is read both
	//     as a form, as Rack (so Rails) reads it, and as JSON, as FastAPI
	//     and Go decoders read it, by either key: a value one reading
	//     gives is the field's, and readings that give values that
	//     differ count as a value given twice (below). Form and JSON
	//     fields are read from bodies of at most MaxKeyBody bytes, once per
	//     request, and the handler still reads the whole body; absent from
	//     DecideFor's requests, forward-auth and the decision API, which
	//     have no body;
	//   - "route": the pattern of Paths that matched, of several the most
	//     specific, which ServeMux would route the request to ("*" when
	//     Paths is empty), with Any the pattern of the alternative that
	//     matched: every client shares it;
	//   - "rule": one value for every request the rule matches, whichever
	//     of its patterns or alternatives: one count for all of them
	//     together.
	//
	// A query parameter, a cookie and a body field are the client's to
	// choose, as a header of HeaderFromAny is: a client choosing the value
	// chooses its count (which is the point of a count per username). A
	// value of a header, query, cookie, form or JSON key is taken without
	// the whitespace and invisible characters around it (Laravel, Devise
	// and Django trim a username), and one given twice with values that
	// differ counts every such request together. Values of at most 64
	// characters of A-Z a-z 0-9 . _ - @ are
	// kept as they are in the store key; others, and "-" (which stands for
	// an absent value under FallbackShared), are replaced by a hash, so
	// that no header can shape a store key or share the count of requests
	// without one. A value that is absent (no API key, an
	// empty or unbelieved header) is replaced as Fallback says.
	Key []string
	// HeaderFrom says whose "header:" key values are believed:
	// HeaderFromTrusted (only from Options.TrustedProxies, for a header a
	// gateway sets and overwrites, or appends its value to; the default)
	// or HeaderFromAny (from any peer: a client choosing its value chooses
	// its quota; one that sends it with values that differ, which
	// upstreams read differently, is counted with every request that
	// does, whatever Fallback).
	HeaderFrom string
	// Fallback says what stands for an absent key value: FallbackIP (the
	// client's address, grouped by Options' prefixes; the default — a
	// client without an address, as a DecideFor caller that gives no IP
	// or a Unix socket's peer, is keyed by its own Identity.Subject, its
	// user, API key or subject: each client its own count),
	// FallbackShared (one value shared by every such request) or
	// FallbackSkip (the rule does not apply to the request).
	Fallback string

	// Limits are the rule's own limits, at least one; their names are
	// unique in the rule.
	Limits []sluice.Limit
	// Cost is the units one matched request spends of the rule's limits,
	// at least 0 (0 peeks: the rule reports, never consumes, and refuses
	// only what nothing could admit), whatever the request's cost, but for
	// a peek (DecideFor's cost 0, StatusHandler's read), which spends 0 of
	// every limit. Nil: the request's cost, as its plan's costs (or
	// DecideFor's cost) set it; a request that costs more than a rule's limit
	// can hold is refused (see sluice.Check), which Validate does not
	// look for, as it does not know which endpoints a rule's requests
	// reach (sluice's configuration refuses such a rule for the routes of
	// its plans' costs).
	Cost *int64
}

// A Match is one alternative of a Rule's Any: the requests of its methods,
// paths but not its except paths, hosts and headers, each as the Rule's
// field of that name describes it (empty: any).
type Match struct {
	Methods     []string
	Paths       []string
	ExceptPaths []string
	Hosts       []string
	Headers     []HeaderMatch
}

// Alternatives returns the alternatives r matches by: Any, or else (Any
// empty) one Match of r's Methods, Paths, ExceptPaths, Hosts and Headers.
// It shares r's slices.
func (r *Rule) Alternatives() []Match {
	if len(r.Any) > 0 {
		return r.Any
	}
	return []Match{r.own()}
}

// own returns r's Methods, Paths, ExceptPaths, Hosts and Headers as a
// Match.
func (r *Rule) own() Match {
	return Match{Methods: r.Methods, Paths: r.Paths, ExceptPaths: r.ExceptPaths, Hosts: r.Hosts, Headers: r.Headers}
}

// AppliesTo reports whether r applies to the clients of the plan named
// plan: Plans is empty or names it.
func (r *Rule) AppliesTo(plan string) bool { return plansInclude(r.Plans, plan) }

// plansInclude reports whether plans, a rule's Plans, take in the plan
// named plan: none means every plan.
func plansInclude(plans []string, plan string) bool {
	return len(plans) == 0 || slices.Contains(plans, plan)
}

// HeaderMatch is one header a Rule requires: Name present (with any value,
// even empty) when Value is "", else one of its values equal to Value, case
// and all, but for the whitespace around either (see trimValue); a Value of
// whitespace alone is refused.
type HeaderMatch struct {
	Name  string
	Value string
}

// Key attributes of Rule.Key, and values of Rule.HeaderFrom and
// Rule.Fallback.
const (
	KeyClient  = "client"
	KeyAPIKey  = "api_key"
	KeyUser    = "user"
	KeyIP      = "ip"
	KeyHost    = "host"
	KeyRoute   = "route"
	KeyRule    = "rule"
	KeyURLPath = "path"
	// KeyHeader, KeyPath, KeyQuery and KeyCookie prefix a header name, a
	// path wildcard, a query parameter and a cookie name.
	KeyHeader = "header:"
	KeyQuery  = "query:"
	KeyCookie = "cookie:"
	KeyPath   = "path:"
	// KeyForm and KeyJSON prefix a field of a form body and the path of a
	// field of a JSON body.
	KeyForm = "form:"
	KeyJSON = "json:"
	// KeyClaim prefixes the name of a claim of the verified token
	// (TokenClaims.Claims).
	KeyClaim = "claim:"

	HeaderFromTrusted = "trusted_proxies"
	HeaderFromAny     = "any"

	FallbackIP     = "ip"
	FallbackShared = "shared"
	FallbackSkip   = "skip"
)
