package jwt_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/jwt"
	"github.com/sluice-dev/sluice/memory"
)

// Claims "a": {"b": "nested"} and "a.b": "top": a claim whose own name has
// dots is read as it is first, by subject_claim and by rules keyed by
// claim:a.b alike (rules read the nested one: a user-editable attribute
// beside an issuer's dotted claim chose the count charged).
func TestADottedClaimOutranksANestedOneEverywhere(t *testing.T) {
	v := newVerifier(t, jwt.Options{Secret: secret, SubjectClaim: "a.b"})
	tok := sign(t, jose.HS256, secret, "", claims("a", map[string]any{"b": "nested"}, "a.b", "top"))
	got, err := v.VerifyToken(context.Background(), tok)
	if err != nil {
		t.Fatal(err)
	}
	if got.Subject != "top" {
		t.Fatalf("subject %q, want top", got.Subject)
	}
	if got.Claims["a.b"] != got.Subject {
		t.Errorf("claim:a.b = %q but subject_claim a.b = %q: rules keyed by claim:a.b read the nested claim, the subject the top-level one", got.Claims["a.b"], got.Subject)
	}
}

// "exp", "nbf" and "iat" must be numbers (ErrMalformed's doc): null is
// malformed, not an absent claim (a token meant to expire never did).
func TestANullTimeIsMalformed(t *testing.T) {
	v := newVerifier(t, jwt.Options{Keys: set(jwk(edKey(), "ed"))})
	for _, name := range []string{"exp", "nbf", "iat"} {
		c := claims()
		c[name] = nil
		got, err := v.VerifyToken(context.Background(), sign(t, jose.EdDSA, edKey(), "ed", c))
		if err == nil {
			t.Errorf("%q: null accepted (Expires %v)", name, got.Expires)
			continue
		}
		wantClass(t, err, jwt.ErrMalformed)
	}
}

// An issuer's Plan backs its tokens whose plan claim names no plan of the
// middleware, for a claim of groups and for a claim of one name alike
// (one name that is no plan fell to the default plan).
func TestTheIssuersPlanBacksAPlanClaimNamingNoPlan(t *testing.T) {
	v := newVerifier(t, jwt.Options{Secret: secret, PlanClaim: "plan", Plan: "internal", Clock: time.Now})
	store := memory.New()
	defer store.Close()
	mw, err := httplimit.New(sluice.NewLimiter(store), httplimit.Options{
		Plans: []*httplimit.Plan{
			{Name: "free", Limits: []sluice.Limit{sluice.PerMinute(1)}},
			{Name: "internal", Limits: []sluice.Limit{sluice.PerMinute(100)}},
		},
		DefaultPlan: "free",
		Tokens:      v,
	})
	if err != nil {
		t.Fatal(err)
	}
	api := mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	// The quota of the plan the client is on, as RateLimit-Policy tells it
	// (free: q=1, internal: q=100).
	policy := func(sub string, plan any) string {
		tok := sign(t, jose.HS256, secret, "", map[string]any{"sub": sub, "plan": plan, "exp": time.Now().Add(time.Hour).Unix()})
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Authorization", "Bearer "+tok)
		w := httptest.NewRecorder()
		api.ServeHTTP(w, r)
		return w.Header().Get("RateLimit-Policy")
	}
	groups := policy("carol", []any{"platinum"})
	single := policy("dave", "platinum")
	if !strings.Contains(groups, "q=100") {
		t.Fatalf("groups naming no plan: RateLimit-Policy %q, want the issuer's plan internal (q=100)", groups)
	}
	if !strings.Contains(single, "q=100") {
		t.Errorf("plan claim \"platinum\" (no such plan): RateLimit-Policy %q, the default plan free's; want the issuer's plan internal (q=100), as for [\"platinum\"] (%q)", single, groups)
	}
}

// A client is its issuer's subject prefix and its subject as text: beside
// an issuer of prefix "svc.", one of no prefix could sign "svc.alice", the
// other's "alice" (and "svc." beside "svc.prod."). NewIssuers refuses
// prefixes one of which begins another, and takes one prefix shared by
// all (issuers of the same people) or prefixes apart.
func TestIssuersWhosePrefixesOverlapAreRefused(t *testing.T) {
	verifier := func(iss, prefix string) *jwt.Verifier {
		return newVerifier(t, jwt.Options{Keys: set(jwk(edKey(), "k")), Issuer: iss, SubjectPrefix: prefix})
	}
	for _, c := range []struct {
		a, b string
		ok   bool
	}{{"", "svc.", false}, {"svc.", "svc.prod.", false}, {"svc.prod.", "svc.", false}, {"", "", true}, {"idp.", "svc.", true}, {"svc.", "svc.", true}} {
		_, err := jwt.NewIssuers(verifier("https://a.example/", c.a), verifier("https://b.example/", c.b))
		if (err == nil) != c.ok {
			t.Errorf("prefixes %q and %q: error %v, want accepted %v", c.a, c.b, err, c.ok)
		}
	}
}
