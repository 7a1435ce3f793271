package server_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/sluice-dev/sluice/internal/jwttest"
	"github.com/sluice-dev/sluice/server"
)

// idp is an identity provider: a key that signs tokens and the JWK Set,
// served over HTTP, that publishes it.
type idp struct {
	key     *ecdsa.PrivateKey
	kid     string
	srv     *httptest.Server
	fetches atomic.Int64
}

func newIDP(t *testing.T, kid string) *idp {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p := &idp{key: key, kid: kid}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.fetches.Add(1)
		set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &p.key.PublicKey, KeyID: p.kid, Algorithm: "ES256", Use: "sig"}}}
		json.NewEncoder(w).Encode(set)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

// sign returns a token of claims signed by key under kid.
func sign(t *testing.T, key *ecdsa.PrivateKey, kid string, claims map[string]any) string {
	return jwttest.Sign(t, jose.ES256, key, kid, claims)
}

// jwtConfig is testConfig with tokens of p's issuer verified, the plan in
// the "plan" claim.
func jwtConfig(p *idp) string {
	return strings.Replace(testConfig, "identity:\n", `identity:
  jwt:
    jwks_url: `+p.srv.URL+`
    issuer: https://idp.example.com/
    audiences: [api]
    plan_claim: plan
`, 1)
}

// Through the reverse proxy, a token the identity provider signed is its
// user on its plan; a token signed by anyone else, or expired, leaves the
// client limited by address; and /metrics counts both.
func TestJWTClientsThroughTheProxy(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		p := newIDP(t, "k1")
		f := newFixture(t, jwtConfig(p), kind)
		exp := noon.Add(time.Hour).Unix()
		claims := func(sub, plan string) map[string]any {
			return map[string]any{"iss": "https://idp.example.com/", "aud": "api", "sub": sub, "plan": plan, "exp": exp}
		}
		alice := sign(t, p.key, "k1", claims("alice", "pro"))
		bob := sign(t, p.key, "k1", claims("bob", "free"))
		bearer := func(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }

		// alice is on pro (100 a minute): the free plan's 3 do not stop her.
		for i := range 5 {
			r := f.do(t, "GET", "/a", "", bearer(alice))
			if r.StatusCode != 200 || !strings.Contains(r.Header.Get("RateLimit-Policy"), "q=100") {
				t.Fatalf("alice's request %d: %d, policy %q", i, r.StatusCode, r.Header.Get("RateLimit-Policy"))
			}
		}
		// bob, on free, has 3 of his own, apart from alice's.
		for i := range 3 {
			if r := f.do(t, "GET", "/a", "", bearer(bob)); r.StatusCode != 200 {
				t.Fatalf("bob's request %d: %d", i, r.StatusCode)
			}
		}
		if r := f.do(t, "GET", "/a", "", bearer(bob)); r.StatusCode != 429 {
			t.Fatalf("bob's fourth request: %d, want 429", r.StatusCode)
		}

		// Tokens of a key the provider never published, naming alice on
		// pro: the client is its address (free: 3 a minute), whoever it
		// claims to be, and every forged token shares those 3.
		other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		codes := []int{}
		for i := range 4 {
			forged := sign(t, other, "k1", map[string]any{"iss": "https://idp.example.com/", "aud": "api", "sub": "alice", "plan": "pro", "exp": exp + int64(i)})
			codes = append(codes, f.do(t, "GET", "/a", "", bearer(forged)).StatusCode)
		}
		if codes[0] != 200 || codes[3] != 429 {
			t.Fatalf("forged tokens: %v, want the address's 3 then 429", codes)
		}
		// An expired token of the right key: the address too (spent).
		expired := sign(t, p.key, "k1", map[string]any{"iss": "https://idp.example.com/", "aud": "api", "sub": "carol", "exp": noon.Add(-time.Hour).Unix()})
		if r := f.do(t, "GET", "/a", "", bearer(expired)); r.StatusCode != 429 {
			t.Fatalf("an expired token: %d, want 429 (the address's quota is spent)", r.StatusCode)
		}

		metrics := readAll(t, f.do(t, "GET", "/metrics", "", nil))
		for _, want := range []string{`sluice_token_verifications_total{result="verified"} 2`,
			`sluice_token_verifications_total{result="signature"} 4`, `sluice_token_verifications_total{result="expired"} 1`,
			"sluice_jwks_keys 1", `sluice_jwks_fetches_total{jwt="1",result="ok"} 1`} {
			if !strings.Contains(metrics, "\n"+want+"\n") {
				t.Errorf("/metrics lacks %s", want)
			}
		}
		f.noStoreErrors(t)
	})
}

