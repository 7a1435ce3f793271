package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
)

const jwtPlans = "plans:\n  free:\n    limits: [{name: per-minute, algorithm: gcra, quantity: 10, window: 1m}]\n"

func TestJWTSectionLoads(t *testing.T) {
	dir := t.TempDir()
	set := `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo","kid":"k1"}]}`
	os.WriteFile(filepath.Join(dir, "jwks.json"), []byte(set), 0o600)
	os.WriteFile(filepath.Join(dir, "secret"), []byte(strings.Repeat("s", 32)+"\n"), 0o600)
	file := filepath.Join(dir, "sluice.yaml")
	os.WriteFile(file, []byte(`identity:
  jwt:
    jwks_file: jwks.json
    issuer: https://auth.example.com/
    audiences: [api, admin]
    subject_claim: org_id
    subject_prefix: idp.
    plan_claim: tier
    algorithms: [EdDSA]
    leeway: 30s
`+jwtPlans), 0o644)
	c, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Identity.JWT) != 1 {
		t.Fatalf("identity.jwt: %d issuers, want 1", len(c.Identity.JWT))
	}
	j := c.Identity.JWT[0]
	if string(j.Keys) != set || j.Issuer != "https://auth.example.com/" || len(j.Audiences) != 2 ||
		j.SubjectClaim != "org_id" || j.PlanClaim != "tier" || j.Leeway != 30*time.Second {
		t.Fatalf("identity.jwt: %+v", j)
	}
	if o := j.Options(); string(o.Keys) != set || o.KeysURL != "" || o.Algorithms[0] != "EdDSA" || o.SubjectPrefix != "idp." {
		t.Fatalf("options: %+v", o)
	}
	os.WriteFile(file, []byte("identity:\n  jwt: {secret_file: secret}\n"+jwtPlans), 0o644)
	if c, err = config.Load(file); err != nil || string(c.Identity.JWT[0].Secret) != strings.Repeat("s", 32) {
		t.Fatalf("secret_file: %v %+v", err, c)
	}
}

// The jwt block examples/sluice.yaml shows, commented out, loads.
func TestExampleJWTBlockLoads(t *testing.T) {
	text, err := os.ReadFile("../examples/sluice.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	on := false
	for _, line := range strings.Split(string(text), "\n") {
		if strings.HasPrefix(line, "  # jwt:") {
			on = true
		} else if on && !strings.HasPrefix(line, "  #   ") {
			on = false
		}
		if on {
			line = "  " + strings.TrimPrefix(line, "  # ")
		}
		out = append(out, line)
	}
	c, err := config.Parse("sluice.yaml", []byte(strings.Join(out, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Identity.JWT) != 1 {
		t.Fatalf("the example's jwt block: %d issuers", len(c.Identity.JWT))
	}
	if j := c.Identity.JWT[0]; j.JWKSURL != "https://auth.example.com/.well-known/jwks.json" || j.PlanClaim != "plan" {
		t.Fatalf("the example's jwt block: %+v", j)
	}
}

func TestJWTSectionErrorsNameTheirPlace(t *testing.T) {
	for _, c := range []struct{ name, yaml, want string }{
		{"no keys", "identity:\n  jwt: {issuer: x}\n", "bad.yaml:2:8: identity.jwt: name exactly one of jwks_url, discover, jwks_file and secret_file"},
		{"two sources", "identity:\n  jwt: {jwks_url: \"https://a.example/k\", secret_file: /dev/null}\n", "identity.jwt"},
		{"plain http", "identity:\n  jwt: {jwks_url: \"http://auth.example.com/k\"}\n", "bad.yaml:2:19: identity.jwt.jwks_url: "},
		{"none", "identity:\n  jwt: {jwks_url: \"https://a.example/k\", algorithms: [none]}\n", "bad.yaml:2:54: identity.jwt.algorithms: "},
		{"HS with keys", "identity:\n  jwt: {jwks_url: \"https://a.example/k\", algorithms: [HS256]}\n", "bad.yaml:2:54: identity.jwt.algorithms: "},
		{"unknown field", "identity:\n  jwt: {jwks_url: \"https://a.example/k\", claims: [x]}\n", "identity.jwt.claims: unknown field"},
		{"ca_file without jwks_url", "identity:\n  jwt: {secret_file: /dev/null, ca_file: /dev/null}\n", "identity.jwt.ca_file: only for a jwks_url"},
		{"ca_file not PEM", "identity:\n  jwt: {jwks_url: \"https://a.example/k\", ca_file: jwt_test.go}\n", "identity.jwt.ca_file: "},
		{"discover without an issuer", "identity:\n  jwt: {discover: true}\n", "bad.yaml:2:19: identity.jwt.discover: needs issuer"},
		{"discover and a jwks_url", "identity:\n  jwt: {discover: true, issuer: \"https://a.example/\", jwks_url: \"https://a.example/k\"}\n", "name exactly one of"},
		{"leeway too long", "identity:\n  jwt: {jwks_url: \"https://a.example/k\", leeway: 1h}\n", "identity.jwt.leeway: 1h0m0s is more than clocks disagree by: at most 10m0s"},
		{"refresh too often", "identity:\n  jwt: {jwks_url: \"https://a.example/k\", refresh: 5s}\n", "bad.yaml:2:51: identity.jwt.refresh: 5s is too often: at least 1m0s"},
		{"missing file", "identity:\n  jwt: {jwks_file: /nonexistent/jwks.json}\n", "identity.jwt.jwks_file: "},
		{"subject_prefix with a space", "identity:\n  jwt: {jwks_url: \"https://a.example/k\", subject_prefix: \"a b\"}\n", "bad.yaml:2:58: identity.jwt.subject_prefix: \"a b\": at most 64 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := config.Parse("bad.yaml", []byte(c.yaml+jwtPlans))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error:\n%v\nwant it to contain:\n%s", err, c.want)
			}
		})
	}
}

