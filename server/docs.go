package server

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/internal/calendartext"
	"github.com/sluice-dev/sluice/internal/leasehold"
)

// docsPage is the client documentation generated from the live
// configuration: one page per plan (GET /docs?plan=name; the default plan
// without a plan), each with header and body examples produced by running
// the real limiter on a private store. The page cannot know its reader's
// plan: it is public, and an API key has no business being sent to it.
// It tells the limits a client meets and how to behave, never what escapes
// them or whom sluice trusts: no exempt route (an internal path, or a host
// no limit applies to that a client could name in its Host), address, key
// or user, no trusted proxy or header a trusted layer sets, no caller or
// key name, no credential a rule matches (credentialHeader). An exempt plan's page says its clients are never limited.
// A bucket the store in force leases from Redis is told by its shared
// burst, as its RateLimit headers state it (docsLeases).
type docsPage struct {
	byPlan   map[string][]byte
	def      string
	notFound []byte // the default plan's page, saying the plan asked for is unknown
	// policy is the pages' Content-Security-Policy: their script, the same
	// on each, and nothing else runs.
	policy string
}

type docsPlan struct {
	Name, Role string
	// Exempt is true for a plan of exempt.plans: no limit applies.
	Exempt  bool
	Limits  []docsLimit
	Costs   []docsCost
	Upgrade *httplimit.Upgrade
}

type docsLimit struct {
	Name, Rule, Algorithm, Note string
	// Hidden is true for a limit the RateLimit headers leave out.
	Hidden bool
}

type docsCost struct {
	Endpoint string
	Cost     int64
}

// docsData is what the template renders: Plan is the plan the page is
// about, Plans every plan (for the switcher).
type docsData struct {
	Plan        docsPlan
	Plans       []docsPlan
	UnknownPlan bool
	Global      []docsLimit
	Rules       []docsRule
	Counted     []docsCounted // the limits that count requests by their answer
	Identity    config.Identity
	// Keys is true when an API key can name a client: some key is listed
	// (keys:, keys_file) or identity.unknown_keys is key. Otherwise a
	// request with a key counts as one without, and the page names none.
	Keys bool
	// KeyHeader is how the code examples send an API key: a header name and
	// the value's prefix before the key ("Bearer " for Authorization).
	// KeyVar names the variable that holds it, KeyWord what it is: "API_KEY"
	// and "key", or, where tokens identify clients and no key is listed,
	// "ACCESS_TOKEN" and "access token"; both are empty where neither keys
	// nor tokens name clients, whose examples then send no credential.
	KeyHeader, KeyPrefix string
	KeyVar, KeyWord      string
	Modes                []string
	// Watch is the header mode whose fields the advice on backing off and
	// the word on retry_jitter name: the first of ietf, draft-7, draft-6
	// and legacy that Modes holds.
	Watch string
	// Concurrency is true when some limit counts requests in progress (its
	// RateLimit-Policy item has qu instead of w).
	Concurrency bool
	// Calendar is true when some limit counts calendar periods (its
	// RateLimit-Policy item has no w).
	Calendar    bool
	Example     docsExample
	Degradation docsDegradation
	DocsURL     string
	// Penalty is the penalty box's rule, nil without one.
	Penalty *docsPenalty
	// RetryJitter is response.retry_jitter as a window ("30s"), "" for none.
	RetryJitter string
	// StatusPath is response.status_path, "" for none.
	StatusPath string
}

// docsPenalty is the penalty box as /docs tells it.
type docsPenalty struct {
	Refusals          int64
	Within, For, Type string
}

// docsDegradation is what /docs says of the 503s of an overloaded service.
// The health check routes are left out: a load balancer's, not a client's,
// like the exempt routes.
type docsDegradation struct {
	Enabled             bool
	RetryAfter          int64 // seconds
	RetryAfterMost      int64 // seconds, with response.retry_jitter; 0 without
	Factor              string
	FactorMaxWindow     string // "1h"
	Expensive, Critical []string
	Example             string // a real 503, headers and body
}

// docsLeases is what /docs is told of the leases of the store in force:
// which limits it leases, by state ID (nil: none), and their longest life
// (httplimit.Options.StoreLeased, StoreLeaseMaxAge).
type docsLeases struct {
	leased func(id string) bool
	maxAge time.Duration
}

// docsLeases returns the leases of the store in force, as its
// middlewares are told them (middlewareOptions).
func (s *Server) docsLeases() docsLeases {
	if s.opts.Leases == nil {
		return docsLeases{}
	}
	leased, maxAge := storeLeased(s.opts.Config.Store.Redis)
	return docsLeases{leased: leased, maxAge: maxAge}
}

