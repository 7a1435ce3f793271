package httplimit_test

import (
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// appendingProxy is a trusted proxy that appends its own value of the
// headers it sets (Envoy's request_headers_to_add with append, gRPC
// metadata appended) instead of replacing the client's.
const appendingProxy = "10.0.0.1:4000"

// trustedHeaderOptions limits each user, each plan's client and each
// tenant to one request a minute (the big plan to 100), exempts the user
// ops-bot, and trusts 10.0.0.0/8 to set X-User, X-Plan and X-Tenant.
func trustedHeaderOptions() httplimit.Options {
	one := []sluice.Limit{sluice.FixedWindow(1, time.Minute)}
	return httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: one},
			{Name: "big", Limits: []sluice.Limit{sluice.FixedWindow(100, time.Minute)}}},
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
		UserHeader:     "X-User",
		PlanHeader:     "X-Plan",
		ExemptUsers:    []string{"ops-bot"},
		Rules: []httplimit.Rule{{Name: "tenants", Key: []string{"header:X-Tenant"},
			Methods: []string{"POST"}, Fallback: httplimit.FallbackSkip, Limits: one}},
	}
}

// sent is a request from peer whose header name holds values, in the order
// they arrived: a client's own first, then the one a proxy appended.
func sent(method, peer string, name string, values ...string) req {
	return req{method: method, remote: peer, multi: map[string][]string{name: values}}
}

// onBigPlan is r with the plan big, whose limit no test here reaches, so
// that only the rule's limit refuses.
func onBigPlan(r req) req {
	r.multi["X-Plan"] = []string{"big"}
	return r
}

func TestAClientsOwnCopyOfAnAppendedTrustedHeaderIsNotBelieved(t *testing.T) {
	t.Run("user: the client does not spend another user's quota", func(t *testing.T) {
		mw, _ := clockedMiddleware(t, trustedHeaderOptions())
		got := statuses(mw,
			sent("GET", appendingProxy, "X-User", "alice"),            // alice spends her one request
			sent("GET", appendingProxy, "X-User", "alice", "mallory"), // mallory claims to be alice
			sent("GET", appendingProxy, "X-User", "mallory"))          // mallory's own request
		// The proxy's value, the last, is the user: mallory spent her own
		// request, not alice's.
		if want := []int{200, 200, 429}; !slices.Equal(got, want) {
			t.Fatalf("statuses %v, want %v", got, want)
		}
	})
	t.Run("user: the client does not make itself an exempt user", func(t *testing.T) {
		mw, _ := clockedMiddleware(t, trustedHeaderOptions())
		got := statuses(mw, repeat(sent("GET", appendingProxy, "X-User", "ops-bot", "mallory"), 2)...)
		if want := []int{200, 429}; !slices.Equal(got, want) {
			t.Fatalf("statuses %v, want %v: the client's ops-bot was believed", got, want)
		}
	})
	t.Run("plan: the client does not claim a plan", func(t *testing.T) {
		mw, _ := clockedMiddleware(t, trustedHeaderOptions())
		r := sent("GET", appendingProxy, "X-Plan", "big", "free").request()
		r.Header.Set("X-User", "mallory")
		res, err := mw.Decide(r)
		if err != nil {
			t.Fatal(err)
		}
		defer mw.Discard(res)
		if res.Identity.Plan.Name != "free" {
			t.Fatalf("plan %q, want free: the client's X-Plan was believed", res.Identity.Plan.Name)
		}
	})
	t.Run("rule header key: the client does not spend another tenant's quota", func(t *testing.T) {
		mw, _ := clockedMiddleware(t, trustedHeaderOptions())
		got := statuses(mw,
			onBigPlan(sent("POST", appendingProxy, "X-Tenant", "victim")),
			onBigPlan(sent("POST", appendingProxy, "X-Tenant", "victim", "acme")),
			onBigPlan(sent("POST", appendingProxy, "X-Tenant", "acme")))
		if want := []int{200, 200, 429}; !slices.Equal(got, want) {
			t.Fatalf("statuses %v, want %v", got, want)
		}
	})
	t.Run("rule user key: the client does not spend another user's quota", func(t *testing.T) {
		o := trustedHeaderOptions()
		o.Rules[0].Key = []string{httplimit.KeyUser}
		mw, _ := clockedMiddleware(t, o)
		got := statuses(mw,
			onBigPlan(sent("POST", appendingProxy, "X-User", "alice")),
			onBigPlan(sent("POST", appendingProxy, "X-User", "alice", "mallory")),
			onBigPlan(sent("POST", appendingProxy, "X-User", "mallory")))
		if want := []int{200, 200, 429}; !slices.Equal(got, want) {
			t.Fatalf("statuses %v, want %v", got, want)
		}
	})
	t.Run("from an untrusted peer no value is believed", func(t *testing.T) {
		mw, _ := clockedMiddleware(t, trustedHeaderOptions())
		res, err := mw.Decide(sent("GET", "192.0.2.9:1", "X-User", "alice", "mallory").request())
		if err != nil {
			t.Fatal(err)
		}
		defer mw.Discard(res)
		if res.Identity.Kind != httplimit.KindIP {
			t.Fatalf("identity %+v, want the peer's address", res.Identity)
		}
	})
}
