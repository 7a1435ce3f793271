package httplimit_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// fakeTokens vouches for the tokens in claims and counts what it is asked.
type fakeTokens struct {
	mu     sync.Mutex
	claims map[string]httplimit.TokenClaims
	asked  map[string]int
}

func (f *fakeTokens) VerifyToken(ctx context.Context, token string) (httplimit.TokenClaims, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked[token]++
	if err := ctx.Err(); err != nil {
		return httplimit.TokenClaims{}, err
	}
	c, ok := f.claims[token]
	if !ok {
		return c, errors.New("not vouched for")
	}
	return c, nil
}

func (f *fakeTokens) times(token string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.asked[token]
}

// Tokens in the compact form: three parts joined by dots.
const (
	aliceToken   = "eyJhbGciOiJSUzI1NiJ9.alice.sig"
	bobToken     = "eyJhbGciOiJSUzI1NiJ9.bob.sig"
	forgedToken  = "eyJhbGciOiJSUzI1NiJ9.mallory.forged"
	forgedToken2 = "eyJhbGciOiJSUzI1NiJ9.mallory.forged-again"
)

// tokenMiddleware is identityConfig's middleware with a fake verifier that
// vouches for alice (on the big plan, until an hour after noon) and bob
// (naming a plan the policy lacks, never expiring).
func tokenMiddleware(t *testing.T, unknownKeys string) (*httplimit.Middleware, *fakeTokens, *fakeClock) {
	t.Helper()
	text := identityConfig
	if unknownKeys != "" {
		text = strings.Replace(text, "  plan_header: X-Plan\n", "  plan_header: X-Plan\n  unknown_keys: "+unknownKeys+"\n", 1)
	}
	return tokenMiddlewareOf(t, text, map[string]httplimit.TokenClaims{
		aliceToken: {Subject: "alice", Plan: "big", Expires: noon.Add(time.Hour)},
		bobToken:   {Subject: "bob", Plan: "platinum"},
	})
}

// tokenMiddlewareOf is the middleware of the configuration text, on a
// clock at noon, with a fake verifier that vouches for the tokens of
// claims.
func tokenMiddlewareOf(t *testing.T, text string, claims map[string]httplimit.TokenClaims) (*httplimit.Middleware, *fakeTokens, *fakeClock) {
	t.Helper()
	cfg, err := config.Parse("test.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	clock := clockAt(noon)
	v := &fakeTokens{asked: map[string]int{}, claims: claims}
	o := quiet(cfg)
	o.Clock = clock.Now
	o.Tokens = v
	mw, err := httplimit.New(sluice.NewLimiter(memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))), o)
	if err != nil {
		t.Fatal(err)
	}
	return mw, v, clock
}

// tokenCode is a request with a token and the status it must get.
type tokenCode struct {
	token string
	want  int
}

// sendTokens sends each request of codes, from one address, to h.
func sendTokens(t *testing.T, h http.Handler, codes []tokenCode) {
	t.Helper()
	for i, c := range codes {
		if w := do(h, req{remote: "203.0.113.7:1000", header: bearerOf(c.token)}); w.Code != c.want {
			t.Fatalf("request %d: %d, want %d", i, w.Code, c.want)
		}
	}
}

// identityOf returns the identity mw gives a request from remote with
// headers.
func identityOf(t *testing.T, mw *httplimit.Middleware, remote string, headers map[string]string) httplimit.Identity {
	t.Helper()
	r := httptest.NewRequest("GET", "/api/search", nil)
	r.RemoteAddr = remote
	for k, v := range headers {
		r.Header.Set(k, v)
	}
	res, err := mw.Decide(r)
	if err != nil {
		t.Fatal(err)
	}
	defer mw.Discard(res)
	return res.Identity
}

func bearerOf(token string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + token}
}