// /docs tells clients to send their token, and only when tokens identify.
func TestDocsTellsClientsToSendTheirToken(t *testing.T) {
	want := "<strong>Access token</strong> (a JSON Web Token from the identity provider), sent as <code>Authorization: Bearer &lt;token&gt;</code>"
	f := newFixture(t, jwtConfig(newIDP(t, "k1")))
	if page := readAll(t, f.do(t, "GET", "/docs", "", nil)); !strings.Contains(page, want) {
		t.Errorf("/docs with identity.jwt lacks %s", want)
	}
	plain := newFixture(t, testConfig)
	page := readAll(t, plain.do(t, "GET", "/docs", "", nil))
	if strings.Contains(page, "Access token") || !strings.Contains(page, `Bearer $API_KEY`) {
		t.Error("/docs without identity.jwt tells clients to send a token, or its examples send no API key")
	}
	// Where only tokens identify clients, the code examples send one.
	onlyTokens := strings.Replace(jwtConfig(newIDP(t, "k1")), "keys:\n", "unused_keys:\n", 1)
	onlyTokens = onlyTokens[:strings.Index(onlyTokens, "unused_keys:")] + onlyTokens[strings.Index(onlyTokens, "exempt:"):]
	page = readAll(t, newFixture(t, onlyTokens).do(t, "GET", "/docs", "", nil))
	for _, want := range []string{`-H "Authorization: Bearer $ACCESS_TOKEN"`, `os.Getenv("ACCESS_TOKEN")`, `os.environ["ACCESS_TOKEN"]`,
		`const ACCESS_TOKEN = process.env.ACCESS_TOKEN;`, "<code>ACCESS_TOKEN</code> with your access token", "Your plan is the one your access token names."} {
		if !strings.Contains(page, want) {
			t.Errorf("/docs where only tokens identify lacks %s", want)
		}
	}
}

// The decision API takes a token: verified, the client is its user; not,
// the address given with it, or a 400 without one.
func TestJWTClientsOfTheDecisionAPI(t *testing.T) {
	p := newIDP(t, "k1")
	f := newFixture(t, jwtConfig(p))
	alice := sign(t, p.key, "k1", map[string]any{"iss": "https://idp.example.com/", "aud": "api", "sub": "alice", "plan": "pro", "exp": noon.Add(time.Hour).Unix()})
	r := f.do(t, "POST", "/v1/check", `{"token":"`+alice+`"}`, nil)
	body := readAll(t, r)
	if r.StatusCode != 200 || !strings.Contains(body, `"identity":"user"`) || !strings.Contains(body, `"plan":"pro"`) {
		t.Fatalf("alice's token: %d %s", r.StatusCode, body)
	}
	wrongAudience := sign(t, p.key, "k1", map[string]any{"iss": "https://idp.example.com/", "aud": "billing", "sub": "alice", "plan": "pro"})
	r = f.do(t, "POST", "/v1/check", `{"token":"`+wrongAudience+`","ip":"203.0.113.7"}`, nil)
	if body := readAll(t, r); r.StatusCode != 200 || !strings.Contains(body, `"identity":"ip"`) {
		t.Fatalf("a token for another audience, with an address: %d %s", r.StatusCode, body)
	}
	r = f.do(t, "POST", "/v1/check", `{"token":"`+wrongAudience+`"}`, nil)
	if body := readAll(t, r); r.StatusCode != 400 || !strings.Contains(body, "not verified") {
		t.Fatalf("a token for another audience alone: %d %s", r.StatusCode, body)
	}
	r = f.do(t, "POST", "/v1/check", `{"token":"`+alice+`","user":"bob"}`, nil)
	if body := readAll(t, r); r.StatusCode != 400 || !strings.Contains(body, "exactly one of") {
		t.Fatalf("a token and a user: %d %s", r.StatusCode, body)
	}
}

