package httplimit

import "github.com/sluice-dev/sluice"

// GlobalSubject is the Check.Key of global limits: one state shared by every
// client.
const GlobalSubject = "*"

// A Plan is what one class of clients may do: several limits checked
// together on every request (say per-second, per-minute and per-day), and a
// cost per endpoint.
type Plan struct {
	// Name is the plan's name, e.g. "free"; it appears in problem bodies,
	// docs and metrics.
	Name string
	// Limits are checked together, keyed by the client's subject.
	Limits []sluice.Limit
	// Costs maps an endpoint to the units one request to it spends. For
	// HTTP the endpoint is a net/http ServeMux pattern ("POST /api/generate");
	// the most specific matching pattern wins, a pattern's host matching
	// the request's in any case and with or without the root dot, as a
	// Rule's Hosts do, and its method matching a request's method in any
	// case ("post" costs what POST does: an upstream that folds the case
	// of a method serves it as that method). A path with a trailing slash
	// or path parameters, or in another case, costs at least what it costs
	// without them or in the pattern's case ("POST /bulk/", "POST /bulk;x"
	// and "POST /BULK" what "POST /bulk" does), as upstreams that ignore
	// them serve it. Unlisted endpoints cost 1.
	// A cost of 0 exempts the endpoint from the plan's limits (its requests
	// are peeks of them); a Rule with a Cost of its own still charges it.
	Costs map[string]int64
	// Upgrade is where a client of this plan gets more quota; nil on the top
	// plan.
	Upgrade *Upgrade
}

// Upgrade names the next plan up and where to get it.
type Upgrade struct {
	Plan string `json:"plan"` // e.g. "pro"
	URL  string `json:"url"`  // e.g. "https://example.com/pricing"
}

// A Policy is every plan plus the global limits that all requests share.
type Policy struct {
	// Plans in declaration order (the order docs list them in).
	Plans []*Plan
	// Global limits are checked on every request, keyed by GlobalSubject,
	// together with the plan's limits: one atomic call.
	Global []sluice.Limit
	// DefaultPlan is the plan of identified clients (API key or user) that
	// no rule assigns to another plan.
	DefaultPlan string
	// AnonymousPlan is the plan of clients known only by their IP address.
	AnonymousPlan string
}

// Plan returns the plan called name, or nil (always nil for a nil Policy,
// the zero Middleware's).
func (p *Policy) Plan(name string) *Plan {
	if p == nil {
		return nil
	}
	for _, pl := range p.Plans {
		if pl.Name == name {
			return pl
		}
	}
	return nil
}

// Checks appends to dst the checks of one request of cost units by subject
// on plan: the plan's limits (none for a nil plan, Plan's answer for a
// name it does not know), then the global limits (none for a nil Policy).
// It allocates nothing when dst has room.
func (p *Policy) Checks(dst []sluice.Check, plan *Plan, subject string, cost int64) []sluice.Check {
	if plan != nil {
		for _, l := range plan.Limits {
			dst = append(dst, sluice.Check{Key: subject, Limit: l, Cost: cost})
		}
	}
	if p == nil {
		return dst
	}
	for _, l := range p.Global {
		dst = append(dst, sluice.Check{Key: GlobalSubject, Limit: l, Cost: cost})
	}
	return dst
}
