package jwt_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/sluice-dev/sluice/jwt"
)

func TestAGoodTokenOfEachKeyTypeNamesItsClient(t *testing.T) {
	keys := set(jwk(rsaKey(), "rsa"), jwk(ecKey(), "ec"), jwk(edKey(), "ed"))
	for _, c := range []struct {
		name string
		o    jwt.Options
		alg  jose.SignatureAlgorithm
		key  any
		kid  string
	}{
		{"RS256", jwt.Options{Keys: keys}, jose.RS256, rsaKey(), "rsa"},
		{"PS384", jwt.Options{Keys: keys}, jose.PS384, rsaKey(), "rsa"},
		{"ES256", jwt.Options{Keys: keys}, jose.ES256, ecKey(), "ec"},
		{"EdDSA", jwt.Options{Keys: keys}, jose.EdDSA, edKey(), "ed"},
		{"RS256 without kid", jwt.Options{Keys: keys}, jose.RS256, rsaKey(), ""},
		{"HS256", jwt.Options{Secret: secret}, jose.HS256, secret, ""},
		{"HS256 with a kid", jwt.Options{Secret: secret}, jose.HS256, secret, "any"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.o.PlanClaim = "plan"
			v := newVerifier(t, c.o)
			got, err := v.VerifyToken(context.Background(), sign(t, c.alg, c.key, c.kid, claims()))
			if err != nil {
				t.Fatal(err)
			}
			// Expires: the claims' exp, plus the default leeway.
			if want := now.Add(time.Hour + time.Minute); got.Subject != "alice" || got.Plan != "pro" || !got.Expires.Equal(want) {
				t.Errorf("got %+v, want alice, pro, %v", got, want)
			}
		})
	}
}

func TestKeysCountsTheUsableKeys(t *testing.T) {
	if n := newVerifier(t, jwt.Options{Secret: secret}).Keys(); n != 1 {
		t.Errorf("Secret: Keys() = %d, want 1", n)
	}
	small := must(rsaKeyOfBits(1024))
	enc := jwk(rsaKey2(), "enc")
	enc.Use = "enc"
	oct := jose.JSONWebKey{Key: secret, KeyID: "oct"}
	private := jose.JSONWebKey{Key: ecKey(), KeyID: "private"} // its public part is used
	doc := `{"keys": [` + string(must(jwk(small, "small").MarshalJSON())) + `,` +
		string(must(enc.MarshalJSON())) + `,` +
		string(must(oct.MarshalJSON())) + `,` +
		string(must(private.MarshalJSON())) + `,` +
		`{"kty": "EC", "crv": "P-999", "x": "AA", "y": "AA"},` +
		`{"kty": "OKP", "crv": "X25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"},` +
		`{"kty": "unknown"},` +
		string(must(jwk(edKey(), "ed").MarshalJSON())) + `]}`
	v := newVerifier(t, jwt.Options{Keys: []byte(doc)})
	if n := v.Keys(); n != 2 {
		t.Errorf("Keys() = %d, want 2 (the private EC key's public part and the Ed25519 key)", n)
	}
	verify(t, v, sign(t, jose.ES256, ecKey(), "private", claims()))
	verify(t, v, sign(t, jose.EdDSA, edKey(), "ed", claims()))
	_, err := v.VerifyToken(context.Background(), sign(t, jose.RS256, small, "small", claims()))
	wantClass(t, err, jwt.ErrKey)
	_, err = v.VerifyToken(context.Background(), sign(t, jose.RS256, rsaKey2(), "enc", claims()))
	wantClass(t, err, jwt.ErrKey)
}

func TestATokenWithAKidIsVerifiedOnlyWithThatKidsKeys(t *testing.T) {
	v := newVerifier(t, jwt.Options{Keys: set(jwk(rsaKey(), "a"), jwk(rsaKey2(), "b"))})
	_, err := v.VerifyToken(context.Background(), sign(t, jose.RS256, rsaKey(), "b", claims()))
	wantClass(t, err, jwt.ErrSignature)
	_, err = v.VerifyToken(context.Background(), sign(t, jose.RS256, rsaKey(), "c", claims()))
	wantClass(t, err, jwt.ErrKey)
	verify(t, v, sign(t, jose.RS256, rsaKey2(), "b", claims()))
	verify(t, v, sign(t, jose.RS256, rsaKey2(), "", claims())) // each key is tried
}

