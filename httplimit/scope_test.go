package httplimit_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// scopeOptions limits every client to 2 requests a minute, and everyone
// together to 3 a minute; "listed-key" is a listed API key, users come in
// X-User from 10.0.0.1.
func scopeOptions(scope string) httplimit.Options {
	return httplimit.Options{
		Plans:          []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.PerMinute(2)}}},
		Global:         []sluice.Limit{sluice.PerMinute(3).Named("everyone")},
		Keys:           []httplimit.Key{{Name: "k", SHA256: sha256.Sum256([]byte("listed-key"))}},
		UnknownKeys:    "key",
		UserHeader:     "X-User",
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.1/32")},
		Scope:          scope,
	}
}

// scopeClients are requests of one client of every kind of identity.
var scopeClients = map[string]req{
	"listed key":   {header: map[string]string{"X-API-Key": "listed-key"}},
	"unlisted key": {header: map[string]string{"Authorization": "Bearer made-up"}},
	"user":         {remote: "10.0.0.1:1234", header: map[string]string{"X-User": "alice"}},
	"ip":           {remote: "192.0.2.7:1234"},
}

// pair builds two middlewares of scopes a and b on one store and limiter.
func pair(t *testing.T, a, b string) (http.Handler, http.Handler, *httplimit.Middleware, *httplimit.Middleware) {
	t.Helper()
	limiter := sluice.NewLimiter(memory.New(memory.WithSweepInterval(0)))
	var mws [2]*httplimit.Middleware
	for i, scope := range []string{a, b} {
		o := scopeOptions(scope)
		o.Logger = quietLogger()
		mw, err := httplimit.New(limiter, o)
		if err != nil {
			t.Fatal(err)
		}
		mws[i] = mw
	}
	return mws[0].Handler(okHandler()), mws[1].Handler(okHandler()), mws[0], mws[1]
}

func TestMiddlewaresOfDifferentScopesKeepApartEveryClient(t *testing.T) {
	for _, scopes := range [][2]string{{"", ""}, {"search", "bulk"}, {"", "bulk"}} {
		for kind, r := range scopeClients {
			first, second, _, _ := pair(t, scopes[0], scopes[1])
			for i := range 2 {
				if w := do(first, r); w.Code != 200 {
					t.Fatalf("scopes %q: %s: request %d to the first middleware: %d", scopes, kind, i+1, w.Code)
				}
			}
			if w := do(first, r); w.Code != 429 {
				t.Fatalf("scopes %q: %s: third request to the first middleware: %d, want 429", scopes, kind, w.Code)
			}
			if w := do(second, r); w.Code != 200 {
				t.Errorf("scopes %q: %s: the second middleware refused a client that spent only the first's quota: %d %s",
					scopes, kind, w.Code, w.Body)
			}
		}
	}
}

func TestMiddlewaresOfOneScopeShareEveryClient(t *testing.T) {
	for kind, r := range scopeClients {
		first, second, _, _ := pair(t, "api", "api")
		for i := range 2 {
			if w := do(first, r); w.Code != 200 {
				t.Fatalf("%s: request %d: %d", kind, i+1, w.Code)
			}
		}
		if w := do(second, r); w.Code != 429 {
			t.Errorf("%s: the second middleware of the same scope admitted a client out of quota: %d", kind, w.Code)
		}
	}
}

// Global limits are the scope's: everyone of one scope together, nobody
// of another.
func TestGlobalLimitsAreKeptPerScope(t *testing.T) {
	for _, c := range []struct {
		a, b  string
		share bool
	}{{"", "", false}, {"search", "bulk", false}, {"api", "api", true}} {
		first, second, _, _ := pair(t, c.a, c.b)
		for i := range 3 { // three clients, one request each: the global 3 spent
			if w := do(first, req{remote: "192.0.2." + string(rune('1'+i)) + ":1"}); w.Code != 200 {
				t.Fatalf("scopes %q %q: client %d: %d", c.a, c.b, i, w.Code)
			}
		}
		w := do(second, req{remote: "192.0.2.9:1"})
		if refused := w.Code == 429; refused != c.share {
			t.Errorf("scopes %q %q: a fresh client of the second middleware: %d, want refused %v", c.a, c.b, w.Code, c.share)
		}
	}
}

