package main

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

// A subject is sent as one segment of the admin listener's path, whatever
// it holds: spaces, non-ASCII letters, a slash, a question mark, a percent
// sign or a hash reach the server whole, which answers a reset with the
// subject it took (a user id of such characters kept as "user#" and the
// first 16 bytes of its SHA-256, in hex).
func TestKeysSendsASubjectAsOnePathSegment(t *testing.T) {
	keys, _ := keysAgainst(t, "")
	hashed := func(id string) string {
		sum := sha256.Sum256([]byte(id))
		return "user#" + hex.EncodeToString(sum[:16])
	}
	for _, c := range []struct{ subject, took string }{
		{"user:jöhn doe", hashed("jöhn doe")},
		{"user:a/b", hashed("a/b")},
		{"user:what?limit=x", hashed("what?limit=x")},
		{"user:50%25#frag", hashed("50%25#frag")},
		{"user:a/../../v1/keys", hashed("a/../../v1/keys")},
		{"ext:tenant/ünïcode key", "ext:tenant/ünïcode key"},
	} {
		out, err := keys("reset", c.subject)
		if err != nil || !strings.HasPrefix(out, "reset "+c.took+": ") {
			t.Errorf("reset %q: %v %q, want the reset of %s", c.subject, err, out, c.took)
		}
		if out, err := keys("inspect", c.subject); err != nil || !strings.Contains(out, "per-minute") {
			t.Errorf("inspect %q: %v\n%s", c.subject, err, out)
		}
	}
}
