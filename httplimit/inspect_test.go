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
		Rules: []httplimit.Rule{{Name: "r", Paths: []string{"/r"}, Key: []string{httplimit.KeyRoute},
			Limits: []sluice.Limit{sluice.FixedWindow(2, time.Minute)}}},
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

// TestSubjectRoundTripsEverySubjectOfARequest: whatever subject the
// middleware keeps a client under — a decision API caller's own
// ("ext:…", any text), a hashed user id ("user#…"), a key's digest — an
// operator who copies it (from GET /v1/keys, a log) reaches that client.
func TestSubjectRoundTripsEverySubjectOfARequest(t *testing.T) {
	mw, _ := clockedMiddleware(t, httplimit.Options{
		Plans:      []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(5, time.Minute)}}},
		IPv4Prefix: 24,
		IPv6Prefix: 56,
	})
	for _, r := range []httplimit.Requester{
		{Subject: "tenant-42"},
		{Subject: "tenant/42 Ü:*"},
		{Subject: "ip:192.0.2.7"},
		{User: "bob"},
		{User: "CN=Alice Smith,O=Example"},
		{User: strings.Repeat("u", 65)},
		{APIKey: "a-key"},
		{IP: netip.MustParseAddr("192.0.2.7")},
		{IP: netip.MustParseAddr("2001:db8::1")},
	} {
		res, err := mw.DecideFor(context.Background(), r, "GET", "/", 1)
		if err != nil {
			t.Fatal(err)
		}
		sub := res.Identity.Subject
		mw.Done(context.Background(), res)
		if got, err := mw.Subject(sub); err != nil || got != sub {
			t.Errorf("Subject(%q) = %q, %v; want it as it is: %+v's requests are kept under it", sub, got, err, r)
		}
	}
}

// TestSubjectRefusesTextThatNamesNoClient: a subject no request is kept
// under would show a full quota, and resetting it would reset nothing:
// a typo reads as "all fine". Subject refuses it, and its error lists the
// subjects there are.
func TestSubjectRefusesTextThatNamesNoClient(t *testing.T) {
	mw, _ := clockedMiddleware(t, httplimit.Options{
		Plans:      []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(5, time.Minute)}}},
		IPv4Prefix: 24,
		IPv6Prefix: 56,
		Rules: []httplimit.Rule{
			{Name: "search", Paths: []string{"/api/search"}, Key: []string{httplimit.KeyRoute},
				Limits: []sluice.Limit{sluice.FixedWindow(2, time.Minute)}},
			{Name: "writes", Methods: []string{"POST"}, Key: []string{httplimit.KeyClient},
				Limits: []sluice.Limit{sluice.FixedWindow(2, time.Minute)}},
		},
	})
	for _, c := range []struct{ name, subject, says string }{
		{"a mistyped prefix", "usr:alice", "ext:<"},
		{"a name without a prefix", "alice", "user:<"},
		{"an address that is none", "ip:not-an-address", "/24"},
		{"a group of another length than the configured one", "ip:10.0.0.0/8", "/24"},
		{"an IPv6 group of another length", "ip:2001:db8::/64", "/56"},
		{"an empty user id", "user:", "user:<"},
		{"a user hash cut short", "user#0123", "32 hex"},
		{"a user hash that is no hex", "user#" + strings.Repeat("z", 32), "32 hex"},
		{"an empty decision API subject", "ext:", "ext:<"},
		{"a rule key without its values", "rule:search", "rule:<"},
		{"a rule key with empty values", "rule:search/", "rule:<"},
		{"a rule no configuration names", "rule:nope/x", `"nope"`},
		{"the key of a rule keyed by the client alone", "rule:writes/key:ab", "client"},
	} {
		got, err := mw.Subject(c.subject)
		if err == nil {
			t.Errorf("%s: Subject(%q) = %q, nil; want an error", c.name, c.subject, got)
			continue
		}
		if !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: Subject(%q): %q does not say %q", c.name, c.subject, err, c.says)
		}
	}
	_, err := mw.Subject("usr:alice")
	for _, form := range []string{"key:", "name:", "user:", "user#", "ip:", "ext:", "rule:", "*"} {
		if err == nil || !strings.Contains(err.Error(), form) {
			t.Errorf("Subject(usr:alice): %v; want the forms of a subject listed, %s among them", err, form)
		}
	}
	for _, s := range []string{"rule:search/*", "ip:192.0.2.0/24", "ip:2001:db8::/56", "ip:unknown", "*"} {
		if got, err := mw.Subject(s); err != nil || got != s {
			t.Errorf("Subject(%q) = %q, %v; want it as it is", s, got, err)
		}
	}
	// A group written as an address of it, or in capitals, is the group.
	for s, want := range map[string]string{"ip:192.0.2.7/24": "ip:192.0.2.0/24", "ip:2001:DB8::1/56": "ip:2001:db8::/56",
		"user#" + strings.Repeat("AB", 16): "user#" + strings.Repeat("ab", 16)} {
		if got, err := mw.Subject(s); err != nil || got != want {
			t.Errorf("Subject(%q) = %q, %v; want %q", s, got, err, want)
		}
	}
}
