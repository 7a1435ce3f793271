package migrate

import (
	"fmt"
	"strings"

	"github.com/sluice-dev/sluice"
)

// traefikInFlightReq is the inFlightReq middleware's configuration: it
// refuses (429) a request when Amount requests of its source are in
// flight, an Amount below 1 refusing every request.
type traefikInFlightReq struct {
	Amount          int64                   `yaml:"amount"`
	SourceCriterion *traefikSourceCriterion `yaml:"sourceCriterion"`
}

// source returns the sourceCriterion Traefik keys f by: the one set, else
// the request's Host (Traefik's default for inFlightReq, where rateLimit's
// is the client address).
func (f *traefikInFlightReq) source() *traefikSourceCriterion {
	sc := f.SourceCriterion
	if sc == nil || sc.IPStrategy == nil && sc.RequestHeaderName == "" && !sc.RequestHost {
		return &traefikSourceCriterion{RequestHost: true}
	}
	return sc
}

// traefikInTurn reports, for the limiting middlewares ms of one router (or
// of a file without routers, where), that Traefik runs them one after the
// other, each deciding alone, where sluice decides a request's rules in
// one call and a refusal spends nothing: a rateLimit that admits a request
// keeps the token it took (golang.org/x/time/rate's reservation, cancelled
// only when it refuses itself), so a request a later middleware refuses
// has spent it, and sluice admits more after such refusals.
func (t *Translation) traefikInTurn(where string, ms []traefikMiddleware) {
	var names []string
	rated, spends := false, false // a rateLimit met; one before another
	for _, m := range ms {
		if m.rl != nil && m.rl.Average <= 0 {
			continue // does not limit
		}
		spends = spends || rated
		rated = rated || m.rl != nil
		names = append(names, m.name)
	}
	if !spends {
		return
	}
	t.differs(where+" in turn", "Traefik runs %s one after the other, each deciding alone: a rateLimit that admits a request keeps the token it took, so a request a later middleware refuses has spent the earlier rateLimit's token; sluice decides a request's rules in one call, and a refusal spends nothing. After such refusals sluice admits more than Traefik did: keep one rateLimit per router (with an inFlightReq, if any, before it) to decide alike.", strings.Join(names, ", "))
}

// traefikInFlightLimit returns the concurrency limit of inFlightReq f, the
// middleware name: an amount below 1, with which Traefik refuses every
// request, is refused.
func (t *Translation) traefikInFlightLimit(name string, f *traefikInFlightReq) (*Limit, error) {
	if f.Amount < 1 || f.Amount > sluice.MaxQuantity {
		return nil, fmt.Errorf("inFlightReq amount %d is out of range (1 to %d; Traefik refuses every request below 1)", f.Amount, sluice.MaxQuantity)
	}
	where := "middleware " + name
	l := concurrencyLimit("concurrent", f.Amount, fmt.Sprintf("%s: inFlightReq amount %d", where, f.Amount))
	t.same(where, "Traefik refuses (429) a request when %d requests of its source are in flight; a concurrency limit of %d admits the same, and gives a slot back when a response ends.", f.Amount, f.Amount)
	t.leaseNote(where+" lease", "Traefik", "forwardAuth", "its routers")
	return &l, nil
}
