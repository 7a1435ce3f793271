package httplimit_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// TestSubjectNamesTheClientAsItsRequestsAreKept: an operator names a
// client as it is seen: an address, which the middleware groups by its
// prefixes; a user id, which it hashes when it is not plain; an API key's
// SHA-256 as a tool prints it, in capitals. Subject returns the subject
// its requests are kept under, so that inspecting and resetting it reach
// its state, not a key no request uses.
func TestSubjectNamesTheClientAsItsRequestsAreKept(t *testing.T) {
	mw, _ := clockedMiddleware(t, httplimit.Options{
		Plans:      []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(5, time.Minute)}}},
		IPv4Prefix: 24,
		UserHeader: "X-User",
	})
	sum := sha256.Sum256([]byte("a-key"))
	digest := hex.EncodeToString(sum[:])
	for _, c := range []struct {
		requester httplimit.Requester
		named     string
	}{
		{httplimit.Requester{IP: netip.MustParseAddr("192.0.2.7")}, "ip:192.0.2.7"},
		{httplimit.Requester{IP: netip.MustParseAddr("2001:db8::1")}, "ip:2001:db8::1"},
		{httplimit.Requester{IP: netip.MustParseAddr("192.0.2.7")}, "ip:::ffff:192.0.2.9"},
		{httplimit.Requester{User: "CN=Alice Smith,O=Example"}, "user:CN=Alice Smith,O=Example"},
		{httplimit.Requester{User: "bob"}, "user:bob"},
		{httplimit.Requester{APIKey: "a-key"}, "key:" + strings.ToUpper(digest)},
	} {
		res, err := mw.DecideFor(context.Background(), c.requester, "GET", "/", 2)
		if err != nil {
			t.Fatal(err)
		}
		want := res.Identity.Subject
		mw.Done(context.Background(), res)
		got, err := mw.Subject(c.named)
		if err != nil || got != want {
			t.Errorf("Subject(%q) = %q, %v; want %q, the subject of its requests", c.named, got, err, want)
			continue
		}
		states, err := mw.Inspect(context.Background(), got, "")
		if err != nil || len(states) != 1 || states[0].Used < 2 {
			t.Errorf("Inspect(%q): %+v, %v; want the 2 units its requests spent", got, states, err)
		}
	}
	for _, s := range []string{"ip:192.0.2.0/24", "user:bob", "key:" + digest, "ip:unknown", "*", "rule:r/x"} {
		if got, err := mw.Subject(s); err != nil || got != s {
			t.Errorf("Subject(%q) = %q, %v; want it as it is", s, got, err)
		}
	}
	// A key's subject is its SHA-256 in hex: anything else after "key:"
	// (a key itself, a digest cut short) names no client and is an error,
	// not the full quota of a subject no request uses.
	for _, s := range []string{"key:zz", "key:" + digest[:63], "key:a-key", "key:" + digest + "0", "key:" + strings.Repeat("g", 64)} {
		if got, err := mw.Subject(s); err == nil {
			t.Errorf("Subject(%q) = %q, nil; want an error", s, got)
		}
	}
}