// Rules may key by a token's claims, and by its user, only where tokens
// identify clients; the error names the key.
func TestRulesKeyedByTokens(t *testing.T) {
	rule := func(key string) string {
		return "rules:\n  - name: tenant\n    key: [\"" + key + "\"]\n    limits: [{name: m, algorithm: gcra, quantity: 5, window: 1m}]\n"
	}
	_, err := config.Parse("bad.yaml", []byte(jwtPlans+rule("claim:org_id")))
	if want := `bad.yaml:6:11: rules[0].key[0]: "claim:org_id" needs Options.Tokens (identity.jwt)`; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("a claim key without identity.jwt: %v, want %s", err, want)
	}
	jwt := "identity:\n  jwt: {jwks_url: \"https://id.example/keys\"}\n"
	for _, key := range []string{"claim:org_id", "user"} {
		c, err := config.Parse("ok.yaml", []byte(jwt+jwtPlans+rule(key)))
		if err != nil {
			t.Fatalf("key %s with identity.jwt: %v", key, err)
		}
		if o := c.HTTPLimitOptions(); o.Tokens == nil {
			t.Fatal("HTTPLimitOptions of identity.jwt has no Tokens")
		} else if _, err := o.Tokens.VerifyToken(t.Context(), "a.b.c"); err == nil {
			t.Fatal("the stand-in for identity.jwt's verifier vouched for a token")
		}
	}
}

// Several issuers: each its own keys and issuer, a plan for the tokens
// that name none; the errors name their place.
func TestJWTIssuers(t *testing.T) {
	c, err := config.Parse("ok.yaml", []byte(`identity:
  jwt:
    - name: users
      jwks_url: "https://auth.example.com/keys"
      issuer: https://auth.example.com/
      plan_claim: plan
    - name: services
      jwks_url: "https://cluster.example/openid/v1/jwks"
      issuer: https://kubernetes.default.svc
      plan: internal
plans:
  free:
    limits: [{name: per-minute, algorithm: gcra, quantity: 10, window: 1m}]
  internal:
    limits: [{name: per-minute, algorithm: gcra, quantity: 1000, window: 1m}]
`))
	if err != nil {
		t.Fatal(err)
	}
	if js := c.Identity.JWT; len(js) != 2 || js[0].Name != "users" || js[1].Plan != "internal" || js[1].Options().Plan != "internal" || js[1].Issuer != "https://kubernetes.default.svc" {
		t.Fatalf("issuers: %+v", js)
	}
	for _, c := range []struct{ name, yaml, want string }{
		{"no issuer of one of two", "identity:\n  jwt:\n    - {jwks_url: \"https://a.example/k\", issuer: a}\n    - {jwks_url: \"https://b.example/k\"}\n",
			"bad.yaml:4:7: identity.jwt[1]: each of several issuers needs its issuer"},
		{"one issuer twice", "identity:\n  jwt:\n    - {jwks_url: \"https://a.example/k\", issuer: a}\n    - {jwks_url: \"https://b.example/k\", issuer: a}\n",
			"identity.jwt[1].issuer: \"a\" is already the issuer of another entry"},
		{"an unknown plan", "identity:\n  jwt: {jwks_url: \"https://a.example/k\", plan: gold}\n", "bad.yaml:2:48: identity.jwt.plan: \"gold\" is not a plan"},
		{"an empty list", "identity:\n  jwt: []\n", "identity.jwt: an empty list"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := config.Parse("bad.yaml", []byte(c.yaml+jwtPlans))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error:\n%v\nwant it to contain:\n%s", err, c.want)
			}
		})
	}
}

