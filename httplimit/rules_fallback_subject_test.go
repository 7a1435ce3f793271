package httplimit_test

import (
	"context"
	"fmt"
	"net/netip"
	"testing"

	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// A rule's default fallback, ip, stands for an absent key value with the
// client's address (Rule.Fallback, docs/rules.md). A decision API caller
// naming its client by a user, an API key or a subject gives no address
// (the decision API refuses ip beside them), and a body field is always
// absent there: the fallback then keys each client by its own subject,
// never by one count every such client shares, which only fallback:
// shared asks for. Given an address, the fallback is the address: one
// count for the address, whoever is at it.
func TestAnIPFallbackWithoutAnAddressKeysEachClientApart(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name     string
		clients  [2]httplimit.Requester
		together bool
	}{
		{"users without an address", [2]httplimit.Requester{{User: "alice"}, {User: "bob"}}, false},
		{"subjects without an address", [2]httplimit.Requester{{Subject: "tenant-a"}, {Subject: "tenant-b"}}, false},
		{"API keys without an address", [2]httplimit.Requester{{APIKey: "key-a"}, {APIKey: "key-b"}}, false},
		{"two users at one address", [2]httplimit.Requester{
			{User: "alice", IP: netip.MustParseAddr("192.0.2.7")},
			{User: "bob", IP: netip.MustParseAddr("192.0.2.7")}}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := memory.New()
			defer store.Close()
			mw := signInRule(t, store, 1)
			var allowed []bool
			for _, who := range c.clients {
				res, err := mw.DecideFor(ctx, who, "POST", "/v1/login", -1)
				if err != nil {
					t.Fatal(err)
				}
				allowed = append(allowed, res.Decision.Allowed)
				mw.Done(ctx, res)
			}
			want := []bool{true, !c.together}
			if fmt.Sprint(allowed) != fmt.Sprint(want) {
				t.Errorf("first sign-in attempt of each (1 an hour per account, fallback ip): allowed %v, want %v", allowed, want)
			}
		})
	}
}

// A client without an address keeps its own count under the ip fallback
// however long its subject: a caller's subject longer than a store key
// keeps as it is is hashed, as under the key "client", and two such
// clients still count apart.
func TestAnIPFallbackKeysLongSubjectsApart(t *testing.T) {
	store := memory.New()
	defer store.Close()
	mw := signInRule(t, store, 1)
	ctx := context.Background()
	long := make([]byte, 200)
	for i := range long {
		long[i] = 'a'
	}
	for _, sub := range []string{string(long) + "1", string(long) + "2"} {
		res, err := mw.DecideFor(ctx, httplimit.Requester{Subject: sub}, "POST", "/v1/login", -1)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Decision.Allowed {
			t.Errorf("the first attempt of a client of a long subject is refused by %v", res.Decision.Violated)
		}
		mw.Done(ctx, res)
	}
}
