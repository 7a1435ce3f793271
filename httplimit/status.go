package httplimit

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/quota"
)

// Standing is a client's own standing, as StatusHandler answers it: the
// plan it is on and, limit by limit, the figures its RateLimit headers
// and a refusal's currentUsage state.
type Standing struct {
	// Plan is the client's plan; empty for an exempt client.
	Plan string `json:"plan,omitempty"`
	// Exempt is true for a client never limited (ExemptAddresses,
	// ExemptKeys, ExemptUsers): it has no limits to show.
	Exempt bool `json:"exempt,omitempty"`
	// Limits are the limits a request like this one is checked against
	// (the plan's, the rules it matches, the global ones), but those whose
	// headers are hidden (HiddenLimits).
	Limits []LimitStanding `json:"limits"`
	// Penalty, when the client is in the penalty box, is how long every
	// request of it stays refused; Limits is then empty.
	Penalty *PenaltyStanding `json:"penalty,omitempty"`
}

// LimitStanding is one limit of a Standing, in the figures of the IETF
// headers: quota q (Limit), window w (absent for concurrency), what
// remains of q, what is used of it (q − remaining) and when more of it is
// available (now + t, whole seconds rounded up).
type LimitStanding struct {
	Policy    string `json:"policy"`    // the limit's name
	Limit     int64  `json:"limit"`     // q, in units
	Remaining int64  `json:"remaining"` // r, at most q
	Used      int64  `json:"used"`      // q − r
	// Window is w as FormatWindow writes it ("1m"), a calendar limit's
	// period as WindowOf does; absent for concurrency.
	Window string `json:"window,omitempty"`
	// ResetsAt is now + t, whole seconds rounded up (RFC 3339, UTC).
	ResetsAt string `json:"resetsAt"`
}

// PenaltyStanding is the penalty box's hold on a client.
type PenaltyStanding struct {
	RetryAfter int64 `json:"retryAfter"` // seconds, rounded up
	// Until is when the box has lifted, in whole seconds rounded up (RFC
	// 3339, UTC).
	Until string `json:"until"`
}

// statusReadsName is the name (and ID) of the limit of StatusHandler's
// reads, whose state is under the client's key: no limit of a client's
// may have that ID.
const statusReadsName = "status-reads"

// newStatusReads returns the limit of how often one client reads its
// standing from StatusHandler.
func newStatusReads() sluice.Limit {
	return sluice.GCRA(60, time.Minute).WithBurst(10).Named(statusReadsName)
}

// statusReads checks that no limit kept under a client's key — a plan's,
// a key's own plan's, a rule's — has the ID of StatusHandler's reads,
// whose state it would share.
func (v *validator) statusReads(o *Options) {
	plan := func(field string, p *Plan) {
		if p == nil {
			return
		}
		for j, l := range p.Limits {
			if l.ID() == statusReadsName {
				v.errorf(fmt.Sprintf("%s.Limits[%d]", field, j), "a limit's ID is %q, that of the state of StatusHandler's reads", statusReadsName)
			}
		}
	}
	for i, p := range o.Plans {
		plan(fmt.Sprintf("Plans[%d]", i), p)
	}
	for i, k := range o.Keys {
		if !slices.Contains(o.Plans, k.Plan) { // a plan of the key's own
			plan(fmt.Sprintf("Keys[%d].Plan", i), k.Plan)
		}
	}
	for i, r := range o.Rules {
		for _, l := range r.Limits {
			if ruleLimit(r.Name, l).ID() == statusReadsName {
				v.errorf(fmt.Sprintf("Rules[%d].Limits", i), "a limit's ID is %q, that of the state of StatusHandler's reads", statusReadsName)
			}
		}
	}
}