func TestAVerifiedTokenIsItsUserOnItsPlan(t *testing.T) {
	mw, _, _ := tokenMiddleware(t, "")
	id := identityOf(t, mw, "203.0.113.7:1000", bearerOf(aliceToken))
	if id.Kind != httplimit.KindUser || id.Subject != "user:alice" || id.Plan == nil || id.Plan.Name != "big" {
		t.Fatalf("alice's token: %s %q on %v, want user user:alice on big", id.Kind, id.Subject, id.Plan)
	}
	// A plan the policy lacks: the default plan.
	id = identityOf(t, mw, "203.0.113.7:1000", bearerOf(bobToken))
	if id.Subject != "user:bob" || id.Plan.Name != "free" {
		t.Fatalf("bob's token: %q on %s, want user:bob on free", id.Subject, id.Plan.Name)
	}
	// No plan in the token: a trusted proxy's plan header picks it.
	mw2, v, _ := tokenMiddleware(t, "")
	v.claims[bobToken] = httplimit.TokenClaims{Subject: "bob"}
	id = identityOf(t, mw2, "10.1.2.3:1000", map[string]string{"Authorization": "Bearer " + bobToken, "X-Plan": "big"})
	if id.Plan.Name != "big" {
		t.Fatalf("bob's token with a trusted plan header: plan %s, want big", id.Plan.Name)
	}
	// The token outranks a trusted user header: a client cannot be another user.
	id = identityOf(t, mw, "10.1.2.3:1000", map[string]string{"Authorization": "Bearer " + aliceToken, "X-User-ID": "bob"})
	if id.Subject != "user:alice" {
		t.Fatalf("token and user header: %q, want user:alice", id.Subject)
	}
	// A listed API key of another header outranks it (as it outranks a user).
}

// A token whose plan claim lists groups is on the first of them that is a
// plan; when none is, on the plan it would be without one.
func TestATokensGroupsPickItsPlan(t *testing.T) {
	mw, v, _ := tokenMiddleware(t, "")
	v.claims[bobToken] = httplimit.TokenClaims{Subject: "bob", Plans: []string{"admins", "big", "free"}}
	if id := identityOf(t, mw, "203.0.113.7:1000", bearerOf(bobToken)); id.Plan == nil || id.Plan.Name != "big" {
		t.Fatalf("groups admins, big, free: plan %v, want big", id.Plan)
	}
	mw2, v2, _ := tokenMiddleware(t, "")
	v2.claims[bobToken] = httplimit.TokenClaims{Subject: "bob", Plan: "platinum", Plans: []string{"staff", "big"}}
	if id := identityOf(t, mw2, "203.0.113.7:1000", bearerOf(bobToken)); id.Plan == nil || id.Plan.Name != "big" {
		t.Fatalf("plan platinum (none), groups staff, big: plan %v, want big", id.Plan)
	}
	mw3, v3, _ := tokenMiddleware(t, "")
	v3.claims[bobToken] = httplimit.TokenClaims{Subject: "bob", Plans: []string{"staff"}}
	if id := identityOf(t, mw3, "10.1.2.3:1000", map[string]string{"Authorization": "Bearer " + bobToken, "X-Plan": "big"}); id.Plan == nil || id.Plan.Name != "big" {
		t.Fatalf("groups naming no plan, a trusted plan header big: plan %v, want big", id.Plan)
	}
}

// A forged token names no one: its client is its address, whatever the
// token says and however many are made up; it is never read as an API key,
// which with unknown_keys "key" would be a client of its own.
func TestARefusedTokenIsItsAddressAndMintsNoQuota(t *testing.T) {
	for _, unknown := range []string{"ip", "key"} {
		mw, _, _ := tokenMiddleware(t, unknown)
		h := mw.Handler(okHandler())
		if w := do(h, req{remote: "203.0.113.7:1000", header: bearerOf(forgedToken)}); w.Code != 200 {
			t.Fatalf("unknown_keys %s: first request %d", unknown, w.Code)
		}
		// The one request a minute of the address is spent: another made-up token gets no more.
		if w := do(h, req{remote: "203.0.113.7:1001", header: bearerOf(forgedToken2)}); w.Code != 429 {
			t.Fatalf("unknown_keys %s: a second forged token from the same address got %d, want 429", unknown, w.Code)
		}
		id := identityOf(t, mw, "203.0.113.7:1000", bearerOf(forgedToken))
		if id.Kind != httplimit.KindIP || id.Subject != "ip:203.0.113.7" {
			t.Fatalf("unknown_keys %s: forged token is %s %q, want the address", unknown, id.Kind, id.Subject)
		}
	}
	// A token too long to verify is not sent to the verifier.
	mw, v, _ := tokenMiddleware(t, "")
	long := "eyJ." + strings.Repeat("b", 9000) + ".c"
	if id := identityOf(t, mw, "203.0.113.7:1000", bearerOf(long)); id.Kind != httplimit.KindIP {
		t.Fatalf("a 9 KB token: %s, want ip", id.Kind)
	}
	if n := v.times(long); n != 0 {
		t.Fatalf("a 9 KB token was verified %d times", n)
	}
}

