package grpclimit_test

import (
	"context"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/grpclimit"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/internal/jwttest"
	"github.com/sluice-dev/sluice/jwt"
)

// A call's bearer token in its authorization metadata names its client
// when Limits.Tokens verifies it; a forged one is the peer's.
func TestTokensInMetadataNameTheirUsers(t *testing.T) {
	t.Parallel()
	secret := []byte("a-secret-shared-with-the-issuer-32b")
	tokens, err := jwt.New(jwt.Options{Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tokens.Close() })
	ts := start(t, grpclimit.Options{Limits: httplimit.Options{Plans: []*httplimit.Plan{plan("free", sluice.PerMinute(1))}, Tokens: tokens}})
	sign := func(key []byte, sub string) string {
		return "Bearer " + jwttest.Sign(t, jose.HS256, key, "", map[string]any{"sub": sub, "exp": time.Now().Add(time.Hour).Unix()})
	}
	ctx := context.Background()
	for _, user := range []string{"alice", "bob"} {
		if _, err := say(ctx, ts.conn, methodSay, "authorization", sign(secret, user)); err != nil {
			t.Errorf("%s's first call: %v", user, err)
		}
	}
	if _, err := say(ctx, ts.conn, methodSay, "authorization", sign(secret, "alice")); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("alice's second call: %v", err)
	}
	forged := []byte("not-the-issuers-secret-of-32-bytes")
	if _, err := say(ctx, ts.conn, methodSay, "authorization", sign(forged, "carol")); err != nil {
		t.Errorf("the peer's first call: %v", err)
	}
	if _, err := say(ctx, ts.conn, methodSay, "authorization", sign(forged, "dave")); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("a second forged token of the same peer: %v", err)
	}
	subjects := map[string]bool{}
	for _, d := range ts.decisions() {
		subjects[d.subject] = true
	}
	if !subjects["user:alice"] || !subjects["user:bob"] || subjects["user:carol"] || subjects["user:dave"] {
		t.Errorf("subjects decided: %v", subjects)
	}
}
