package httplimit_test

import (
	"net/http/httptest"
	"testing"

	"github.com/sluice-dev/sluice/httplimit"
)

// A client may send Authorization twice: a forged token first, which
// names no one (the client would be its address, a fresh quota at each
// address), and its own verified token after it, which an upstream that
// reads the last copy (PHP behind FastCGI) acts on. Tokens that differ are
// the first of them the verifier vouches for: the user's quota is spent
// from any address.
func TestAForgedCopyBesideAVerifiedTokenIsNotTheClient(t *testing.T) {
	mw, _, _ := tokenMiddleware(t, "")
	for _, order := range [][]string{{forgedToken, aliceToken}, {aliceToken, forgedToken}} {
		r := httptest.NewRequest("GET", "/api/search", nil)
		r.RemoteAddr = "203.0.113.7:1000"
		for _, tok := range order {
			r.Header.Add("Authorization", "Bearer "+tok)
		}
		res, err := mw.Decide(r)
		if err != nil {
			t.Fatal(err)
		}
		if id := res.Identity; id.Kind != httplimit.KindUser || id.Subject != "user:alice" {
			t.Errorf("Authorization %v: %s %q, want user:alice", order, id.Kind, id.Subject)
		}
		mw.Discard(res)
	}
}
