package jwt_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/sluice-dev/sluice/jwt"
)

// A user in many groups (Entra ID emits up to 200 in "groups", Okta and
// Keycloak as many as the user has) names its plan by one of them: the
// Verifier hands every name over (Options.PlanClaim: "of which the first
// that names a plan is the plan"), the 65th too, or the user would be
// limited on the default plan instead of its own.
func TestAPlanGroupPastTheSixtyFourthIsKept(t *testing.T) {
	groups := make([]any, 0, 65)
	for i := range 64 {
		groups = append(groups, fmt.Sprintf("team-%02d", i))
	}
	groups = append(groups, "pro") // the one group that is a plan
	v := newVerifier(t, jwt.Options{Secret: secret, PlanClaim: "groups"})
	c, err := v.VerifyToken(context.Background(), sign(t, jose.HS256, secret, "", claims("plan", nil, "groups", groups)))
	if err != nil {
		t.Fatal(err)
	}
	if c.Plan != "pro" && !slices.Contains(c.Plans, "pro") {
		t.Errorf("the token's groups list %q (its 65th); TokenClaims.Plan %q, Plans (%d names) lack it: the user is limited on the default plan, not pro", "pro", c.Plan, len(c.Plans))
	}
}

// A rule keyed by "claim:org_id" (docs/operations.md: a tenant's quota
// shared by its users) finds org_id in every verified token that carries
// it, however many other claims the token has: here 64 scalar claims whose
// names sort before "org_id", which would otherwise leave its requests to
// the rule's fallback (skip: no tenant quota at all).
func TestAKeyClaimIsKeptWhateverTheOtherClaims(t *testing.T) {
	kv := []any{"org_id", "acme"}
	for i := range 64 {
		kv = append(kv, fmt.Sprintf("attr_%02d", i), "x")
	}
	v := newVerifier(t, jwt.Options{Secret: secret})
	c, err := v.VerifyToken(context.Background(), sign(t, jose.HS256, secret, "", claims(kv...)))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Claims["org_id"]; got != "acme" {
		t.Errorf(`TokenClaims.Claims["org_id"] = %q, want "acme" (the token carries it; %d claims kept): a rule keyed by claim:org_id falls back for this tenant`, got, len(c.Claims))
	}
}