// The middleware asks the verifier once for a token it sees again, until
// the token expires, at most five minutes; a refused token is refused
// without asking for ten seconds.
func TestTokensAreVerifiedOnceUntilTheyExpire(t *testing.T) {
	mw, v, clock := tokenMiddleware(t, "")
	for range 5 {
		identityOf(t, mw, "203.0.113.7:1000", bearerOf(bobToken))
		identityOf(t, mw, "203.0.113.7:1000", bearerOf(forgedToken))
	}
	if a, b := v.times(bobToken), v.times(forgedToken); a != 1 || b != 1 {
		t.Fatalf("5 requests each: bob's token verified %d times, the forged one %d, want 1 and 1", a, b)
	}
	clock.Advance(10 * time.Second)
	identityOf(t, mw, "203.0.113.7:1000", bearerOf(forgedToken))
	if n := v.times(forgedToken); n != 2 {
		t.Fatalf("after 10 s the forged token was verified %d times in all, want 2", n)
	}
	clock.Advance(5*time.Minute - 10*time.Second)
	identityOf(t, mw, "203.0.113.7:1000", bearerOf(bobToken))
	if n := v.times(bobToken); n != 2 {
		t.Fatalf("after 5 minutes bob's token was verified %d times in all, want 2", n)
	}

	// alice's token expires at 12:02: the middleware asks again then, and
	// a verifier that now refuses it makes the client its address.
	mw, v, clock = tokenMiddleware(t, "")
	v.claims[aliceToken] = httplimit.TokenClaims{Subject: "alice", Expires: noon.Add(2 * time.Minute)}
	identityOf(t, mw, "203.0.113.7:1000", bearerOf(aliceToken))
	clock.Advance(time.Minute + 59*time.Second)
	if id := identityOf(t, mw, "203.0.113.7:1000", bearerOf(aliceToken)); id.Subject != "user:alice" {
		t.Fatalf("alice's token a second before it expires: %q", id.Subject)
	}
	v.mu.Lock()
	delete(v.claims, aliceToken)
	v.mu.Unlock()
	clock.Advance(time.Second)
	if id := identityOf(t, mw, "203.0.113.7:1000", bearerOf(aliceToken)); id.Kind != httplimit.KindIP {
		t.Fatalf("alice's token once expired: %s %q, want the address", id.Kind, id.Subject)
	}
	if n := v.times(aliceToken); n != 2 {
		t.Fatalf("alice's token verified %d times, want 2 (once, then at its expiry)", n)
	}
}

