package server_test

import (
	"fmt"
	"strings"
	"testing"
)

// The decision API takes ip beside api_key: a key no one listed (under
// unknown_keys: ip, the default) is then the client at that address, as
// the proxy counts it, and made-up keys mint no quota; a listed key is its
// own client whatever address comes with it.
func TestDecisionAPIUnlistedKeyCountsAsItsAddress(t *testing.T) {
	f := newFixture(t, testConfig)
	allowed := func(body string) bool {
		t.Helper()
		r := f.do(t, "POST", "/v1/check", body, nil)
		b := readAll(t, r)
		if r.StatusCode != 200 {
			t.Fatalf("%s: %d %s", body, r.StatusCode, b)
		}
		return strings.Contains(b, `"allowed":true`)
	}
	var got []bool
	for i := range 5 {
		got = append(got, allowed(fmt.Sprintf(`{"api_key":"made-up-%d","ip":"192.0.2.1"}`, i)))
	}
	if fmt.Sprint(got) != "[true true true false false]" {
		t.Errorf("five made-up keys from one address: %v, want the address's 3 a minute", got)
	}
	if !allowed(`{"api_key":"demo-free-key","ip":"192.0.2.1"}`) {
		t.Error("the listed key from the spent address was refused")
	}
}
