package migrate_test

import "testing"

// An HTTPRoute's hostnames become its rule's hosts when each is a host name
// or *.domain. One that is neither (the Gateway API refuses it, and
// sluice's rules could not match it) does not end the import: the rule
// then counts the route's paths on every host, and the report says so.
func TestImportEnvoyGatewayHostnames(t *testing.T) {
	const policy = `
---
kind: BackendTrafficPolicy
metadata: {name: p}
spec:
  targetRefs: [{kind: HTTPRoute, name: api}]
  rateLimit:
    global:
      rules:
        - limit: {requests: 1, unit: Second}
`
	route := func(hostnames string) string {
		return "kind: HTTPRoute\nmetadata: {name: api}\nspec:\n  hostnames: " + hostnames +
			"\n  rules:\n    - matches: [{path: {type: PathPrefix, value: /api}}]\n" + policy
	}
	runImportCases(t, []importCase{{
		name:   "names and a wildcard",
		format: "envoy-gateway",
		src:    route("[api.example.com, '*.example.org']"),
		limits: []string{"placeholder: fixed-window 1000000000 per 1s (shadow)"},
		rules:  []string{"p-1 paths=[/api /api/] hosts=[api.example.com *.example.org] key=[rule] | per-second: fixed-window 1 per 1s"},
	}, {
		name:    "a hostname that is no host name",
		format:  "envoy-gateway",
		src:     route("[api.example.com, '(']"),
		limits:  []string{"placeholder: fixed-window 1000000000 per 1s (shadow)"},
		rules:   []string{"p-1 paths=[/api /api/] key=[rule] | per-second: fixed-window 1 per 1s"},
		differs: []string{`hostname "(" is not a host name`},
	}, {
		name:    "a hostname with a port",
		format:  "envoy-gateway",
		src:     route("['api.example.com:8080']"),
		limits:  []string{"placeholder: fixed-window 1000000000 per 1s (shadow)"},
		rules:   []string{"p-1 paths=[/api /api/] key=[rule] | per-second: fixed-window 1 per 1s"},
		differs: []string{`hostname "api.example.com:8080" is not a host name`},
	}})
}