// A client that left before its token was verified leaves no refusal
// behind: the next request with the token is verified.
func TestATokenRefusedForALeavingClientIsNotRemembered(t *testing.T) {
	mw, v, _ := tokenMiddleware(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := httptest.NewRequest("GET", "/api/search", nil).WithContext(ctx)
	r.Header.Set("Authorization", "Bearer "+aliceToken)
	if res, err := mw.Decide(r); err == nil {
		mw.Discard(res)
	}
	if id := identityOf(t, mw, "203.0.113.7:1000", bearerOf(aliceToken)); id.Subject != "user:alice" {
		t.Fatalf("after a canceled verification: %q, want user:alice", id.Subject)
	}
	if n := v.times(aliceToken); n != 2 {
		t.Fatalf("verified %d times, want 2", n)
	}
}

func TestDecideForATokenRequester(t *testing.T) {
	mw, _, _ := tokenMiddleware(t, "")
	ctx := context.Background()
	res, err := mw.DecideFor(ctx, httplimit.Requester{Token: aliceToken, User: "bob"}, "GET", "/api/search", -1)
	if err != nil {
		t.Fatal(err)
	}
	if res.Identity.Subject != "user:alice" || res.Identity.Plan.Name != "big" {
		t.Fatalf("alice's token: %q on %s", res.Identity.Subject, res.Identity.Plan.Name)
	}
	mw.Discard(res)
	// Refused: the address if given (not the user), else ErrTokenRefused.
	res, err = mw.DecideFor(ctx, httplimit.Requester{Token: forgedToken, User: "bob", IP: netip.MustParseAddr("203.0.113.7")}, "GET", "/api/search", -1)
	if err != nil {
		t.Fatal(err)
	}
	if res.Identity.Subject != "ip:203.0.113.7" {
		t.Fatalf("a forged token with an address: %q, want the address", res.Identity.Subject)
	}
	mw.Discard(res)
	if _, err := mw.DecideFor(ctx, httplimit.Requester{Token: forgedToken, User: "bob"}, "GET", "/api/search", -1); !errors.Is(err, httplimit.ErrTokenRefused) {
		t.Fatalf("a forged token alone: %v, want ErrTokenRefused", err)
	}
	// Without a verifier a token is an error, not a client.
	cfg, err := config.Parse("test.yaml", []byte(identityConfig))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := httplimit.New(sluice.NewLimiter(memory.New(memory.WithSweepInterval(0))), quiet(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.DecideFor(ctx, httplimit.Requester{Token: aliceToken}, "GET", "/api/search", -1); err == nil {
		t.Fatal("a token without a verifier was decided")
	}
}

// A rule keyed by "user" keys a verified token's client by its user.
func TestARuleKeyedByUserTakesTheTokensUser(t *testing.T) {
	mw, _, _ := tokenMiddlewareOf(t, identityConfig+`
rules:
  - name: search
    match: {paths: ["/api/search"]}
    key: [user]
    fallback: skip
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 1, window: 1m}]
`, map[string]httplimit.TokenClaims{aliceToken: {Subject: "alice", Plan: "big"}, bobToken: {Subject: "bob", Plan: "big"}})
	sendTokens(t, mw.Handler(okHandler()), []tokenCode{{aliceToken, 200}, {aliceToken, 429}, {bobToken, 200}})
}

// A rule keyed by a claim counts the clients whose tokens name the same
// value together (a tenant's quota), and skips a request without one; it
// needs tokens to be verified.
func TestARuleKeyedByAClaimCountsATenantTogether(t *testing.T) {
	const rule = `
rules:
  - name: tenant
    key: ["claim:org_id"]
    fallback: skip
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 2, window: 1m}]
`
	if _, err := config.Parse("test.yaml", []byte(identityConfig+rule)); err == nil {
		t.Fatal("a claim key without identity.jwt loaded")
	}
	text := strings.Replace(identityConfig, "identity:\n", "identity:\n  jwt: {secret_file: testdata/secret}\n", 1) + rule
	mw, _, _ := tokenMiddlewareOf(t, text, map[string]httplimit.TokenClaims{
		aliceToken:   {Subject: "alice", Plan: "big", Claims: map[string]string{"org_id": "acme"}},
		bobToken:     {Subject: "bob", Plan: "big", Claims: map[string]string{"org_id": "acme"}},
		forgedToken:  {Subject: "carol", Plan: "big", Claims: map[string]string{"org_id": "globex"}},
		forgedToken2: {Subject: "dave", Plan: "big"},
	})
	sendTokens(t, mw.Handler(okHandler()), []tokenCode{{aliceToken, 200}, {bobToken, 200}, {aliceToken, 429}, {bobToken, 429},
		{forgedToken, 200}, {forgedToken2, 200}, {forgedToken2, 200}, {forgedToken2, 200}})
}

// An address whose tokens keep failing has at most 16 verified in 10
// seconds: the next new ones name no one unverified, even a valid one,
// while tokens remembered as verified keep naming their users and other
// addresses are not affected; after 10 seconds it is verified again.
func TestForgedTokensCostABoundedNumberOfVerifications(t *testing.T) {
	mw, v, clock := tokenMiddleware(t, "")
	identityOf(t, mw, "203.0.113.7:1000", bearerOf(bobToken)) // remembered as verified
	forged := func(i int) string { return fmt.Sprintf("eyJhbGciOiJSUzI1NiJ9.mallory%d.forged", i) }
	for i := range 40 {
		identityOf(t, mw, "203.0.113.7:1000", bearerOf(forged(i)))
	}
	asked := 0
	for i := range 40 {
		asked += v.times(forged(i))
	}
	if asked != 16 {
		t.Fatalf("40 forged tokens from one address: %d verified, want 16", asked)
	}
	if id := identityOf(t, mw, "203.0.113.7:1001", bearerOf(aliceToken)); id.Kind != httplimit.KindIP || v.times(aliceToken) != 0 {
		t.Fatalf("a valid new token from the address over its budget: %s, verified %d times; want the address, unverified", id.Kind, v.times(aliceToken))
	}
	if id := identityOf(t, mw, "203.0.113.7:1000", bearerOf(bobToken)); id.Subject != "user:bob" {
		t.Fatalf("a remembered token from the address over its budget: %q, want user:bob", id.Subject)
	}
	if id := identityOf(t, mw, "198.51.100.1:1000", bearerOf(aliceToken)); id.Subject != "user:alice" {
		t.Fatalf("a valid token from another address: %q, want user:alice", id.Subject)
	}
	clock.Advance(10 * time.Second)
	if id := identityOf(t, mw, "203.0.113.7:1000", bearerOf(forged(99))); id.Kind != httplimit.KindIP || v.times(forged(99)) != 1 {
		t.Fatalf("10 s later, a new forged token: verified %d times, want 1", v.times(forged(99)))
	}
}

// Forged tokens from many addresses, each within its own budget, cost at
// most 20,000 verifications every 10 s all together: past them, a new
// token from a new address is not verified (a remembered one still
// names its user) until the 10 s are over.
func TestForgedTokensFromManyAddressesCostABoundedNumberOfVerifications(t *testing.T) {
	mw, v, clock := tokenMiddleware(t, "")
	identityOf(t, mw, "203.0.113.7:1000", bearerOf(bobToken)) // remembered as verified
	h := mw.Handler(okHandler())
	for i := range 21_000 { // one forged token from each of 21,000 addresses
		do(h, req{remote: fmt.Sprintf("10.%d.%d.%d:1", 100+i>>16, i>>8&255, i&255), header: bearerOf(fmt.Sprintf("eyJhbGciOiJSUzI1NiJ9.m%d.forged", i))})
	}
	asked := 0
	for i := range 21_000 {
		asked += v.times(fmt.Sprintf("eyJhbGciOiJSUzI1NiJ9.m%d.forged", i))
	}
	if asked != 20_000 {
		t.Fatalf("forged tokens from 21,000 addresses: %d verified, want 20,000", asked)
	}
	if id := identityOf(t, mw, "198.51.100.1:1000", bearerOf(aliceToken)); id.Kind != httplimit.KindIP || v.times(aliceToken) != 0 {
		t.Fatalf("a valid new token past the budget of all: %s, verified %d times; want its address, unverified", id.Kind, v.times(aliceToken))
	}
	if id := identityOf(t, mw, "203.0.113.7:1000", bearerOf(bobToken)); id.Subject != "user:bob" {
		t.Fatalf("a remembered token past the budget of all: %q, want user:bob", id.Subject)
	}
	clock.Advance(10 * time.Second)
	if id := identityOf(t, mw, "198.51.100.1:1000", bearerOf(aliceToken)); id.Subject != "user:alice" {
		t.Fatalf("10 s later, a valid token: %q, want user:alice", id.Subject)
	}
}

// A listed API key with two dots (SendGrid's shape) in Authorization is
// still the key, with Tokens set: only a credential shaped like a JWS is
// the verifier's.
func TestAnAPIKeyWithTwoDotsIsStillAnAPIKey(t *testing.T) {
	key := "SG.abc123.def456"
	sum := sha256.Sum256([]byte(key))
	mw, v, _ := tokenMiddlewareOf(t, identityConfig+fmt.Sprintf("keys: [{name: mailer, sha256: %x, plan: big}]\n", sum), nil)
	if id := identityOf(t, mw, "203.0.113.7:1000", bearerOf(key)); id.Kind != httplimit.KindAPIKey || id.KeyName != "mailer" {
		t.Fatalf("a listed key of two dots: %s %q, want the key mailer", id.Kind, id.KeyName)
	}
	if n := v.times(key); n != 0 {
		t.Fatalf("the key was sent to the verifier %d times", n)
	}
}

// TokenHeaders: a token in a header a proxy in front sets (oauth2-proxy's
// X-Forwarded-Access-Token) names its user, read bare; Authorization is
// then not read for tokens unless listed.
func TestTokensFromTheHeadersConfigured(t *testing.T) {
	cfg, err := config.Parse("test.yaml", []byte(identityConfig))
	if err != nil {
		t.Fatal(err)
	}
	o := quiet(cfg)
	o.Tokens = &fakeTokens{asked: map[string]int{}, claims: map[string]httplimit.TokenClaims{aliceToken: {Subject: "alice"}, bobToken: {Subject: "bob"}}}
	o.TokenHeaders = []string{"x-forwarded-access-token"}
	o.UnknownKeys = "key" // an API key read is then a client of its own, and shows as one
	mw, err := httplimit.New(sluice.NewLimiter(memory.New(memory.WithSweepInterval(0))), o)
	if err != nil {
		t.Fatal(err)
	}
	if id := identityOf(t, mw, "203.0.113.7:1000", map[string]string{"X-Forwarded-Access-Token": " " + aliceToken}); id.Subject != "user:alice" {
		t.Errorf("a token in X-Forwarded-Access-Token: %q, want user:alice", id.Subject)
	}
	if id := identityOf(t, mw, "203.0.113.7:1000", bearerOf(bobToken)); id.Kind != httplimit.KindAPIKey {
		t.Errorf("a token in Authorization, not a token header: %s, want it read as an API key", id.Kind)
	}
	o.TokenHeaders = []string{"X Token"}
	if _, err := httplimit.New(sluice.NewLimiter(memory.New(memory.WithSweepInterval(0))), o); err == nil || !strings.Contains(err.Error(), "TokenHeaders[0]") {
		t.Errorf("an invalid token header: %v", err)
	}
}