// The decision API's clients are kept by scope as requests are, and a
// client decided by DecideFor is the same client as its request.
func TestDecideClientIsScopedAsRequests(t *testing.T) {
	ctx := context.Background()
	for _, share := range []bool{false, true} {
		a, b := "search", "bulk"
		if share {
			b = a
		}
		first, _, _, mw2 := pair(t, a, b)
		for range 2 {
			do(first, scopeClients["listed key"])
		}
		for _, c := range []httplimit.Requester{{APIKey: "listed-key"}} {
			res, err := mw2.DecideFor(ctx, c, "GET", "/", -1)
			if err != nil {
				t.Fatal(err)
			}
			if res.Decision.Allowed == share {
				t.Errorf("share %v: DecideFor(%+v) allowed %v", share, c, res.Decision.Allowed)
			}
			mw2.Discard(res)
		}
	}
	_, _, mw1, mw2 := pair(t, "search", "bulk")
	for _, mw := range []*httplimit.Middleware{mw1, mw1, mw2} {
		res, err := mw.DecideFor(ctx, httplimit.Requester{Subject: "job-7"}, "GET", "/", 1)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Decision.Allowed {
			t.Errorf("subject job-7 refused with 2 of 2 spent in two scopes: %+v", res.Decision)
		}
		if res.Identity.Subject != "ext:job-7" {
			t.Errorf("Identity.Subject %q, want ext:job-7 (the scope is in the store key only)", res.Identity.Subject)
		}
		mw.Discard(res)
	}
}

// The store key is the scope, "/" and the subject; Identity.Subject stays
// the client's name.
func TestStoreKeysAreScopeSlashSubject(t *testing.T) {
	_, _, mw, _ := pair(t, "search", "bulk")
	r, _ := http.NewRequest("GET", "/", nil)
	r.RemoteAddr = "192.0.2.7:1"
	res, err := mw.Decide(r)
	if err != nil {
		t.Fatal(err)
	}
	defer mw.Discard(res)
	if res.Identity.Subject != "ip:192.0.2.7" || res.Checks[0].Key != "search/ip:192.0.2.7" || res.Checks[1].Key != "search/*" {
		t.Errorf("subject %q, keys %q %q", res.Identity.Subject, res.Checks[0].Key, res.Checks[1].Key)
	}
}

func TestNewRefusesAnInvalidScope(t *testing.T) {
	for _, scope := range []string{"a/b", "~drawn", " api", string(make([]byte, 65))} {
		_, err := httplimit.New(sluice.NewLimiter(memory.New()), scopeOptions(scope))
		var fe *httplimit.FieldError
		if !errors.As(err, &fe) || fe.Field != "Scope" {
			t.Errorf("scope %q: %v, want a FieldError of Scope", scope, err)
		}
	}
}

// A Middleware rebuilt with the same Scope, as a server reloading its
// configuration does, keeps what clients spent.
func TestRebuiltMiddlewareOfTheSameScopeKeepsState(t *testing.T) {
	limiter := sluice.NewLimiter(memory.New(memory.WithSweepInterval(0)))
	for i := range 3 {
		o := scopeOptions("api")
		o.Logger = quietLogger()
		mw, err := httplimit.New(limiter, o)
		if err != nil {
			t.Fatal(err)
		}
		want := 200
		if i == 2 {
			want = 429
		}
		if w := do(mw.Handler(okHandler()), req{remote: "192.0.2.7:1"}); w.Code != want {
			t.Errorf("request %d, middleware %d: %d, want %d", i+1, i+1, w.Code, want)
		}
	}
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
