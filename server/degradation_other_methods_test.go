package server_test

import (
	"encoding/json"
	"net/http"
	"testing"
)

// A method /v1/degradation does not take (PATCH, OPTIONS) is a 405 with
// Allow whoever calls, before any scope is asked for, as on every admin
// endpoint (TestAdminEndpointsAnswerOtherMethods405): a 403
// insufficient_scope, scope="admin" would tell a reader that a token with
// the admin scope would be served, and a 401 a stranger that any token
// would, when no token makes the request valid.
func TestDegradationOtherMethodsAre405WhateverTheScope(t *testing.T) {
	cfg := degradeConfig + `
admin:
  loopback_scopes: []
  callers:
    - {name: reader, token_sha256: ` + sha256Hex("reader-token") + `, scopes: [read]}
`
	f := newFixture(t, cfg)
	for _, who := range []struct{ name, token string }{{"a reader", "reader-token"}, {"a stranger", ""}} {
		for _, method := range []string{http.MethodPatch, http.MethodOptions} {
			r := f.send(t, f.admin, method, "/v1/degradation", "", map[string]string{"Sluice-Token": who.token})
			var p struct{ Status int }
			err := json.NewDecoder(r.Body).Decode(&p)
			if r.StatusCode != http.StatusMethodNotAllowed || r.Header.Get("Allow") != "GET, HEAD, PUT, POST, DELETE" || err != nil || p.Status != 405 {
				t.Errorf("%s /v1/degradation by %s: %d, Allow %q, WWW-Authenticate %q; want 405 and Allow \"GET, HEAD, PUT, POST, DELETE\"",
					method, who.name, r.StatusCode, r.Header.Get("Allow"), r.Header.Get("WWW-Authenticate"))
			}
		}
	}
}