// A reload that keeps identity.jwt keeps its verifier (no new fetch); one
// that changes it verifies with the new settings; a configuration whose
// identity.jwt is invalid is refused and the old one keeps verifying.
func TestJWTAcrossReloads(t *testing.T) {
	p := newIDP(t, "k1")
	f := newFixture(t, jwtConfig(p))
	alice := sign(t, p.key, "k1", map[string]any{"iss": "https://idp.example.com/", "aud": "api", "sub": "alice", "plan": "pro"})
	check := func(want string) {
		t.Helper()
		r := f.do(t, "POST", "/v1/check", `{"token":"`+alice+`","ip":"203.0.113.7","cost":0}`, nil)
		if body := readAll(t, r); r.StatusCode != 200 || !strings.Contains(body, `"identity":"`+want+`"`) {
			t.Fatalf("want identity %s: %d %s", want, r.StatusCode, body)
		}
	}
	check("user")
	text, _ := os.ReadFile(f.file)
	os.WriteFile(f.file, []byte(strings.Replace(string(text), "quantity: 3,", "quantity: 4,", 1)), 0o644)
	if err := f.srv.Reload(); err != nil {
		t.Fatal(err)
	}
	check("user")
	if n := p.fetches.Load(); n != 1 {
		t.Fatalf("the keys were fetched %d times across a reload that kept identity.jwt, want 1", n)
	}
	bad := strings.Replace(string(text), "audiences: [api]", "audiences: [api]\n    algorithms: [none]", 1)
	os.WriteFile(f.file, []byte(bad), 0o644)
	if err := f.srv.Reload(); err == nil || !strings.Contains(err.Error(), "identity.jwt") {
		t.Fatalf("a reload with algorithms [none]: %v", err)
	}
	check("user")
	os.WriteFile(f.file, []byte(strings.Replace(string(text), "audiences: [api]", "audiences: [billing]", 1)), 0o644)
	if err := f.srv.Reload(); err != nil {
		t.Fatal(err)
	}
	check("ip") // alice's token is for api, not billing
}

// A rule keyed by a claim of the verified token: the users of one
// organization share its count, end to end through the real verifier.
func TestJWTTenantRule(t *testing.T) {
	p := newIDP(t, "k1")
	f := newFixture(t, jwtConfig(p)+`
rules:
  - name: tenant
    key: ["claim:org_id"]
    fallback: skip
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 2, window: 1m}]
`)
	token := func(sub, org string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + sign(t, p.key, "k1", map[string]any{
			"iss": "https://idp.example.com/", "aud": "api", "sub": sub, "plan": "pro", "org_id": org})}
	}
	alice, bob, carol := token("alice", "acme"), token("bob", "acme"), token("carol", "globex")
	for i, c := range []struct {
		who  map[string]string
		want int
	}{{alice, 200}, {bob, 200}, {alice, 429}, {bob, 429}, {carol, 200}} {
		if r := f.do(t, "GET", "/a", "", c.who); r.StatusCode != c.want {
			t.Fatalf("request %d: %d, want %d", i, r.StatusCode, c.want)
		}
	}
}

// Forward-auth verifies the client's token as the proxy does: its user's
// plan decides.
func TestJWTThroughForwardAuth(t *testing.T) {
	p := newIDP(t, "k1")
	f := newFixture(t, jwtConfig(p))
	alice := sign(t, p.key, "k1", map[string]any{"iss": "https://idp.example.com/", "aud": "api", "sub": "alice", "plan": "pro"})
	traefik := map[string]string{"X-Forwarded-Method": "GET", "X-Forwarded-Uri": "/api/search", "X-Forwarded-For": "198.51.100.7",
		"Authorization": "Bearer " + alice}
	r := f.do(t, "GET", "/v1/forward-auth", "", traefik)
	if r.StatusCode != 200 || !strings.Contains(r.Header.Get("RateLimit-Policy"), "q=100") {
		t.Fatalf("alice through forward-auth: %d, policy %q", r.StatusCode, r.Header.Get("RateLimit-Policy"))
	}
	traefik["Authorization"] = "Bearer " + alice[:len(alice)-4] + "AAAA" // the signature broken
	if r := f.do(t, "GET", "/v1/forward-auth", "", traefik); !strings.Contains(r.Header.Get("RateLimit-Policy"), "q=3") {
		t.Fatalf("a broken token through forward-auth: policy %q, want the address's free plan", r.Header.Get("RateLimit-Policy"))
	}
}

