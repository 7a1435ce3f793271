package httplimit

import (
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/sluice-dev/sluice"
)

// Reasons a request is exempt (Result.ExemptBy, Options.OnExempt).
const (
	ExemptRoute   = "route"   // Options.Exempt
	ExemptAddress = "address" // Options.ExemptAddresses
	ExemptKey     = "key"     // Options.ExemptKeys
	ExemptUser    = "user"    // Options.ExemptUsers
	ExemptPlan    = "plan"    // Options.ExemptPlans
)

// exemptions are the exempt clients of a middleware.
type exemptions struct {
	addrs []netip.Prefix
	keys  map[string]bool // key names
	users map[string]bool // user subjects (see identifier.userSubject)
	plans map[string]bool // plan names
}

func newExemptions(o *Options, id *identifier) *exemptions {
	if len(o.ExemptAddresses) == 0 && len(o.ExemptKeys) == 0 && len(o.ExemptUsers) == 0 && len(o.ExemptPlans) == 0 {
		return nil
	}
	e := &exemptions{addrs: masked(o.ExemptAddresses), keys: map[string]bool{}, users: map[string]bool{}, plans: map[string]bool{}}
	for _, p := range o.ExemptPlans {
		e.plans[p] = true
	}
	for _, k := range o.ExemptKeys {
		e.keys[k] = true
	}
	for _, u := range o.ExemptUsers {
		_, sub := id.userSubject(u)
		e.users[sub] = true
	}
	return e
}

// byAddress reports whether the client at addr is exempt (a zoned addr by
// its address: a prefix holds no zone).
func (e *exemptions) byAddress(addr netip.Addr) bool {
	if e == nil || !addr.IsValid() {
		return false
	}
	addr = addr.WithZone("")
	for _, p := range e.addrs {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// byIdentity returns why the client id is exempt, or "".
func (e *exemptions) byIdentity(id *Identity) string {
	switch {
	case e == nil:
	case id.KeyName != "" && e.keys[id.KeyName]:
		return ExemptKey
	case id.Kind == KindUser && e.users[id.Subject]:
		return ExemptUser
	case id.Plan != nil && e.plans[id.Plan.Name]:
		return ExemptPlan
	}
	return ""
}

// exemptAddress reports whether r's client address is exempt: an address
// known to be the client's, never a trusted proxy's standing in for a
// client that a hop it reported does not name (see forwardedClient), for
// every client behind that proxy would then be exempt.
func (m *Middleware) exemptAddress(r *http.Request) bool {
	if m.exemptions == nil || len(m.exemptions.addrs) == 0 {
		return false
	}
	peer, trusted := m.id.peer(r)
	addr, known := forwardedClient(r.Header, peer, trusted, m.id.isTrusted, m.id.useForwarded)
	return known && m.exemptions.byAddress(addr)
}

// exempted makes res the result of a request exempt by reason by: no
// identity, no cost, no checks, no decision, no penalty box, whatever the
// request res last held (a pooled Result keeps its fields) was.
func (m *Middleware) exempted(r *http.Request, res *Result, by string) *Result {
	res.Exempt, res.ExemptBy, res.Identity, res.Cost, res.Checks, res.plan = true, by, Identity{}, 0, res.Checks[:0], nil
	res.Penalized, res.statusRefused, res.Now = false, false, time.Time{}
	res.matched = res.matched[:0]
	res.Decision = sluice.Decision{Allowed: true, Statuses: res.Decision.Statuses[:0], Violated: res.Decision.Violated[:0]}
	if m.onExempt != nil && !res.peeking {
		m.onExempt(r, by)
	}
	return res
}

// exemptions checks ExemptAddresses, ExemptKeys and ExemptUsers.
func (v *validator) exemptions(o *Options) {
	for i, p := range o.ExemptAddresses {
		if !p.IsValid() {
			v.errorf(fmt.Sprintf("ExemptAddresses[%d]", i), "%v is not an IP address or CIDR prefix", p)
		}
	}
	names := map[string]bool{}
	for _, k := range o.Keys {
		names[k.Name] = true
	}
	for i, k := range o.ExemptKeys {
		if !names[k] || k == "" {
			v.errorf(fmt.Sprintf("ExemptKeys[%d]", i), "%q is not the name of a key", k)
		}
	}
	for i, u := range o.ExemptUsers {
		switch {
		case u == "" || len(u) > maxCredentialLen:
			v.errorf(fmt.Sprintf("ExemptUsers[%d]", i), "a user id is 1 to %d bytes", maxCredentialLen)
		case o.UserHeader == "":
			v.errorf(fmt.Sprintf("ExemptUsers[%d]", i), "no UserHeader (identity.user_header) to read users from")
		}
	}
	plans := planNames(o)
	for i, p := range o.ExemptPlans {
		if !slices.Contains(plans, p) {
			v.errorf(fmt.Sprintf("ExemptPlans[%d]", i), "%q is not a plan (%s)", p, strings.Join(plans, ", "))
		}
	}
}