func TestAKeyWithAnAlgVerifiesOnlyThatAlg(t *testing.T) {
	k := jwk(rsaKey(), "k")
	k.Algorithm = string(jose.PS256)
	v := newVerifier(t, jwt.Options{Keys: set(k)})
	verify(t, v, sign(t, jose.PS256, rsaKey(), "k", claims()))
	_, err := v.VerifyToken(context.Background(), sign(t, jose.RS256, rsaKey(), "k", claims()))
	wantClass(t, err, jwt.ErrKey)
}

func TestExpiryAndNotBeforeAllowTheLeeway(t *testing.T) {
	keys := set(jwk(edKey(), "ed"))
	for _, c := range []struct {
		name   string
		leeway time.Duration
		claims map[string]any
		ok     bool
	}{
		{"expired within the default leeway", 0, claims("exp", now.Add(-50*time.Second).Unix()), true},
		{"expired beyond the default leeway", 0, claims("exp", now.Add(-70*time.Second).Unix()), false},
		{"expired within the leeway", 10 * time.Second, claims("exp", now.Add(-5*time.Second).Unix()), true},
		{"expired beyond the leeway", 10 * time.Second, claims("exp", now.Add(-20*time.Second).Unix()), false},
		{"nbf within the leeway", 0, claims("nbf", now.Add(50*time.Second).Unix()), true},
		{"nbf in the future", 0, claims("nbf", now.Add(2*time.Minute).Unix()), false},
		{"iat in the future", 0, claims("iat", now.Add(2*time.Minute).Unix()), false},
		{"nbf past, exp to come", 0, claims("nbf", now.Add(-time.Hour).Unix(), "iat", now.Unix()), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := newVerifier(t, jwt.Options{Keys: keys, Leeway: c.leeway})
			_, err := v.VerifyToken(context.Background(), sign(t, jose.EdDSA, edKey(), "ed", c.claims))
			if c.ok && err != nil {
				t.Fatal(err)
			}
			if !c.ok {
				wantClass(t, err, jwt.ErrExpired)
			}
		})
	}
}

func TestATokenWithoutExpDoesNotExpire(t *testing.T) {
	v := newVerifier(t, jwt.Options{Keys: set(jwk(edKey(), "ed"))})
	got, err := v.VerifyToken(context.Background(), sign(t, jose.EdDSA, edKey(), "ed", claims("exp", nil)))
	if err != nil {
		t.Fatal(err)
	}
	if !got.Expires.IsZero() {
		t.Errorf("Expires = %v, want zero", got.Expires)
	}
}

func TestIssuerAndAudienceMustBeAsRequired(t *testing.T) {
	o := jwt.Options{Keys: set(jwk(edKey(), "ed")), Issuer: "https://id.example", Audiences: []string{"api", "admin"}}
	good := claims("iss", "https://id.example", "aud", "api")
	for _, c := range []struct {
		name   string
		claims map[string]any
		ok     bool
	}{
		{"as required", good, true},
		{"aud an array naming one", claims("iss", "https://id.example", "aud", []string{"other", "admin"}), true},
		{"wrong iss", claims("iss", "https://evil.example", "aud", "api"), false},
		{"no iss", claims("aud", "api"), false},
		{"iss not a string", claims("iss", 1, "aud", "api"), false},
		{"no aud", claims("iss", "https://id.example"), false},
		{"wrong aud", claims("iss", "https://id.example", "aud", "web"), false},
		{"aud an array naming none", claims("iss", "https://id.example", "aud", []string{"web", "apis"}), false},
		{"aud not a string", claims("iss", "https://id.example", "aud", 7), false},
		{"aud an array of a number", claims("iss", "https://id.example", "aud", []any{"api", 7}), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := newVerifier(t, o)
			_, err := v.VerifyToken(context.Background(), sign(t, jose.EdDSA, edKey(), "ed", c.claims))
			if c.ok && err != nil {
				t.Fatal(err)
			}
			if !c.ok {
				wantClass(t, err, jwt.ErrClaims)
			}
		})
	}
}