// stated returns the limit whose figures clients are told for l, whose
// state the store keeps under idPrefix and its ID ("" for a plan's or a
// global limit, "<rule>." for a rule's): the limit the store's shared state
// decides l by when it leases l as a bucket (leasehold.Of), whose burst is
// the most l admits at once, else l. It is what the RateLimit headers state
// (httplimit.Middleware.Stated), and differs from l in its burst alone.
func (dl docsLeases) stated(l sluice.Limit, idPrefix string) sluice.Limit {
	if dl.leased == nil || l.Err() != nil || !dl.leased(idPrefix+l.ID()) {
		return l
	}
	maxAge := dl.maxAge
	if maxAge <= 0 {
		maxAge = leasehold.DefaultMaxAge
	}
	if shared, _, ok := leasehold.Of(l, maxAge); ok {
		return shared
	}
	return l
}

// restate gives the limits of drs, described from cfg's rules of the same
// names (describeRules, a limit per limit of the rule, in order), the notes
// of the limits the store decides them by.
func (dl docsLeases) restate(cfg *config.Config, drs []docsRule) {
	if dl.leased == nil {
		return
	}
	for i := range drs {
		dr := &drs[i]
		at := slices.IndexFunc(cfg.Rules, func(r httplimit.Rule) bool { return r.Name == dr.Name })
		if at < 0 || len(cfg.Rules[at].Limits) != len(dr.Limits) {
			continue
		}
		r := &cfg.Rules[at]
		for j, l := range r.Limits {
			if st := dl.stated(l, r.Name+"."); st != l {
				dr.Limits[j].Note = describeLimit(st, false).Note // the note alone tells the burst
			}
		}
	}
}

// newDocsPage builds the pages of cfg, served on a store whose leases are
// leases.
func newDocsPage(cfg *config.Config, leases docsLeases) (*docsPage, error) {
	tmpl, err := docsTemplate()
	if err != nil {
		return nil, fmt.Errorf("the docs page's template: %w", err)
	}
	data := docsData{Identity: cfg.Identity, Modes: cfg.Response.Headers,
		DocsURL: cfg.Response.DocsURL, KeyHeader: "X-API-Key", StatusPath: cfg.Response.StatusPath}
	for _, m := range []string{httplimit.ModeIETF, httplimit.ModeDraft7, httplimit.ModeDraft6, httplimit.ModeLegacy} {
		if data.Watch == "" && slices.Contains(data.Modes, m) {
			data.Watch = m
		}
	}
	if hs := cfg.Identity.APIKeyHeaders; len(hs) > 0 {
		data.KeyHeader = hs[0]
	}
	data.Keys = len(cfg.Keys) > 0 || cfg.KeysFile != "" || cfg.Identity.UnknownKeys == "key"
	switch {
	case len(cfg.Identity.JWT) > 0 && len(cfg.Keys) == 0 && cfg.KeysFile == "":
		data.KeyHeader, data.KeyVar, data.KeyWord = "Authorization", "ACCESS_TOKEN", "access token"
	case data.Keys:
		data.KeyVar, data.KeyWord = "API_KEY", "key"
	default:
		data.KeyHeader = ""
	}
	if data.KeyHeader == "Authorization" {
		data.KeyPrefix = "Bearer "
	}
	for _, p := range cfg.Policy.Plans {
		data.Plans = append(data.Plans, describePlan(cfg, p, leases))
		for _, l := range p.Limits {
			data.Concurrency = data.Concurrency || l.Algorithm() == sluice.AlgorithmConcurrency
			data.Calendar = data.Calendar || l.Period() != 0
		}
	}
	globalUnits := slices.ContainsFunc(cfg.Policy.Plans, countsUnits)
	for _, l := range cfg.Policy.Global {
		d := describeLimit(leases.stated(l, ""), globalUnits)
		d.Hidden = slices.Contains(cfg.Response.Hide, l.Name())
		data.Global = append(data.Global, d)
	}
	data.Degradation = describeDegradation(cfg)
	if j := cfg.Response.RetryJitter; j > 0 {
		data.RetryJitter = httplimit.FormatWindow(j)
	}
	if p := cfg.Penalty; p.Refusals > 0 {
		data.Penalty = &docsPenalty{Refusals: p.Refusals, Within: httplimit.FormatWindow(p.Within),
			For: httplimit.FormatWindow(p.For), Type: httplimit.ProblemPenalty}
	}
	page := &docsPage{byPlan: map[string][]byte{}, def: cfg.Policy.DefaultPlan}
	for _, p := range data.Plans {
		d := data
		d.Plan = p
		d.Rules = describeRules(cfg, p.Name)
		leases.restate(cfg, d.Rules)
		d.Counted = describeCounts(cfg, cfg.Policy.Plan(p.Name))
		if !p.Exempt { // an exempt plan's clients get no headers and no refusal to show
			if d.Example, err = runExample(cfg, p.Name, leases); err != nil {
				return nil, fmt.Errorf("the %s plan's example: %w", p.Name, err)
			}
		}
		var buf bytes.Buffer
		if err := tmpl.Execute(&buf, d); err != nil {
			return nil, err
		}
		page.byPlan[p.Name] = buf.Bytes()
		if page.policy == "" { // the script is the template's, the same on every page
			page.policy = contentSecurityPolicy(buf.Bytes(), docsPagePolicy)
		}
		if p.Name == page.def {
			d.UnknownPlan = true
			buf = bytes.Buffer{}
			if err := tmpl.Execute(&buf, d); err != nil {
				return nil, err
			}
			page.notFound = buf.Bytes()
		}
	}
	return page, nil
}

