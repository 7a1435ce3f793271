package httplimit

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/quota"
)

// Problem types (RFC 9457; IANA HTTP Problem Types registry).
const (
	ProblemQuotaExceeded   = "https://iana.org/assignments/http-problem-types#quota-exceeded"
	ProblemReducedCapacity = "https://iana.org/assignments/http-problem-types#temporary-reduced-capacity"
	problemContentType     = "application/problem+json"
)

// Problem is an RFC 9457 problem body with sluice's extension members. A 429
// tells the client what happened (which limits, how much it used), when to
// come back (retryAfter, currentUsage.resetsAt) and what else it can do
// (upgrade, documentation).
type Problem struct {
	Type     string `json:"type"`
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Detail   string `json:"detail"`
	Instance string `json:"instance,omitempty"`

	ViolatedPolicies []string `json:"violated-policies,omitempty"`
	// RetryAfter is in whole seconds, as the Retry-After header; absent when
	// no wait will do (the request costs more than the limit holds).
	RetryAfter *int64 `json:"retryAfter,omitempty"`
	// Policy names the limit whose figures Limit, Window and CurrentUsage
	// are: the violated limit the longest wait is owed to, or the
	// concurrency limit that refused (its "RateLimit" item, its
	// RateLimit-Limit in the draft modes).
	Policy       string `json:"policy,omitempty"`
	Limit        int64  `json:"limit,omitempty"`
	Window       string `json:"window,omitempty"`
	Plan         string `json:"plan,omitempty"`
	CurrentUsage *Usage `json:"currentUsage,omitempty"`
	// Upgrade is the plan's, when the plan it names allows more of every
	// limit that refused (none when a rule's or a global limit refused).
	Upgrade       *Upgrade `json:"upgrade,omitempty"`
	Documentation string   `json:"documentation,omitempty"`
	// Violations describe the limits of ViolatedPolicies, in its order,
	// in the refusal of a gRPC or gRPC-Web call only: a front end that
	// answers the call as gRPC (sluice's proxy) states them in its
	// google.rpc.QuotaFailure, as grpclimit's interceptors do. Absent
	// from other refusals, and from the penalty box's.
	Violations []Violation `json:"violations,omitempty"`
}

// Violation is a limit that refused a call, as a google.rpc.QuotaFailure
// violation states it: its name (Policy, the quota id), its quantity as
// configured (the quota value) and what it allows (Result.Describe).
type Violation struct {
	Policy      string `json:"policy"`
	Quantity    int64  `json:"quantity"`
	Description string `json:"description"`
}

// Describe says what the limit of check i of res allows and where, in the
// words of the problem bodies: "per-minute: 100 per 1m on the free plan",
// "in-flight: 2 at once for the whole service" (a concurrency limit has no
// window; a global limit is no plan's), "search.per-ip: 10 per 1s under
// the search rule"; and what the request cost of it when that is more
// than 1 ("(this call costs 3 units)"; a check of cost 0 is a peek, such
// as the penalty box's, which costs nothing). i must index res.Checks.
func (res *Result) Describe(i int) string {
	c := &res.Checks[i]
	l := c.Limit
	where := "on the " + res.Identity.Plan.Name + " plan"
	_, key, _ := strings.Cut(c.Key, "/")
	if rule, ok := strings.CutPrefix(key, "rule:"); ok {
		rule, _, _ = strings.Cut(rule, "/")
		where = "under the " + rule + " rule"
	} else if key == GlobalSubject {
		where = "for the whole service"
	} else if rule := res.ruleOf(l); rule != "" {
		where = "under the " + rule + " rule"
	}
	what := fmt.Sprintf("%d per %s", l.Quantity(), WindowOf(l))
	if l.Algorithm() == sluice.AlgorithmConcurrency {
		what = fmt.Sprintf("%d at once", l.Quantity())
	}
	s := fmt.Sprintf("%s: %s %s", l.Name(), what, where)
	if c.Cost > 1 {
		s += fmt.Sprintf(" (this call costs %d units)", c.Cost)
	}
	return s
}

// violations are the Violations of res's refusal: each enforcing check
// that refused, in check order (as Decision.Violated); nil when res's
// checks do not say.
func violations(res *Result) []Violation {
	d := &res.Decision
	if len(d.Statuses) != len(res.Checks) {
		return nil
	}
	var vs []Violation
	for i, c := range res.Checks {
		if !d.Statuses[i].Allowed && !c.Limit.Shadow() {
			vs = append(vs, Violation{Policy: c.Limit.Name(), Quantity: c.Limit.Quantity(), Description: res.Describe(i)})
		}
	}
	return vs
}

// Usage is the deciding limit's state, in the figures of its RateLimit
// headers: Limit is the policy's q, Used is q − r, Window is w, ResetsAt is
// now + t rounded up to whole seconds.
type Usage struct {
	Used     int64  `json:"used"`
	Limit    int64  `json:"limit"`
	Window   string `json:"window,omitempty"` // absent for concurrency
	ResetsAt string `json:"resetsAt"`         // RFC 3339, UTC, whole seconds rounded up
}