func TestTheSubjectClaimMustBeANonEmptyString(t *testing.T) {
	keys := set(jwk(edKey(), "ed"))
	for _, c := range []struct {
		name    string
		o       jwt.Options
		claims  map[string]any
		subject string // "": refused
		plan    string
	}{
		{"sub", jwt.Options{}, claims(), "alice", ""},
		{"no sub", jwt.Options{}, claims("sub", nil), "", ""},
		{"empty sub", jwt.Options{}, claims("sub", ""), "", ""},
		{"sub a number", jwt.Options{}, claims("sub", 42), "", ""},
		{"sub an object", jwt.Options{}, claims("sub", map[string]any{"id": "alice"}), "", ""},
		{"SubjectClaim", jwt.Options{SubjectClaim: "uid"}, claims("uid", "bob"), "bob", ""},
		{"SubjectClaim missing", jwt.Options{SubjectClaim: "uid"}, claims(), "", ""},
		{"SubjectPrefix", jwt.Options{SubjectPrefix: "svc."}, claims(), "svc.alice", ""},
		{"SubjectPrefix of SubjectClaim", jwt.Options{SubjectClaim: "uid", SubjectPrefix: strings.Repeat("p", 64)}, claims("uid", "bob"), strings.Repeat("p", 64) + "bob", ""},
		{"SubjectPrefix, sub missing", jwt.Options{SubjectPrefix: "svc."}, claims("sub", nil), "", ""},
		{"PlanClaim", jwt.Options{PlanClaim: "tier"}, claims("tier", "gold"), "alice", "gold"},
		{"PlanClaim missing", jwt.Options{PlanClaim: "tier"}, claims(), "alice", ""},
		{"PlanClaim not a string", jwt.Options{PlanClaim: "tier"}, claims("tier", 3), "alice", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.o.Keys = keys
			v := newVerifier(t, c.o)
			got, err := v.VerifyToken(context.Background(), sign(t, jose.EdDSA, edKey(), "ed", c.claims))
			if c.subject == "" {
				wantClass(t, err, jwt.ErrClaims)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Subject != c.subject || got.Plan != c.plan {
				t.Errorf("got %q on %q, want %q on %q", got.Subject, got.Plan, c.subject, c.plan)
			}
		})
	}
}

// A plan claim that is an array (groups, roles) gives its strings, in
// order, as TokenClaims.Plans, then the issuer's fixed plan; a string gives
// Plan; anything else names no plan.
func TestAPlanClaimMayListGroups(t *testing.T) {
	keys := set(jwk(edKey(), "ed"))
	long := strings.Repeat("g", 257)
	for _, c := range []struct {
		name  string
		o     jwt.Options
		value any
		plan  string
		plans []string
	}{
		{"groups", jwt.Options{}, []any{"admins", "pro"}, "", []string{"admins", "pro"}},
		{"groups and a fixed plan", jwt.Options{Plan: "free"}, []any{"admins", "pro"}, "", []string{"admins", "pro", "free"}},
		{"others skipped", jwt.Options{}, []any{3, "", long, "pro", map[string]any{"x": "y"}}, "", []string{"pro"}},
		{"empty: the fixed plan", jwt.Options{Plan: "free"}, []any{}, "free", nil},
		{"a string: the fixed plan if it is none", jwt.Options{Plan: "free"}, "pro", "pro", []string{"free"}},
		{"an object", jwt.Options{}, map[string]any{"plan": "pro"}, "", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.o.Keys, c.o.PlanClaim = keys, "cognito:groups"
			v := newVerifier(t, c.o)
			got, err := v.VerifyToken(context.Background(), sign(t, jose.EdDSA, edKey(), "ed", claims("cognito:groups", c.value)))
			if err != nil {
				t.Fatal(err)
			}
			if got.Plan != c.plan || !slices.Equal(got.Plans, c.plans) {
				t.Errorf("plan %q, plans %q; want %q, %q", got.Plan, got.Plans, c.plan, c.plans)
			}
		})
	}
	many := make([]any, 100)
	for i := range many {
		many[i] = fmt.Sprint("g", i)
	}
	v := newVerifier(t, jwt.Options{Keys: keys, PlanClaim: "groups"})
	got, err := v.VerifyToken(context.Background(), sign(t, jose.EdDSA, edKey(), "ed", claims("groups", many)))
	if err != nil || len(got.Plans) != 100 || got.Plans[99] != "g99" {
		t.Errorf("100 groups: %d plans (%v), want every group the token names", len(got.Plans), err)
	}
}

