package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/client"
)

const checkRulesConfig = testConfig + testAdmin + `
rules:
  - name: tenants
    key: ["header:X-Tenant"]
    fallback: skip
    cost: 1 # a request, whatever its plan cost (POST /api/generate's 2 would exceed the limit)
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 1, window: 1m}]
  - name: search
    match: {paths: [/api/search]}
    key: ["query:tenant"]
    fallback: skip
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 1, window: 1m}]
  - name: beta
    match: {hosts: [beta.example.com], headers: [{name: X-Beta, value: "1"}]}
    key: [host]
    cost: 1
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 1, window: 1m}]
`

// The decision API's caller states the request's host and headers, for the
// rules that match or are keyed by them; it vouches for them as for user
// and ip. Without them those rules see no header and no host.
func TestDecisionAPIRulesReadTheStatedHostAndHeaders(t *testing.T) {
	f := newFixture(t, checkRulesConfig)
	check := func(body string) client.CheckResponse {
		t.Helper()
		resp := f.do(t, "POST", "/v1/check", body, nil)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", body, resp.StatusCode, b)
		}
		var out client.CheckResponse
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	names := func(out client.CheckResponse) string {
		var n []string
		for _, l := range out.Limits {
			n = append(n, l.Name)
		}
		return strings.Join(n, ",")
	}
	for i, tenant := range []string{"acme", "globex"} {
		out := check(`{"subject":"s` + string(rune('1'+i)) + `","headers":{"x-tenant":"` + tenant + `"}}`)
		if !out.Allowed || names(out) != "per-minute,tenants.per-minute" {
			t.Errorf("tenant %s's first check: allowed %v, limits %s", tenant, out.Allowed, names(out))
		}
	}
	if out := check(`{"subject":"s3","headers":{"X-Tenant":"acme"}}`); out.Allowed || out.Violated[0] != "tenants.per-minute" {
		t.Errorf("acme's second check: %+v", out)
	}
	if out := check(`{"subject":"s4"}`); !out.Allowed || names(out) != "per-minute" {
		t.Errorf("no tenant: allowed %v, limits %s", out.Allowed, names(out))
	}
	beta := `{"subject":"s5","host":"beta.example.com","headers":{"X-Beta":"1"}}`
	if out := check(beta); !out.Allowed || names(out) != "per-minute,beta.per-minute" {
		t.Errorf("beta's first check: allowed %v, limits %s", out.Allowed, names(out))
	}
	if out := check(strings.Replace(beta, "s5", "s6", 1)); out.Allowed {
		t.Errorf("beta's second check: %+v", out)
	}
	if out := check(`{"subject":"s7","host":"www.example.com","headers":{"X-Beta":"1"}}`); names(out) != "per-minute" {
		t.Errorf("another host: limits %s", names(out))
	}
}

// A check's path may carry the request's query, as a request URI does:
// the path alone selects the endpoint's cost, and rules keyed by a query
// parameter read it.
func TestDecisionAPIPathMayCarryAQuery(t *testing.T) {
	f := newFixture(t, checkRulesConfig)
	check := func(body string) string {
		t.Helper()
		return readAll(t, f.do(t, "POST", "/v1/check", body, nil))
	}
	if out := check(`{"subject":"q1","method":"POST","path":"/api/generate?stream=1"}`); !strings.Contains(out, `"cost":2`) {
		t.Errorf("the endpoint's cost of a path with a query: %s", out)
	}
	for i, tenant := range []string{"acme", "globex"} {
		out := check(`{"subject":"q` + string(rune('2'+i)) + `","path":"/api/search?tenant=` + tenant + `&page=2"}`)
		if !strings.Contains(out, `"allowed":true`) || !strings.Contains(out, `"search.per-minute"`) {
			t.Errorf("tenant %s's first search: %s", tenant, out)
		}
	}
	if out := check(`{"subject":"q4","path":"/api/search?page=3&tenant=acme"}`); !strings.Contains(out, `"violated":["search.per-minute"]`) {
		t.Errorf("acme's second search: %s", out)
	}
}