// refusal builds the 429 problem of res. Its figures are those the
// headers carry for the deciding limit (see decidingFigures): limit and
// window are the policy's q and w, currentUsage.used is q − r and
// resetsAt is now + t rounded up to whole seconds. A limit no store
// decided (sluice.Status.Unavailable, sluice.Status.Undecided), or that a
// store refused for want of room (sluice.Status.NoRoom), has no
// currentUsage: its figures are made up, and the client's quota is not
// spent.
func (m *Middleware) refusal(r *http.Request, res *Result) *Problem {
	d := &res.Decision
	l, _ := res.Deciding()
	wait := res.RetryAfter()
	f := decidingFigures(res, &m.stated)
	b := m.stated.of(l).Burst() // what l admits at once
	plan := res.Identity.Plan
	p := &Problem{
		Type:             ProblemQuotaExceeded,
		Title:            "Too Many Requests",
		Status:           http.StatusTooManyRequests,
		Instance:         r.URL.EscapedPath(),
		ViolatedPolicies: d.Violated,
		Policy:           f.name,
		Limit:            f.Q,
		Plan:             plan.Name,
		Documentation:    m.docsURL,
		Upgrade:          m.upgradeFor(res, l),
	}
	if f.W > 0 {
		p.Window = FormatWindow(time.Duration(f.W) * time.Second)
	}
	if f.Calendar {
		p.Window = WindowOf(l)
	}
	units := m.countsUnits(res, l)
	if wait == sluice.Never {
		of := "the " + plan.Name + " plan"
		if rule := res.ruleOf(l); rule != "" {
			of = "the " + rule + " rule"
		} else if m.isGlobal(l.Name()) {
			of = "the whole service"
		}
		p.Detail = fmt.Sprintf("This request costs %d units, more than the %d that the %s limit of %s can ever hold: it cannot be admitted.",
			res.Cost, b, l.Name(), of)
	} else if l.Algorithm() == sluice.AlgorithmConcurrency {
		// Every other limit that refused admits the request within the
		// poll (see refusingCheck).
		ra := retryAfterSeconds(concurrencyPoll)
		p.RetryAfter = &ra
		where, whose := "on the "+plan.Name+" plan", "one of your requests"
		if rule := res.ruleOf(l); rule != "" {
			where, whose = "under the "+rule+" rule", "a request it counts"
		} else if m.isGlobal(l.Name()) {
			where, whose = "for the whole service", "a request in flight"
		}
		p.Detail = fmt.Sprintf("Too many concurrent requests: at most %d %s at once %s. Retry when %s has finished.",
			l.Quantity(), unitWord(l.Quantity(), units), where, whose)
		if len(d.Violated) > 1 {
			p.Detail += " Limits exceeded: " + strings.Join(d.Violated, ", ") + "."
		}
	} else {
		ra := retryAfterSeconds(wait)
		p.RetryAfter = &ra
		p.Detail = fmt.Sprintf("Rate limit exceeded: %d %s per %s", l.Quantity(), unitWord(l.Quantity(), units), windowWord(l))
		if f.Bucket && b != l.Quantity() {
			p.Detail += fmt.Sprintf(", at most %d at once,", b)
		}
		if rule := res.ruleOf(l); rule != "" {
			p.Detail += fmt.Sprintf(" under the %s rule. Retry in %d s.", rule, ra)
		} else if m.isGlobal(l.Name()) {
			p.Detail += fmt.Sprintf(" for the whole service, shared by every client. Retry in %d s.", ra)
		} else {
			p.Detail += fmt.Sprintf(" on the %s plan. Retry in %d s.", plan.Name, ra)
		}
		if res.Cost != 1 {
			p.Detail += fmt.Sprintf(" This request costs %d units.", res.Cost)
		}
		if len(d.Violated) > 1 {
			p.Detail += " Limits exceeded: " + strings.Join(d.Violated, ", ") + "."
		}
	}
	if p.Upgrade != nil {
		p.Detail += " The " + p.Upgrade.Plan + " plan allows more."
	}
	if !f.unmeasured {
		p.CurrentUsage = &Usage{
			Used:     f.Q - f.remaining,
			Limit:    f.Q,
			Window:   p.Window,
			ResetsAt: f.resetAt(res.Now).UTC().Format(time.RFC3339),
		}
	}
	if grpcCall(r) {
		p.Violations = violations(res)
	}
	return p
}