// The subject and plan claims may be nested ("realm_access.roles"); a
// top-level claim whose name has dots is read as it is first.
func TestNestedSubjectAndPlanClaims(t *testing.T) {
	keys := set(jwk(edKey(), "ed"))
	v := newVerifier(t, jwt.Options{Keys: keys, SubjectClaim: "user.id", PlanClaim: "realm_access.roles"})
	got, err := v.VerifyToken(context.Background(), sign(t, jose.EdDSA, edKey(), "ed", claims(
		"user", map[string]any{"id": "u-7"}, "realm_access", map[string]any{"roles": []any{"offline", "pro"}})))
	if err != nil || got.Subject != "u-7" || !slices.Equal(got.Plans, []string{"offline", "pro"}) {
		t.Fatalf("nested: %q %q (%v)", got.Subject, got.Plans, err)
	}
	v = newVerifier(t, jwt.Options{Keys: keys, PlanClaim: "https://example.com/plan"})
	got, err = v.VerifyToken(context.Background(), sign(t, jose.EdDSA, edKey(), "ed", claims("https://example.com/plan", "pro")))
	if err != nil || got.Plan != "pro" {
		t.Fatalf("a namespaced claim: %q (%v)", got.Plan, err)
	}
	v = newVerifier(t, jwt.Options{Keys: keys, SubjectClaim: "a.b.c.d.e"})
	_, err = v.VerifyToken(context.Background(), sign(t, jose.EdDSA, edKey(), "ed", claims(
		"a", map[string]any{"b": map[string]any{"c": map[string]any{"d": map[string]any{"e": "x"}}}})))
	wantClass(t, err, jwt.ErrClaims) // five deep: not read
}

func TestClaimsThatAreNotTheirJSONAreMalformed(t *testing.T) {
	v := newVerifier(t, jwt.Options{Keys: set(jwk(edKey(), "ed"))})
	for _, c := range []map[string]any{
		claims("exp", "tomorrow"),
		claims("nbf", true),
		claims("exp", 1e300),
	} {
		_, err := v.VerifyToken(context.Background(), sign(t, jose.EdDSA, edKey(), "ed", c))
		wantClass(t, err, jwt.ErrMalformed)
	}
}

func TestErrorsSayWhatIsWrong(t *testing.T) {
	v := newVerifier(t, jwt.Options{Keys: set(jwk(edKey(), "ed")), SubjectClaim: "uid"})
	_, err := v.VerifyToken(context.Background(), sign(t, jose.EdDSA, edKey(), "ed", claims()))
	if err == nil || !strings.Contains(err.Error(), `"uid"`) {
		t.Errorf("error %v does not name the subject claim", err)
	}
}

