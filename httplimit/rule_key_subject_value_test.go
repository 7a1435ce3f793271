package httplimit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// valueHash returns the element of a rule's store key that keeps the value
// v hashed: "#" and the first 16 bytes, in hex, of its SHA-256.
func valueHash(v string) string {
	sum := sha256.Sum256([]byte(v))
	return "#" + hex.EncodeToString(sum[:16])
}

// teamHeaderMiddleware returns a Middleware whose rule "teams" is keyed by
// the X-Team header alone, which any client may send, under fallback ip,
// with a limit of one request a minute.
func teamHeaderMiddleware(t *testing.T) *Middleware {
	t.Helper()
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	m, err := New(sluice.NewLimiter(store), Options{
		Plans:       []*Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(100, time.Minute)}}},
		DefaultPlan: "free",
		Logger:      slog.New(slog.DiscardHandler),
		Rules: []Rule{{Name: "teams", Paths: []string{"/t"}, Key: []string{KeyHeader + "X-Team"},
			HeaderFrom: HeaderFromAny, Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A client without a value of a rule's key, and without an address, is
// counted by its own subject under fallback ip (docs/rules.md), kept
// hashed when it holds a "|" (an IdP's auth0|123) or is longer than 128
// bytes ("ext#…"). No value, kept or hashed, is kept as such a subject
// is: an anonymous client sending X-Team as the subject's text, the
// caller's subject alone, or the text of either hashed element spends a
// count of its own, and the decision API client's first request is
// admitted.
func TestAValueNeverSpendsAClientsHashedSubject(t *testing.T) {
	for _, victim := range []string{"auth0|123", "u" + strings.Repeat("x", 140)} {
		t.Run(victim[:min(len(victim), 12)], func(t *testing.T) {
			m := teamHeaderMiddleware(t)
			h := m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
			for _, team := range []string{"ext:" + victim, victim, subjectHash("ext:" + victim), valueHash("ext:" + victim)} {
				r := httptest.NewRequest("GET", "/t", nil)
				r.RemoteAddr = "203.0.113.9:4000"
				r.Header.Set("X-Team", team)
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if w.Code != http.StatusOK {
					t.Fatalf("X-Team %q: %d", team, w.Code)
				}
			}
			res, err := m.DecideFor(context.Background(), Requester{Subject: victim}, "GET", "/t", 1)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Discard(res)
			if !res.Decision.Allowed {
				t.Errorf("client %q without X-Team, its first request on rule teams, refused: an anonymous client's X-Team spent its count", victim)
			}
		})
	}
}

// However a value is spelled — as the subject's text, the caller's subject
// alone, the hashed element of either, in another case — the store key
// keeps it as no client's subject is kept, hashed or not.
func TestNoValueIsKeptAsAClientsSubject(t *testing.T) {
	subjects := []string{"ext:auth0|123", "ext:m|n", "ext:|", "ext:" + strings.Repeat("a", 200),
		"ext:alice", "user:alice", "user#" + strings.Repeat("0", 32), "key:" + strings.Repeat("ab", 32), "ip:192.0.2.0/24", "ip:unknown"}
	for _, sub := range subjects {
		kept := string(appendSubject(nil, sub))
		caller, _ := strings.CutPrefix(sub, "ext:")
		values := []string{sub, caller, kept, strings.ToUpper(kept), valueHash(sub), valueHash(caller),
			strings.TrimPrefix(kept, hashedSubject), strings.ReplaceAll(kept, "#", "")}
		for _, v := range values {
			for _, lower := range []bool{false, true} {
				if got := string(appendKeyValue(nil, v, lower)); got == kept {
					t.Errorf("value %q (lower %v) is kept as %q, as subject %q is", v, lower, got, sub)
				}
			}
		}
	}
}

// The key admin API names the state of a client counted by its hashed
// subject as the request sent it or as the store key keeps it ("ext#…"),
// and that of a request sending the subject's text as a value by the
// value's hash: two states, neither of which a reset of the other
// forgets.
func TestTheKeyAdminNamesAHashedSubjectApartFromAValue(t *testing.T) {
	m := teamHeaderMiddleware(t)
	const sub = "ext:auth0|123"
	want := "rule:teams/" + subjectHash(sub)
	upper := "rule:teams/ext#" + strings.ToUpper(strings.TrimPrefix(subjectHash(sub), "ext#"))
	for _, named := range []string{"rule:teams/" + sub, want, upper} {
		if got, err := m.Subject(named); err != nil || got != want {
			t.Errorf("Subject(%q) = %q, %v; want %q", named, got, err, want)
		}
	}
	res, err := m.DecideFor(context.Background(), Requester{Subject: "auth0|123"}, "GET", "/t", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimPrefix(res.ruleKeys[0], m.id.prefix); got != want {
		t.Errorf("DecideFor(auth0|123 without X-Team): rule key %q, want %q", got, want)
	}
	m.Discard(res)
	h := http.Header{"X-Team": {sub}}
	res, err = m.DecideFor(context.Background(), Requester{Subject: "other", Header: h}, "GET", "/t", 0)
	if err != nil {
		t.Fatal(err)
	}
	value := "rule:teams/" + valueHash(sub)
	if got := strings.TrimPrefix(res.ruleKeys[0], m.id.prefix); got != value {
		t.Errorf("DecideFor(X-Team: %s): rule key %q, want %q", sub, got, value)
	}
	m.Discard(res)
	if got, err := m.Subject(value); err != nil || got != value {
		t.Errorf("Subject(%q) = %q, %v; want it as it is", value, got, err)
	}
}