// upgradeFor returns the Upgrade of res's plan when the plan it names
// allows more of every enforcing limit that refused res (of l, the limit
// that refused it, when res's checks do not say which did): when that plan
// has no limit of its name, or one of a larger burst, or of a larger
// quantity in a window no longer. A refusal by a rule's limit or a global
// limit, which an upgrade does not raise, has none, even beside a plan's
// limit that it raises; so has a refusal of a limit whose status measures
// no use (see unmeasured): one refused for want of room in the store
// (sluice.Status.NoRoom), which a client of any plan would meet alike, or
// one no store decided.
func (m *Middleware) upgradeFor(res *Result, l sluice.Limit) *Upgrade {
	u := res.Identity.Plan.Upgrade
	if u == nil || m.policy == nil {
		return nil
	}
	up := planNamed(m.policy.Plans, u.Plan)
	if up == nil {
		return nil
	}
	d := &res.Decision
	if len(d.Statuses) != len(res.Checks) {
		if !m.raises(res, up, l) {
			return nil
		}
		return u
	}
	for i := range res.Checks {
		if st, c := &d.Statuses[i], &res.Checks[i]; !st.Allowed && !c.Limit.Shadow() && (unmeasured(st) || !m.raises(res, up, c.Limit)) {
			return nil
		}
	}
	return u
}

// raises reports whether plan up allows more of l, a limit of res's checks
// than res's plan does: l is the plan's (not a rule's or a global limit),
// and up has no limit of its name, or one of a larger burst, or of a
// larger quantity in a window no longer.
func (m *Middleware) raises(res *Result, up *Plan, l sluice.Limit) bool {
	if res.ruleOf(l) != "" || m.isGlobal(l.Name()) {
		return false
	}
	for _, ul := range up.Limits {
		if ul.Name() == l.Name() {
			return ul.Burst() > l.Burst() || ul.Quantity() > l.Quantity() && ul.Window() <= l.Window()
		}
	}
	return true
}

// retryAfterSeconds is the Retry-After value: delay-seconds rounded up, at
// least 1, so that a client that waits exactly that long is admitted.
func retryAfterSeconds(d time.Duration) int64 {
	return max(1, quota.CeilSeconds(d))
}

// writeProblem sends p with its status. 429s are marked uncacheable.
func writeProblem(w http.ResponseWriter, p *Problem) {
	h := w.Header()
	h.Set("Content-Type", problemContentType)
	if p.Status == http.StatusTooManyRequests || p.Status == http.StatusServiceUnavailable {
		h.Set("Cache-Control", "no-store")
	}
	if p.RetryAfter != nil {
		h.Set("Retry-After", strconv.FormatInt(*p.RetryAfter, 10))
	}
	body, _ := json.Marshal(p) // a Problem always marshals
	h.Set("Content-Length", strconv.Itoa(len(body)+1))
	w.WriteHeader(p.Status)
	w.Write(append(body, '\n'))
}

// FormatWindow writes a window the way people and configs do: "1s", "1m",
// "1h", "1d", "90s", "7d", "1h30m".
func FormatWindow(d time.Duration) string {
	day := 24 * time.Hour
	switch {
	case d >= day && d%day == 0:
		return strconv.FormatInt(int64(d/day), 10) + "d"
	case d >= time.Hour && d%time.Hour == 0:
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	case d >= time.Minute && d%time.Minute == 0:
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	case d%time.Second == 0:
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return d.String()
}

// WindowOf returns l's window as FormatWindow writes it ("1m", "30d"), or
// a calendar limit's period ("month"), followed by its offset when it has
// one ("month (offset -9h)").
func WindowOf(l sluice.Limit) string {
	p := l.Period()
	switch {
	case p == 0:
		return FormatWindow(l.Window())
	case l.Offset() < 0:
		return p.String() + " (offset -" + FormatWindow(-l.Offset()) + ")"
	case l.Offset() > 0:
		return p.String() + " (offset " + FormatWindow(l.Offset()) + ")"
	}
	return p.String()
}

// windowWord names l's window in a sentence: "minute", "month", "10s".
func windowWord(l sluice.Limit) string {
	if l.Period() != 0 {
		return WindowOf(l)
	}
	switch d := l.Window(); d {
	case time.Second:
		return "second"
	case time.Minute:
		return "minute"
	case time.Hour:
		return "hour"
	case 24 * time.Hour:
		return "day"
	}
	return FormatWindow(l.Window())
}

// unitWord names what a limit of n counts: requests, or units when
// requests may cost other than 1.
func unitWord(n int64, units bool) string {
	switch {
	case units && n == 1:
		return "unit"
	case units:
		return "units"
	case n == 1:
		return "request"
	}
	return "requests"
}

// countsUnits reports whether l, which decided res, is said in units: when
// res costs other than 1, or some endpoint costs more than 1 under l (of
// res's plan for a plan limit, of any plan for a global one).
func (m *Middleware) countsUnits(res *Result, l sluice.Limit) bool {
	if res.Cost != 1 {
		return true
	}
	for _, g := range m.policy.Global {
		if g.Name() == l.Name() {
			return m.globalUnits
		}
	}
	return res.plan != nil && res.plan.unitsCounted
}

// planCountsUnits reports whether some endpoint of p costs more than 1: its
// limits then count units, not requests.
func planCountsUnits(p *Plan) bool {
	for _, c := range p.Costs {
		if c > 1 {
			return true
		}
	}
	return false
}
