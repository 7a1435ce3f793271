package httplimit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// teamsMiddleware returns a Middleware whose rule "teams" is keyed by the
// client and its X-Team header, under fallback ip: a client without the
// header, and without an address, is counted by its own subject there.
func teamsMiddleware(t *testing.T) *Middleware {
	t.Helper()
	limits := []sluice.Limit{sluice.FixedWindow(2, time.Minute)}
	m, err := New(sluice.NewLimiter(memory.New()), Options{
		Plans:       []*Plan{{Name: "free", Limits: limits}},
		DefaultPlan: "free",
		Rules: []Rule{{Name: "teams", Paths: []string{"/t"}, Key: []string{KeyClient, KeyHeader + "X-Team"},
			HeaderFrom: HeaderFromAny, Limits: limits}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// teamsKey returns the store key, without the scope, that DecideFor keeps
// the rule "teams" of subject's request with X-Team team ("" for none)
// under.
func teamsKey(t *testing.T, m *Middleware, subject, team string) string {
	t.Helper()
	h := http.Header{}
	if team != "" {
		h.Set("X-Team", team)
	}
	res, err := m.DecideFor(context.Background(), Requester{Subject: subject, Header: h}, "GET", "/t", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Discard(res)
	if len(res.ruleKeys) != 1 {
		t.Fatalf("subject %q: rule keys %q, want one", subject, res.ruleKeys)
	}
	return strings.TrimPrefix(res.ruleKeys[0], m.id.prefix)
}

// subjectHash returns the element of a rule's store key that keeps the
// caller's subject s ("ext:…") hashed: "ext#" and the first 16 bytes, in
// hex, of the SHA-256 of the text after "ext:".
func subjectHash(s string) string {
	sum := sha256.Sum256([]byte(strings.TrimPrefix(s, "ext:")))
	return "ext#" + hex.EncodeToString(sum[:16])
}

// A decision API subject is an opaque name, which may hold the "|" that
// joins a rule's values ("auth0|5f7c…"). Kept as it is, subject "m|n"
// without X-Team (ext:m|n|ext:m|n, its subject standing for the absent
// value) and subject "m|n|ext:m" with X-Team "n" would share one count:
// such a subject is kept hashed ("ext#…"), as a long one is, so each
// client's key is its own; a subject without a "|" is kept as it is.
func TestRuleKeysOfSubjectsHoldingABarAreTheirOwn(t *testing.T) {
	m := teamsMiddleware(t)
	a, b := teamsKey(t, m, "m|n", ""), teamsKey(t, m, "m|n|ext:m", "n")
	if a == b {
		t.Errorf("subject m|n without X-Team and subject m|n|ext:m with X-Team n share the key %q", a)
	}
	if want := "rule:teams/" + subjectHash("ext:m|n") + "|" + subjectHash("ext:m|n"); a != want {
		t.Errorf("subject m|n without X-Team: key %q, want %q", a, want)
	}
	if got, want := teamsKey(t, m, "alice", "eng"), "rule:teams/ext:alice|eng"; got != want {
		t.Errorf("subject alice with X-Team eng: key %q, want %q, as it is", got, want)
	}
}

// An operator names a rule's key of a subject holding a "|" as its
// request sent it, where the text reads one way only, or by its hash; a
// text that reads two ways (ext:m|n|ext:m|n: m|n without X-Team, or
// m|n|ext:m with X-Team n) is refused with both keys to choose from, each
// of which names its state. A value holding a "|" but a subject, an empty
// one or a key of too many values is refused.
func TestSubjectNamesARuleKeyOfASubjectHoldingABar(t *testing.T) {
	m := teamsMiddleware(t)
	want := teamsKey(t, m, "auth0|123", "eng")
	for _, named := range []string{"rule:teams/ext:auth0|123|eng", "rule:teams/" + subjectHash("ext:auth0|123") + "|eng"} {
		if got, err := m.Subject(named); err != nil || got != want {
			t.Errorf("Subject(%q) = %q, %v; want %q", named, got, err, want)
		}
	}
	_, err := m.Subject("rule:teams/ext:m|n|ext:m|n")
	for _, key := range []string{teamsKey(t, m, "m|n", ""), teamsKey(t, m, "m|n|ext:m", "n")} {
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("Subject(rule:teams/ext:m|n|ext:m|n): %v; want an error naming %s", err, key)
		}
		if got, err := m.Subject(key); err != nil || got != key {
			t.Errorf("Subject(%q) = %q, %v; want it as it is", key, got, err)
		}
	}
	for _, s := range []string{"rule:teams/alice|b|c", "rule:teams/ext:a|", "rule:teams/ext:a|b|c|d|"} {
		if got, err := m.Subject(s); err == nil {
			t.Errorf("Subject(%q) = %q, nil; want an error", s, got)
		}
	}
}