// StatusHandler answers a client's own standing, as GitHub's GET
// /rate_limit does, for a route of its own (mount it on GET): the request
// is identified as every request is (API key, token, user, address) and
// every limit it would be checked against is peeked at — a check of cost
// 0, rules' costs included — so reading it spends none of the client's
// quota. The answer is 200 with a Standing in JSON and the RateLimit
// headers of the peek, Cache-Control: no-store. A client in the penalty
// box gets its Penalty; an exempt one {"exempt": true}. Reads are bounded
// per client — 60 a minute, 10 at once, by a GCRA limit named
// "status-reads" whose state is the client's apart from its quota (no
// limit of a plan or rule may have that ID: Validate refuses one) — in a
// call of their own before the peek: past it, 429 with Retry-After and a
// problem body. When no store decided (the store failed, or a failover's
// allow or deny decided in its place, whose figures are made up) it
// answers 503 with Retry-After: 1 and a problem body, and states no
// figure.
func (m *Middleware) StatusHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, err := m.peek(r)
		if err != nil {
			if r.Context().Err() != nil {
				return // the client left
			}
			m.warn(r.Context(), "rate limit standing not decided", "err", err, "path", loggedPath(r.URL.Path))
			ra := int64(1)
			writeProblem(w, &Problem{Type: ProblemReducedCapacity, Title: "Service Unavailable", Status: http.StatusServiceUnavailable,
				Detail: "Your standing cannot be read now. Retry after the time in Retry-After.", Instance: r.URL.EscapedPath(), RetryAfter: &ra})
			return
		}
		defer m.Discard(res)
		if res.statusRefused {
			ra, reads := retryAfterSeconds(res.penaltyDecision.RetryAfter), m.statusReads
			writeProblem(w, &Problem{Type: ProblemQuotaExceeded, Title: "Too Many Requests", Status: http.StatusTooManyRequests,
				Detail:   fmt.Sprintf("Your standing can be read %d times a minute, %d at once. Retry in %d s.", reads.Quantity(), m.stated.of(reads).Burst(), ra),
				Instance: r.URL.EscapedPath(), ViolatedPolicies: []string{reads.Name()}, RetryAfter: &ra, Policy: reads.Name()})
			return
		}
		st := Standing{Limits: []LimitStanding{}}
		switch {
		case res.Exempt:
			st.Exempt = true
		case res.Penalized:
			st.Plan = res.Identity.Plan.Name
			until := res.Now.Add(res.Decision.RetryAfter)
			if s := until.Truncate(time.Second); s.Before(until) {
				until = s.Add(time.Second)
			}
			st.Penalty = &PenaltyStanding{RetryAfter: retryAfterSeconds(res.Decision.RetryAfter), Until: until.UTC().Format(time.RFC3339)}
		default:
			st.Plan = res.Identity.Plan.Name
			st.Limits = m.standings(res)
			m.writeHeaders(w.Header(), res)
		}
		body, _ := json.Marshal(&st) // a Standing always marshals
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", "no-store")
		h.Set("Content-Length", strconv.Itoa(len(body)+1))
		w.WriteHeader(http.StatusOK)
		w.Write(append(body, '\n'))
	})
}

// peek identifies r and peeks at every limit it would be checked against.
// Route exemptions do not apply: the route is the status route, whose
// client is the one asked about.
func (m *Middleware) peek(r *http.Request) (*Result, error) {
	if m.zero() {
		return nil, errZero()
	}
	res := m.result()
	res.statusRefused, res.peeking = false, true
	if res, err := m.identifyInto(r, res); err != nil || res.Exempt {
		return res, err
	}
	res.penaltyChecks[0] = sluice.Check{Key: res.Identity.storeKey(m.id.prefix), Limit: m.statusReads, Cost: 1}
	err := m.limiter.Allow(r.Context(), res.penaltyChecks[:], &res.penaltyDecision)
	if err == nil && res.penaltyDecision.Statuses[0].Unavailable {
		// Decided by no store (a failover's allow or deny): the limits'
		// states cannot be read either, as when the store fails.
		err = errStandingUndecided
	}
	if err != nil {
		m.Discard(res)
		return nil, err
	}
	if !res.penaltyDecision.Allowed {
		res.statusRefused = true
		return res, nil
	}
	res.plan = m.planOf(res.Identity.Plan)
	res.Cost = 0
	f := requestFacts{r: r, id: &res.Identity, peek: true}
	m.matchRules(&f, res)
	if res, err = m.decide(r.Context(), res); err != nil || res.Penalized {
		return res, err
	}
	for i := range res.Decision.Statuses {
		if res.Decision.Statuses[i].Unavailable {
			// A made-up status (a failover's allow: the whole quota; its
			// deny: none of it) is no standing.
			m.Discard(res)
			return nil, errStandingUndecided
		}
	}
	return res, nil
}

// errStandingUndecided is peek's error when a store's failure policy, not
// the store, decided a check: what the client has left is not known.
var errStandingUndecided = fmt.Errorf("httplimit: reading a standing: the store could not decide: %w", sluice.ErrStoreUnavailable)

// standings returns the figures of res's checks whose headers are shown.
func (m *Middleware) standings(res *Result) []LimitStanding {
	out := make([]LimitStanding, 0, len(res.Checks))
	var items []string
	if ph := res.checksOf; ph != nil && len(ph.items) == len(res.Checks) {
		items = ph.items
	}
	for i := range res.Checks {
		if items != nil && items[i] == "" {
			continue // hidden
		}
		l, s := res.Checks[i].Limit, &res.Decision.Statuses[i]
		qt := quota.Of(m.stated.of(l))
		f := limitFigures{Quota: qt, name: l.Name(), remaining: min(s.Remaining, qt.Q)}
		f.wait(s.Remaining, s.ResetAfter, s.RetryAfter)
		ls := LimitStanding{Policy: f.name, Limit: f.Q, Remaining: f.remaining, Used: f.Q - f.remaining,
			ResetsAt: f.resetAt(res.Now).UTC().Format(time.RFC3339)}
		switch {
		case f.Calendar:
			ls.Window = WindowOf(l)
		case f.W > 0:
			ls.Window = FormatWindow(time.Duration(f.W) * time.Second)
		}
		out = append(out, ls)
	}
	return out
}