// Two issuers: the users' identity provider and a cluster's services, each
// verified by its own keys; the services' tokens, which name no plan, are
// on the plan their issuer's entry names.
func TestJWTOfTwoIssuers(t *testing.T) {
	users, services := newIDP(t, "u1"), newIDP(t, "s1")
	f := newFixture(t, strings.Replace(testConfig, "identity:\n", `identity:
  jwt:
    - name: users
      jwks_url: `+users.srv.URL+`
      issuer: https://idp.example.com/
      plan_claim: plan
    - name: services
      jwks_url: `+services.srv.URL+`
      issuer: https://kubernetes.default.svc
      plan: pro
`, 1))
	bearer := func(p *idp, kid string, claims map[string]any) map[string]string {
		return map[string]string{"Authorization": "Bearer " + sign(t, p.key, kid, claims)}
	}
	// Both issuers' keys fetched: on a loaded machine a first fetch can
	// fail, and a token then waits for the next (MinRefresh), not for this
	// test.
	for deadline := time.Now().Add(20 * time.Second); !fetchedOnce(readAll(t, f.do(t, "GET", "/metrics", "", nil)), "users", "services"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the two issuers' keys were not fetched within 20 s")
		}
	}
	policy := func(h map[string]string) string {
		t.Helper()
		r := f.do(t, "POST", "/v1/check", `{"token":"`+strings.TrimPrefix(h["Authorization"], "Bearer ")+`","ip":"203.0.113.7","cost":0}`, nil)
		body := readAll(t, r)
		if r.StatusCode != 200 {
			t.Fatalf("check: %d %s", r.StatusCode, body)
		}
		return body
	}
	if b := policy(bearer(users, "u1", map[string]any{"iss": "https://idp.example.com/", "sub": "alice", "plan": "free"})); !strings.Contains(b, `"identity":"user"`) || !strings.Contains(b, `"plan":"free"`) {
		t.Errorf("a user's token: %s", b)
	}
	job := map[string]any{"iss": "https://kubernetes.default.svc", "sub": "system:serviceaccount:jobs:export"}
	if b := policy(bearer(services, "s1", job)); !strings.Contains(b, `"identity":"user"`) || !strings.Contains(b, `"plan":"pro"`) {
		t.Errorf("a service's token: %s", b)
	}
	// The users' key cannot speak for the cluster.
	if b := policy(bearer(users, "s1", job)); !strings.Contains(b, `"identity":"ip"`) {
		t.Errorf("a token naming the cluster, signed by the users' key: %s", b)
	}
	metrics := readAll(t, f.do(t, "GET", "/metrics", "", nil))
	if !strings.Contains(metrics, "\nsluice_jwks_keys 1\n") {
		t.Errorf("/metrics lacks sluice_jwks_keys 1")
	}
}

