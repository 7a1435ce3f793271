package jwt_test

import (
	"context"
	"testing"

	"github.com/sluice-dev/sluice/jwt"
)

// The zero Verifier verifies no token and has no keys; nothing panics.
func TestZeroVerifierVerifiesNothing(t *testing.T) {
	var v jwt.Verifier
	ctx := context.Background()
	// HS256 over {"sub":"x"}: well formed, signed with no key v knows.
	if _, err := v.VerifyToken(ctx, "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln"); err == nil {
		t.Error("the zero Verifier verified a token")
	}
	if n := v.Keys(); n != 0 {
		t.Errorf("Keys: %d", n)
	}
	if err := v.Refresh(ctx); err != nil {
		t.Errorf("Refresh: %v", err)
	}
	if err := v.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}
