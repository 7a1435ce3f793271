package sluice

import (
	"errors"
	"fmt"
)

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
	Limits []Limit
	// Costs maps an endpoint to the units one request to it spends. For
	// HTTP the endpoint is a net/http ServeMux pattern ("POST /api/generate");
	// the most specific matching pattern wins. Unlisted endpoints cost 1.
	// A cost of 0 exempts the endpoint from the plan's limits (its requests
	// are peeks).
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
	Global []Limit
	// DefaultPlan is the plan of identified clients (API key or user) that
	// no rule assigns to another plan.
	DefaultPlan string
	// AnonymousPlan is the plan of clients known only by their IP address.
	AnonymousPlan string
}

// Plan returns the plan called name, or nil.
func (p *Policy) Plan(name string) *Plan {
	for _, pl := range p.Plans {
		if pl.Name == name {
			return pl
		}
	}
	return nil
}

// Checks appends to dst the checks of one request of cost units by subject
// on plan: the plan's limits, then the global limits. It allocates nothing
// when dst has room.
func (p *Policy) Checks(dst []Check, plan *Plan, subject string, cost int64) []Check {
	for _, l := range plan.Limits {
		dst = append(dst, Check{Key: subject, Limit: l, Cost: cost})
	}
	for _, l := range p.Global {
		dst = append(dst, Check{Key: GlobalSubject, Limit: l, Cost: cost})
	}
	return dst
}

// Validate reports every inconsistency: invalid or duplicate limits, unknown
// default, anonymous or upgrade plans, negative costs, more checks per
// request than MaxChecks.
func (p *Policy) Validate() error {
	var errs []error
	seen := map[string]bool{}
	globals := map[string]bool{}
	for _, l := range p.Global {
		if err := l.Err(); err != nil {
			errs = append(errs, fmt.Errorf("global: %w", err))
		}
		if globals[l.Name()] {
			errs = append(errs, fmt.Errorf("global: limit %q twice", l.Name()))
		}
		globals[l.Name()] = true
	}
	for _, pl := range p.Plans {
		if seen[pl.Name] {
			errs = append(errs, fmt.Errorf("plan %q twice", pl.Name))
		}
		seen[pl.Name] = true
		names := map[string]bool{}
		for _, l := range pl.Limits {
			if err := l.Err(); err != nil {
				errs = append(errs, fmt.Errorf("plan %s: %w", pl.Name, err))
			}
			if names[l.Name()] {
				errs = append(errs, fmt.Errorf("plan %s: limit %q twice", pl.Name, l.Name()))
			}
			if globals[l.Name()] {
				errs = append(errs, fmt.Errorf("plan %s: limit %q has the name of a global limit (names identify limits in headers and problem bodies)", pl.Name, l.Name()))
			}
			names[l.Name()] = true
		}
		if n := len(pl.Limits) + len(p.Global); n > MaxChecks {
			errs = append(errs, fmt.Errorf("plan %s: %d limits with the global ones, more than %d", pl.Name, n, MaxChecks))
		}
		for ep, c := range pl.Costs {
			if c < 0 {
				errs = append(errs, fmt.Errorf("plan %s: cost of %q is negative", pl.Name, ep))
			}
			for _, l := range append(pl.Limits[:len(pl.Limits):len(pl.Limits)], p.Global...) {
				if l.Err() == nil && c > l.Burst() {
					errs = append(errs, fmt.Errorf("plan %s: %q costs %d, more than limit %s can ever hold (%d): it could never be admitted",
						pl.Name, ep, c, l.Name(), l.Burst()))
				}
			}
		}
	}
	for _, pl := range p.Plans {
		if pl.Upgrade != nil && !seen[pl.Upgrade.Plan] {
			errs = append(errs, fmt.Errorf("plan %s: upgrade to unknown plan %q", pl.Name, pl.Upgrade.Plan))
		}
	}
	for _, ref := range []struct{ what, name string }{{"default plan", p.DefaultPlan}, {"anonymous plan", p.AnonymousPlan}} {
		if ref.name != "" && !seen[ref.name] {
			errs = append(errs, fmt.Errorf("%s %q is not a plan", ref.what, ref.name))
		}
	}
	return errors.Join(errs...)
}