// Two issuers that both name an "alice": the services issuer's tokens, on
// the free plan (3 a minute), spend its alice's quota. With a
// subject_prefix on each entry (idp., svc.: neither begins the other) the
// users' alice is another client and still admitted; without one they are
// one client, and the users' alice is refused: what the prefix is for.
func TestJWTSubjectPrefixKeepsIssuersApart(t *testing.T) {
	for _, c := range []struct {
		users, prefix string
		apart         bool
		subject       string
	}{{"\n      subject_prefix: idp.", "\n      subject_prefix: svc.", true, "svc.alice"}, {"", "", false, "alice"}} {
		users, services := newIDP(t, "u1"), newIDP(t, "s1")
		f := newFixture(t, strings.Replace(testConfig, "identity:\n", `identity:
  jwt:
    - jwks_url: `+users.srv.URL+`
      issuer: https://idp.example.com/
      plan: free`+c.users+`
    - jwks_url: `+services.srv.URL+`
      issuer: https://cluster.example.com/
      plan: free`+c.prefix+`
`, 1))
		for deadline := time.Now().Add(20 * time.Second); !fetchedOnce(readAll(t, f.do(t, "GET", "/metrics", "", nil)), "1", "2"); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the two issuers' keys were not fetched within 20 s")
			}
		}
		check := func(token string, cost int) (int, string) {
			t.Helper()
			r := f.do(t, "POST", "/v1/check", fmt.Sprintf(`{"token":%q,"ip":"203.0.113.7","cost":%d}`, token, cost), nil)
			return r.StatusCode, readAll(t, r)
		}
		svc := sign(t, services.key, "s1", map[string]any{"iss": "https://cluster.example.com/", "sub": "alice"})
		if body := readAll(t, f.do(t, "POST", "/v1/tokens", `{"token":"`+svc+`"}`, nil)); !strings.Contains(body, `"subject":"user:`+c.subject+`"`) {
			t.Errorf("prefix %q: /v1/tokens says %s, want the subject user:%s", c.prefix, body, c.subject)
		}
		if code, body := check(svc, 3); code != 200 {
			t.Fatalf("prefix %q: the services' alice spends 3: %d %s", c.prefix, code, body)
		}
		code, body := check(sign(t, users.key, "u1", map[string]any{"iss": "https://idp.example.com/", "sub": "alice"}), 1)
		if admitted := strings.Contains(body, `"allowed":true`); code != 200 || admitted != c.apart {
			t.Errorf("prefix %q: the users' alice after the services' spent 3: %d %s; want admitted %v", c.prefix, code, body, c.apart)
		}
	}
}

// A jwks_url whose certificate a CA of its own signs is fetched trusting
// that CA (ca_file), and not without it.
func TestJWTKeysFromAServerOfAPrivateCA(t *testing.T) {
	p := newIDP(t, "k1")
	tlsIDP := httptest.NewTLSServer(p.srv.Config.Handler)
	t.Cleanup(tlsIDP.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsIDP.Certificate().Raw}), 0o600)
	alice := sign(t, p.key, "k1", map[string]any{"sub": "alice", "plan": "pro"})
	for _, c := range []struct {
		caFile, want string
	}{{"\n    ca_file: " + ca, "user"}, {"", "ip"}} {
		f := newFixture(t, strings.Replace(testConfig, "identity:\n", "identity:\n  jwt:\n    jwks_url: "+tlsIDP.URL+c.caFile+"\n    plan_claim: plan\n", 1))
		r := f.do(t, "POST", "/v1/check", `{"token":"`+alice+`","ip":"203.0.113.7","cost":0}`, nil)
		if body := readAll(t, r); r.StatusCode != 200 || !strings.Contains(body, `"identity":"`+c.want+`"`) {
			t.Errorf("ca_file %q: %d %s, want identity %s", c.caFile, r.StatusCode, body, c.want)
		}
	}
}