// A token's claims of text, whole numbers and booleans are there for rules
// to key by, those of nested objects by their dotted path (at most four
// deep); others (fractions, arrays, long values) are not.
func TestClaimsRulesMayKeyBy(t *testing.T) {
	v := newVerifier(t, jwt.Options{Secret: secret, Clock: clockAt(now)})
	token := sign(t, jose.HS256, secret, "", claims("org_id", "acme", "tier", 3, "beta", true, "ratio", 0.5,
		"roles", []string{"a"}, "addr", map[string]any{"c": "x", "d": map[string]any{"e": 7, "f": []int{1}}},
		"deep", map[string]any{"a": map[string]any{"b": map[string]any{"c": map[string]any{"d": "too deep"}, "x": "ok"}}},
		"long", strings.Repeat("x", 257), "empty", ""))
	got, err := v.VerifyToken(context.Background(), token)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"sub": "alice", "plan": "pro", "exp": fmt.Sprint(now.Add(time.Hour).Unix()),
		"org_id": "acme", "tier": "3", "beta": "true", "addr.c": "x", "addr.d.e": "7", "deep.a.b.x": "ok"}
	if !maps.Equal(got.Claims, want) {
		t.Errorf("claims %v, want %v", got.Claims, want)
	}
}

func TestAKeyWhoseKeyOpsLeaveOutVerifyIsNotUsed(t *testing.T) {
	withOps := func(key any, kid string, ops ...string) string {
		var m map[string]any
		if err := json.Unmarshal(must(jwk(key, kid).MarshalJSON()), &m); err != nil {
			t.Fatal(err)
		}
		m["key_ops"] = ops
		return string(must(json.Marshal(m)))
	}
	doc := `{"keys": [` + withOps(rsaKey(), "wrap", "encrypt", "wrapKey") + `,` +
		withOps(ecKey(), "verify", "verify") + `,` +
		`{"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", "key_ops": "verify"}` + `]}`
	v := newVerifier(t, jwt.Options{Keys: []byte(doc)})
	if n := v.Keys(); n != 1 {
		t.Errorf("Keys() = %d, want 1 (the key whose key_ops name verify)", n)
	}
	verify(t, v, sign(t, jose.ES256, ecKey(), "verify", claims()))
	_, err := v.VerifyToken(context.Background(), sign(t, jose.RS256, rsaKey(), "wrap", claims()))
	wantClass(t, err, jwt.ErrKey)
	if _, err := jwt.New(jwt.Options{Keys: []byte(`{"keys": [` + withOps(rsaKey(), "wrap", "encrypt") + `]}`)}); err == nil {
		t.Error("a set whose only key is for encryption was accepted")
	}
}

// A token without "kid" is tried with every key that fits its "alg" only
// while the set holds at most 4 of them: a stranger's kid-less tokens
// cost at most 4 verifications each, however many keys the issuer
// publishes.
func TestATokenWithoutAKidIsTriedWithAFewKeysAtMost(t *testing.T) {
	var private []ed25519.PrivateKey
	var public []jose.JSONWebKey
	for range 5 {
		_, k, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		private, public = append(private, k), append(public, jwk(k, ""))
	}
	four := newVerifier(t, jwt.Options{Keys: set(public[:4]...)})
	for i := range 4 {
		verify(t, four, sign(t, jose.EdDSA, private[i], "", claims()))
	}
	// The set's RSA key does not fit EdDSA: four keys still fit.
	mixed := newVerifier(t, jwt.Options{Keys: set(append([]jose.JSONWebKey{jwk(rsaKey(), "")}, public[:4]...)...)})
	verify(t, mixed, sign(t, jose.EdDSA, private[3], "", claims()))

	five := newVerifier(t, jwt.Options{Keys: set(public...)})
	for i := range 5 {
		_, err := five.VerifyToken(context.Background(), sign(t, jose.EdDSA, private[i], "", claims()))
		wantClass(t, err, jwt.ErrKey)
		if err == nil || !strings.Contains(err.Error(), "no kid") {
			t.Errorf("key %d: error %v does not say the token names no kid", i, err)
		}
	}
	// With a kid, a token of the same set verifies.
	public[4].KeyID = "e"
	named := newVerifier(t, jwt.Options{Keys: set(public...)})
	verify(t, named, sign(t, jose.EdDSA, private[4], "e", claims()))
}
