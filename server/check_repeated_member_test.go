package server_test

import (
	"strings"
	"testing"
)

// tenantRuleConfig limits the requests of tenant acme, by header.
const tenantRuleConfig = `
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m}
rules:
  - name: tenant
    match: {headers: [{name: X-Tenant, value: acme}]}
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 5, window: 1m}]
`

// A member given twice in a /v1/check body is read as its last, as JSON
// decoders commonly read it, "headers" too: encoding/json would merge two
// "headers" objects, so that the first's X-Tenant: acme would match the
// tenant rule though the body's last "headers" names no X-Tenant. Only the
// plan's limit applies to such a body, and the tenant rule to one whose
// last "headers" has the header.
func TestCheckReadsTheLastHeadersMember(t *testing.T) {
	f := newFixture(t, tenantRuleConfig)
	for body, rules := range map[string]int{
		`{"user":"u","headers":{"X-Tenant":"acme"},"headers":{"X-Other":"1"}}`: 0,
		`{"user":"u","headers":{"X-Tenant":"acme"},"HEADERS":{}}`:              0,
		`{"user":"u","headers":{"X-Other":"1"},"headers":{"X-Tenant":"acme"}}`: 1,
	} {
		st, m, raw := postCheck(t, f, body)
		if ls, _ := m["limits"].([]any); st != 200 || len(ls) != 1+rules {
			t.Errorf("%s: %d %s, want 200 with %d limits (the plan's, and the tenant rule's when the last headers has X-Tenant)", body, st, raw, 1+rules)
		}
	}
}

// /v1/settle, as /v1/check, refuses a header given twice under names that
// differ only in case (X-Usage-Tokens and x-usage-tokens): which value
// counts would be a map's order. The 400 spends no id: a settlement with
// the header once settles it.
func TestSettleRefusesAHeaderGivenTwice(t *testing.T) {
	f := newFixture(t, settleConfig)
	_, first, raw := postCheck(t, f, `{"subject":"batch-8","method":"POST","path":"/api/complete"}`)
	id, _ := first["settle"].(string)
	if id == "" {
		t.Fatalf("/v1/check: %s; want a settle id", raw)
	}
	r := f.do(t, "POST", "/v1/settle", `{"id":"`+id+`","status":200,"headers":{"X-Usage-Tokens":"1","x-usage-tokens":"40"}}`, nil)
	if body := readAll(t, r); r.StatusCode != 400 || !strings.Contains(body, "X-Usage-Tokens is given twice") {
		t.Errorf("two spellings of X-Usage-Tokens: %d %s, want 400", r.StatusCode, body)
	}
	r = f.do(t, "POST", "/v1/settle", `{"id":"`+id+`","status":200,"headers":{"X-Usage-Tokens":"10"}}`, nil)
	if body := readAll(t, r); r.StatusCode != 200 {
		t.Errorf("the same id settled with the header once: %d %s, want 200", r.StatusCode, body)
	}
}