// POST /v1/tokens says whom a token names, or why it names no one, as the
// served configuration verifies it now; it is the admin scope's, and 409
// without identity.jwt.
func TestTokensEndpointExplainsAToken(t *testing.T) {
	p := newIDP(t, "k1")
	f := newFixture(t, jwtConfig(p))
	good := sign(t, p.key, "k1", map[string]any{"iss": "https://idp.example.com/", "aud": "api", "sub": "alice", "plan": "pro",
		"org_id": "acme", "exp": noon.Add(time.Hour).Unix()})
	r := f.do(t, "POST", "/v1/tokens", `{"token":"`+good+`"}`, nil)
	body := readAll(t, r)
	for _, want := range []string{`"verified":true`, `"subject":"user:alice"`, `"plan":"pro"`, `"org_id":"acme"`, `"expiresAt":"2026-11-30T13:01:00Z"`} {
		if r.StatusCode != 200 || !strings.Contains(body, want) {
			t.Errorf("a good token: %d %s lacks %s", r.StatusCode, body, want)
		}
	}
	odd := sign(t, p.key, "k1", map[string]any{"iss": "https://idp.example.com/", "aud": "api", "sub": "Ann Smith/7", "plan": "platinum"})
	if body := readAll(t, f.do(t, "POST", "/v1/tokens", `{"token":"`+odd+`"}`, nil)); !strings.Contains(body, `"subject":"user#`) ||
		!strings.Contains(body, `"plan":"free"`) || !strings.Contains(body, `"planClaim":"platinum"`) {
		t.Errorf("an unusual subject naming an unknown plan: %s", body)
	}
	groups := sign(t, p.key, "k1", map[string]any{"iss": "https://idp.example.com/", "aud": "api", "sub": "carol", "plan": []any{"admins", "pro"}})
	if body := readAll(t, f.do(t, "POST", "/v1/tokens", `{"token":"`+groups+`"}`, nil)); !strings.Contains(body, `"plan":"pro"`) ||
		!strings.Contains(body, `"planNames":["admins","pro"]`) {
		t.Errorf("a token whose plan claim lists groups: %s", body)
	}
	expired := sign(t, p.key, "k1", map[string]any{"iss": "https://idp.example.com/", "aud": "api", "sub": "alice", "exp": noon.Add(-time.Hour).Unix()})
	if body := readAll(t, f.do(t, "POST", "/v1/tokens", `{"token":"`+expired+`"}`, nil)); !strings.Contains(body, `"verified":false`) ||
		!strings.Contains(body, `"result":"expired"`) || !strings.Contains(body, "expired") {
		t.Errorf("an expired token: %s", body)
	}
	for _, c := range []struct {
		body string
		code int
	}{{`{}`, 400}, {`{"token":"a.b.c","x":1}`, 400}, {`{"token":"a.b.c"} {}`, 400}, {`{"token":"` + strings.Repeat("a", 9000) + `"}`, 400},
		{`{"token":"` + strings.Repeat("a", 17000) + `"}`, 413}} {
		if r := f.do(t, "POST", "/v1/tokens", c.body, nil); r.StatusCode != c.code {
			t.Errorf("body %.40q: %d, want %d", c.body, r.StatusCode, c.code)
		}
	}
	if r := f.do(t, "POST", "/v1/tokens", `{"token":"a.b.c"}`, map[string]string{server.TokenHeader: ""}); r.StatusCode != 401 && r.StatusCode != 403 {
		t.Errorf("a caller without a token: %d", r.StatusCode)
	}
	metrics := readAll(t, f.do(t, "GET", "/metrics", "", nil))
	if !strings.Contains(metrics, `sluice_token_verifications_total{result="verified"} 0`) {
		t.Error("the endpoint's verifications were counted as the middleware's")
	}
	plain := newFixture(t, testConfig)
	if r := plain.do(t, "POST", "/v1/tokens", `{"token":"a.b.c"}`, nil); r.StatusCode != 409 {
		t.Errorf("without identity.jwt: %d, want 409", r.StatusCode)
	}
}

// discover: true finds the keys where the issuer's OpenID Connect
// discovery document says they are.
func TestJWTKeysDiscoveredFromTheIssuer(t *testing.T) {
	keys := newIDP(t, "k1")
	var issuer string
	op := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/openid-configuration" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(`{"issuer":"` + issuer + `","jwks_uri":"` + keys.srv.URL + `/certs"}`))
	}))
	t.Cleanup(op.Close)
	issuer = op.URL
	f := newFixture(t, strings.Replace(testConfig, "identity:\n", "identity:\n  jwt: {discover: true, issuer: \""+issuer+"\", plan_claim: plan}\n", 1))
	alice := sign(t, keys.key, "k1", map[string]any{"iss": issuer, "sub": "alice", "plan": "pro"})
	r := f.do(t, "POST", "/v1/check", `{"token":"`+alice+`","ip":"203.0.113.7","cost":0}`, nil)
	if body := readAll(t, r); r.StatusCode != 200 || !strings.Contains(body, `"identity":"user"`) || !strings.Contains(body, `"plan":"pro"`) {
		t.Fatalf("a token of the discovered keys: %d %s", r.StatusCode, body)
	}
}