// describePlan describes p, its limits as leases states them.
func describePlan(cfg *config.Config, p *httplimit.Plan, leases docsLeases) docsPlan {
	dp := docsPlan{Name: p.Name, Upgrade: p.Upgrade, Exempt: slices.Contains(cfg.ExemptPlans, p.Name)}
	switch p.Name {
	case cfg.Policy.DefaultPlan:
		dp.Role = "The plan of identified clients that have no other."
	case cfg.Policy.AnonymousPlan:
		dp.Role = "The plan of clients known only by their IP address."
	}
	for _, l := range p.Limits {
		d := describeLimit(leases.stated(l, ""), countsUnits(p))
		d.Hidden = slices.Contains(cfg.Response.Hide, l.Name())
		dp.Limits = append(dp.Limits, d)
	}
	for ep, c := range p.Costs {
		dp.Costs = append(dp.Costs, docsCost{ep, c})
	}
	sort.Slice(dp.Costs, func(i, j int) bool { return dp.Costs[i].Endpoint < dp.Costs[j].Endpoint })
	return dp
}

// countsUnits reports whether some endpoint of p costs more than 1: its
// limits then count units, not requests (as its 429 bodies say).
func countsUnits(p *httplimit.Plan) bool {
	for _, c := range p.Costs {
		if c > 1 {
			return true
		}
	}
	return false
}

// describeLimit describes l, whose quantity counts units when units is
// true, else requests: what it allows and how it counts. A bucket's note
// tells l's burst: pass a leased bucket's shared limit (docsLeases.stated).
func describeLimit(l sluice.Limit, units bool) docsLimit {
	d := docsLimit{Name: l.Name(), Algorithm: l.Algorithm().String(), Rule: allowance(l, units)}
	switch l.Algorithm() {
	case sluice.AlgorithmConcurrency:
		d.Note = "a slot frees when a request ends; one never released frees after " + httplimit.FormatWindow(l.Window())
	case sluice.AlgorithmFixedWindow:
		d.Note = "counted in fixed windows that start on the clock (the minute, the UTC day)"
		if l.Period() != 0 {
			d.Note = calendartext.Note(l)
		}
	case sluice.AlgorithmSlidingLog:
		d.Note = "counted over the last " + httplimit.WindowOf(l) + " exactly"
	case sluice.AlgorithmSlidingCounter:
		d.Note = "counted over a sliding window (estimated from the current and the previous window)"
	case sluice.AlgorithmTokenBucket, sluice.AlgorithmGCRA:
		d.Note = "bursts of up to " + itoa(l.Burst()) + ", refilled steadily"
	case sluice.AlgorithmLeakyBucket:
		d.Note = "bursts of up to " + itoa(l.Burst()) + ", drained steadily"
		if l.MaxWait() > 0 {
			d.Note += "; beyond that requests wait up to " + l.MaxWait().String() + " instead of being refused"
		}
	}
	if l.Shadow() {
		d.Note += " — trial: reported in headers, never enforced"
	}
	return d
}

// allowance is what l allows, in units when units is true, else requests:
// a quantity per window ("100 requests per 1m"), or for a concurrency
// limit, whose window is only the lease after which a slot never released
// frees, a quantity at once ("2 requests in progress at once").
func allowance(l sluice.Limit, units bool) string {
	what := "requests"
	if units {
		what = "units"
	}
	if l.Algorithm() == sluice.AlgorithmConcurrency {
		return itoa(l.Quantity()) + " " + what + " in progress at once"
	}
	return strings.TrimSpace(strings.Join([]string{itoa(l.Quantity()), what, "per", httplimit.WindowOf(l)}, " "))
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// handleDocs serves the page of the plan named by ?plan= (the default
// plan's without one), or 404 with the default plan's page for a plan that
// does not exist.
func (s *Server) handleDocs(w http.ResponseWriter, r *http.Request) {
	p := s.state.Load().docs
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", p.policy)
	h.Set("X-Content-Type-Options", "nosniff")
	name := r.URL.Query().Get("plan")
	if name == "" {
		name = p.def
	}
	page, ok := p.byPlan[name]
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		page = p.notFound
	}
	w.Write(page)
}
