package jwt_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/jwt"
	"github.com/sluice-dev/sluice/memory"
)

// A token past its "exp" but within the Leeway (the issuer's clock behind
// ours) is accepted, and vouches for its client until the Leeway is over:
// its Expires, which the Middleware believes it until, is its "exp" plus
// the Leeway, so that a Middleware limits the request as the token's user,
// not as its address.
func TestATokenWithinTheLeewayPastItsExpVouchesForItsClient(t *testing.T) {
	const leeway = time.Minute
	exp := time.Now().Add(-20 * time.Second).Truncate(time.Second)
	v := newVerifier(t, jwt.Options{Secret: secret, Leeway: leeway, Clock: time.Now})
	tok := sign(t, jose.HS256, secret, "", claims("exp", exp.Unix()))
	got, err := v.VerifyToken(context.Background(), tok)
	if err != nil {
		t.Fatal(err)
	}
	if want := exp.Add(leeway); !got.Expires.Equal(want) {
		t.Errorf("Expires = %v, want exp plus the leeway, %v", got.Expires, want)
	}

	store := memory.New()
	t.Cleanup(func() { store.Close() })
	var subject string
	mw, err := httplimit.New(sluice.NewLimiter(store), httplimit.Options{
		Plans:    []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.PerMinute(10)}}},
		Tokens:   v,
		Observer: func(res *httplimit.Result, _ time.Duration, err error) { subject = res.Identity.Subject },
	})
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodGet, "/v1/items", nil)
	r.Header.Set("Authorization", "Bearer "+tok)
	mw.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})).ServeHTTP(httptest.NewRecorder(), r)
	if subject != "user:alice" {
		t.Errorf("the request was limited as %q, want user:alice", subject)
	}
}
