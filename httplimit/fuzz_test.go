package httplimit

import (
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

// FuzzClientAddr: whatever the forwarding headers say, an untrusted peer is
// its own client, and a trusted peer's client is the peer or an address that
// appears in the headers.
func FuzzClientAddr(f *testing.F) {
	f.Add("198.51.100.1, 10.0.0.1", "for=192.0.2.60;proto=http, for=\"[2001:db8::1]:4711\"", "10.0.0.9", true, true)
	f.Add("unknown, _hidden", "", "203.0.113.1", false, false)
	f.Add(`"a,b", ,,`, `for="\"x"`, "::1", true, false)
	f.Fuzz(func(t *testing.T, xff, fwd, peerS string, peerTrusted bool, useForwarded bool) {
		peer, err := netip.ParseAddr(peerS)
		if err != nil {
			return
		}
		h := http.Header{}
		if xff != "" {
			h.Set("X-Forwarded-For", xff)
		}
		if fwd != "" {
			h.Set("Forwarded", fwd)
		}
		trusted := func(a netip.Addr) bool { return a == peer && peerTrusted || a.IsPrivate() }
		got := clientAddr(h, peer.Unmap(), trusted(peer.Unmap()), trusted, useForwarded)
		if !trusted(peer.Unmap()) {
			if got != peer.Unmap() {
				t.Fatalf("untrusted peer %v became %v", peer, got)
			}
			return
		}
		if got == peer.Unmap() {
			return
		}
		for _, hop := range forwardedHops(h, useForwarded) {
			if a, ok := parseHop(hop); ok && a == got {
				return
			}
		}
		t.Fatalf("client %v is neither the peer nor a hop of the headers", got)
	})
}

// FuzzIdentify: any header values give an identity with a plan, a subject of
// bounded length, and never the raw API key.
func FuzzIdentify(f *testing.F) {
	id := testIdentifier(f, Options{
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
		UserHeader:     "X-User-ID",
		PlanHeader:     "X-Plan",
		Plans:          []*Plan{{Name: "free", Limits: []sluice.Limit{sluice.GCRA(10, time.Minute).Named("m")}}},
	})
	f.Add("Bearer abcdefghijkl", "", "alice", "free", "10.0.0.1:80", "198.51.100.1")
	f.Add("Basic xyz", "key-123456789", "", "", "[::1]:1", "")
	f.Add("bearer    spaced   ", "", "{tag}", "nope", "bad", "\x00")
	f.Fuzz(func(t *testing.T, auth, apiKey, user, plan, remote, xff string) {
		r := &http.Request{Header: http.Header{}, RemoteAddr: remote}
		for k, v := range map[string]string{"Authorization": auth, "X-Api-Key": apiKey, "X-User-Id": user, "X-Plan": plan, "X-Forwarded-For": xff} {
			if v != "" {
				r.Header.Set(k, v)
			}
		}
		var got Identity
		id.identify(r, &got)
		if got.Plan == nil {
			t.Fatal("no plan")
		}
		if len(got.Subject) > 100 || len(got.Subject) > sluice.MaxKeyLen {
			t.Fatalf("subject of %d bytes: %q", len(got.Subject), got.Subject)
		}
		for _, secret := range []string{strings.TrimSpace(strings.TrimPrefix(auth, "Bearer ")), apiKey} {
			if len(secret) >= 8 && got.Kind == KindAPIKey && strings.Contains(got.Subject, secret) {
				t.Fatalf("raw key in subject %q", got.Subject)
			}
		}
	})
}
