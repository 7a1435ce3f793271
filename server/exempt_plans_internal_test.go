package server

import (
	"slices"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// plansOf names the plans a client's requests can be decided on, or says
// a request can choose any: the decision API's "plan" for a caller (or
// loopback) holding check and override_plan, whatever the client; a
// trusted plan header for every client but a listed key (a user only when
// a user header or a token naming no plan can name it); a token's plan
// claim for its issuer's users. Without them a listed key is on its plan,
// a user on its issuers' plans (of those whose prefix its id has) and on
// the default plan when a believed user header, a decision API caller
// holding check or a token naming no plan can name it, an address group
// on the anonymous plan, an
// unlisted key and a decision API client on the default plan.
func TestPlansOfAClientAreThoseItsRequestsCanBeDecidedOn(t *testing.T) {
	const base = `
plans:
  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}
  internal: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}
  public: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}
default_plan: free
anonymous_plan: public
keys:
  - {name: batch, sha256: 9d8db2a67d146638c07fbb5652ad998062e2e2fa857eef026c40c444b07e3872, plan: internal}
`
	const (
		batch    = "key:9d8db2a67d146638c07fbb5652ad998062e2e2fa857eef026c40c444b07e3872"
		unlisted = "key:0000000000000000000000000000000000000000000000000000000000000000"
		hashed   = "user#0123456789abcdef0123456789abcdef"
	)
	admin := func(scopes string) string {
		return "admin:\n  loopback_scopes: []\n  callers:\n    - {name: app, token_sha256: " + strings.Repeat("ab", 32) + ", scopes: [" + scopes + "]}\n"
	}
	const planHeader = "identity:\n  trusted_proxies: [10.0.0.0/8]\n  plan_header: X-Plan\n"
	jwt := func(fields string) string {
		return "identity:\n  jwt: {jwks_url: https://idp.example.com/jwks, " + fields + "}\n"
	}
	for _, tc := range []struct {
		name, yaml, subject string
		want                []string // nil: any plan
	}{
		{"a listed key", admin("check"), batch, []string{"internal"}},
		{"a listed key, a caller overriding plans", admin("check, override_plan"), batch, nil},
		{"a listed key, loopback overriding plans", "admin:\n  loopback_scopes: [check, override_plan]\n", batch, nil},
		{"override_plan without check", admin("read, override_plan"), batch, []string{"internal"}},
		{"a listed key, a plan header", planHeader + admin("check"), batch, []string{"internal"}},
		{"a user", admin("check"), "user:alice", []string{"free"}},
		{"a user, a plan header without a user header", planHeader + admin("check"), "user:alice", []string{"free"}},
		{"a user, a plan header beside a user header", planHeader + "  user_header: X-User\n" + admin("check"), "user:alice", nil},
		{"a plan header without trusted proxies", "identity:\n  user_header: X-User\n  plan_header: X-Plan\n" + admin("check"), "user:alice", []string{"free"}},
		{"a user, a token's plan claim", jwt("plan_claim: plan") + admin("check"), "user:alice", nil},
		{"a user, an issuer's plan", jwt("plan: internal") + admin("check"), "user:alice", []string{"free", "internal"}},
		{"a user of an issuer's plan, nothing else naming users", jwt("plan: internal") + admin("read"), "user:alice", []string{"internal"}},
		{"a user of an issuer's plan, a user header no proxy is trusted for", "identity:\n  user_header: X-User\n  jwt: {jwks_url: https://idp.example.com/jwks, plan: internal}\n" + admin("read"), "user:alice", []string{"internal"}},
		{"a user of an issuer's plan, a believed user header", "identity:\n  trusted_proxies: [10.0.0.0/8]\n  user_header: X-User\n  jwt: {jwks_url: https://idp.example.com/jwks, plan: internal}\n" + admin("read"), "user:alice", []string{"free", "internal"}},
		{"a user of a token naming no plan", jwt("issuer: https://idp.example.com/") + admin("read"), "user:alice", []string{"free"}},
		{"a user outside an issuer's prefix", jwt("plan_claim: plan, subject_prefix: svc.") + admin("check"), "user:alice", []string{"free"}},
		{"a user inside an issuer's prefix", jwt("plan_claim: plan, subject_prefix: svc.") + admin("check"), "user:svc.alice", nil},
		{"a hashed user, an issuer's prefix", jwt("plan_claim: plan, subject_prefix: svc.") + admin("check"), hashed, nil},
		{"an address group", admin("check"), "ip:192.0.2.7", []string{"public"}},
		{"ip:unknown", admin("check"), "ip:unknown", []string{"public"}},
		{"an address group, a plan header", planHeader + admin("check"), "ip:192.0.2.7", nil},
		{"an unlisted key", planHeader + admin("check"), unlisted, []string{"free"}},
		{"an unlisted key of its own, a plan header", planHeader + "  unknown_keys: key\n" + admin("check"), unlisted, nil},
		{"a decision API client", planHeader + admin("check"), "ext:batch-7", []string{"free"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Parse("sluice.yaml", []byte(base+tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			plans, anyPlan := plansOf(cfg, tc.subject)
			if anyPlan != (tc.want == nil) || !slices.Equal(plans, tc.want) {
				t.Errorf("plansOf(%s) = %q, %v; want %q (nil: any plan)", tc.subject, plans, anyPlan, tc.want)
			}
		})
	}
}
