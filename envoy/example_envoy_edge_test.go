package envoy_test

import (
	"fmt"
	"slices"
	"testing"
)

// The example Envoy listens on 0.0.0.0 in front of the API: clients connect
// to it directly, so the remote_address its rules are keyed by must be the
// client's connection, not an X-Forwarded-For entry the client wrote
// (use_remote_address: true). A client that sends the address the rules
// leave unlimited (10.0.0.1), or a new one with each request, is limited
// as the address it connects from; the blocked address stays blocked
// whatever it sends.
func TestExampleEnvoyKeysClientsByTheirConnectionNotTheirXForwardedFor(t *testing.T) {
	edge := exampleEdge(t)
	if !edge.hcm.GetUseRemoteAddress().GetValue() {
		t.Error("examples/envoy/envoy.yaml: use_remote_address is not true on the edge listener")
	}
	h := exampleRules(t)
	for _, c := range []struct {
		peer, sends string
		xff         func(i int) string
	}{
		{"203.0.113.7", "the trusted address", func(int) string { return "10.0.0.1" }},
		{"203.0.113.8", "a new address each time", func(i int) string { return fmt.Sprintf("192.0.2.%d", i%250+1) }},
		{"203.0.113.9", "a chain ending in a new address", func(i int) string { return fmt.Sprintf("10.0.0.1, 192.0.2.%d", i%250+1) }},
	} {
		refused := 0
		for i := range 101 {
			r := edgeRequest{peer: c.peer, target: "/api/orders", headers: map[string]string{"x-forwarded-for": c.xff(i)}}
			if edge.decide(h, r).GetOverallCode() == over {
				refused++
			}
		}
		if refused != 1 {
			t.Errorf("a client at %s sending %s in X-Forwarded-For: %d of 101 requests in a minute refused, want 1 (per-ip allows 100)", c.peer, c.sends, refused)
		}
	}
	r := edgeRequest{peer: "198.51.100.66", target: "/api/orders", headers: map[string]string{"x-forwarded-for": "10.0.0.1"}}
	if got := edge.decide(h, r).GetOverallCode(); got != over {
		t.Errorf("the blocked client sending X-Forwarded-For: 10.0.0.1: %v, want %v", got, over)
	}
}

// "On /login, 5 per minute per address" holds however the client spells
// /login: with a query (routes match the path without it, where a
// descriptor read from :path would carry it), a trailing slash, another
// case, dot segments (normalize_path) or doubled slashes (merge_slashes).
// Each spelling reaches the login rule, and the 6th request of one address
// within a minute, spellings mixed, is refused.
func TestExampleEnvoyLimitsLoginHoweverThePathIsSpelled(t *testing.T) {
	edge := exampleEdge(t)
	h := exampleRules(t)
	spellings := []string{"/login?next=%2F", "/login", "/login/", "/LOGIN", "/static/../login", "//login", "/api/./../login?a=1"}
	for i, target := range spellings {
		r := edgeRequest{peer: fmt.Sprintf("203.0.113.%d", 100+i), target: target}
		if names := limitNames(edge.decide(h, r)); !slices.Contains(names, "login") {
			t.Errorf("%s: limited by %q, not by login", target, names)
		}
	}
	for i, target := range spellings[:6] {
		r := edgeRequest{peer: "203.0.113.7", target: target}
		refused := edge.decide(h, r).GetOverallCode() == over
		if refused != (i == 5) {
			t.Errorf("request %d of one address to /login (%s): refused %v", i+1, target, refused)
		}
	}
	for _, target := range []string{"/loginx", "/static/login", "/api/login"} {
		r := edgeRequest{peer: "203.0.113.50", target: target}
		if names := limitNames(edge.decide(h, r)); slices.Contains(names, "login") {
			t.Errorf("%s: limited by login", target)
		}
	}
}

// The per-key limit is keyed by x-api-key-sha256, which only the
// operator's filter, once it has verified the key, may set: a copy the
// client sends is removed before the rate limit filter reads it, so a
// client can neither pick another key's quota nor mint a fresh one per
// request.
func TestExampleEnvoyIgnoresAnAPIKeyHashTheClientSends(t *testing.T) {
	edge := exampleEdge(t)
	forged := map[string]string{"x-api-key-sha256": "forged"}
	for _, r := range []edgeRequest{
		{peer: "203.0.113.7", target: "/api/orders", headers: forged},
		{peer: "203.0.113.7", target: "/login", headers: forged},
	} {
		for _, d := range edge.descriptors(r) {
			for _, e := range d.GetEntries() {
				if e.GetKey() == "api_key" {
					t.Errorf("%s with a client's x-api-key-sha256: descriptor %v sent", r.target, d)
				}
			}
		}
	}
	r := edgeRequest{peer: "203.0.113.7", target: "/api/orders", headers: forged, verified: map[string]string{"x-api-key-sha256": "verified"}}
	found := false
	for _, d := range edge.descriptors(r) {
		found = found || len(d.GetEntries()) == 1 && d.GetEntries()[0].GetKey() == "api_key" && d.GetEntries()[0].GetValue() == "verified"
	}
	if !found {
		t.Errorf("a key the operator's filter verified: descriptors %v, want [api_key=verified] among them", edge.descriptors(r))
	}
}