func TestTokenHeaders(t *testing.T) {
	c, err := config.Parse("ok.yaml", []byte("identity:\n  token_headers: [x-forwarded-access-token, Authorization]\n  jwt: {jwks_url: \"https://a.example/k\"}\n"+jwtPlans))
	if err != nil {
		t.Fatal(err)
	}
	if o := c.HTTPLimitOptions(); len(o.TokenHeaders) != 2 || o.TokenHeaders[0] != "X-Forwarded-Access-Token" {
		t.Fatalf("token headers: %v", o.TokenHeaders)
	}
	_, err = config.Parse("bad.yaml", []byte("identity:\n  token_headers: [\"X Token\"]\n  jwt: {jwks_url: \"https://a.example/k\"}\n"+jwtPlans))
	if want := `bad.yaml:2:19: identity.token_headers[0]: "X Token" is not a valid header name`; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("an invalid token header: %v, want %s", err, want)
	}
	_, err = config.Parse("bad.yaml", []byte("identity:\n  token_headers: [X-Token]\n"+jwtPlans))
	if want := `bad.yaml:2:18: identity.token_headers: tokens are read only to be verified: set identity.jwt too`; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("token headers without identity.jwt: %v, want %s", err, want)
	}
}

// What the verifier's options refuse is told at the YAML key it was read
// from, in the file's words: jwks_url, not jwt.Options' KeysURL, and at
// that key's line rather than at the issuer's mapping.
func TestJWTOptionsErrorsAreAtTheirKey(t *testing.T) {
	dir := t.TempDir()
	short := filepath.Join(dir, "short.secret")
	os.WriteFile(short, []byte("ab\n"), 0o600)
	secret := filepath.Join(dir, "32.secret")
	os.WriteFile(secret, []byte(strings.Repeat("s", 32)), 0o600)
	notASet := filepath.Join(dir, "jwks.json")
	os.WriteFile(notASet, []byte("[]"), 0o600)
	for _, c := range []struct{ name, jwt, want string }{
		{"a jwks_url that does not parse", "    jwks_url: \"http://[::1\"\n",
			`bad.yaml:3:15: identity.jwt.jwks_url: "http://[::1" is not a URL: missing ']' in host`},
		{"a jwks_url over plain http", "    jwks_url: \"http://auth.example.com/k\"\n",
			`bad.yaml:3:15: identity.jwt.jwks_url: "http://auth.example.com/k": http:// only to a loopback host`},
		{"a secret_file too short", "    secret_file: " + short + "\n",
			`bad.yaml:3:18: identity.jwt.secret_file: 2 bytes, at least 32 are needed`},
		{"a jwks_file that is no JWK Set", "    jwks_file: " + notASet + "\n",
			`bad.yaml:3:16: identity.jwt.jwks_file: not a JWK Set`},
		{"an algorithm of no signature", "    jwks_url: \"https://a.example/k\"\n    algorithms: [none]\n",
			`bad.yaml:4:17: identity.jwt.algorithms: "none" is never accepted`},
		{"an HMAC algorithm with a jwks_url", "    jwks_url: \"https://a.example/k\"\n    algorithms: [RS256, HS256]\n",
			`bad.yaml:4:17: identity.jwt.algorithms: HS256 cannot be accepted with jwks_url or jwks_file: HMAC and public-key algorithms are never mixed`},
		{"an algorithm the secret is too short for", "    secret_file: " + secret + "\n    algorithms: [HS512]\n",
			`bad.yaml:4:17: identity.jwt.algorithms: HS512 needs a secret_file of at least 64 bytes (RFC 7518 section 3.2), not 32`},
		{"discover without an issuer", "    discover: true\n",
			`bad.yaml:3:15: identity.jwt.discover: needs issuer, whose discovery document names the keys`},
		{"discover with an issuer that is no URL", "    discover: true\n    issuer: auth\n",
			`bad.yaml:4:13: identity.jwt.issuer: with discover: `},
		{"a subject_prefix with a space", "    jwks_url: \"https://a.example/k\"\n    subject_prefix: \"a b\"\n",
			`bad.yaml:4:21: identity.jwt.subject_prefix: "a b": at most 64 bytes`},
		{"an empty audience", "    jwks_url: \"https://a.example/k\"\n    audiences: [api, \"\"]\n",
			`bad.yaml:4:22: identity.jwt.audiences[1]: is empty`},
		{"one of several issuers", "    - {name: a, issuer: \"https://a.example/\", jwks_url: \"https://a.example/k\"}\n" +
			"    - {name: b, issuer: \"https://b.example/\", jwks_url: \"ftp://b.example/k\"}\n",
			`bad.yaml:4:57: identity.jwt[1].jwks_url: "ftp://b.example/k" is not an https:// URL`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := config.Parse("bad.yaml", []byte("identity:\n  jwt:\n"+c.jwt+jwtPlans))
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("error:\n%v\nwant it to start:\n%s", err, c.want)
			}
		})
	}
}
