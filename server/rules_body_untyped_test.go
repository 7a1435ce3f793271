package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

// A sign-in limit per account (key json:email, docs/rules.md "Sign-in
// attempts per account") exists because an attacker spreads its attempts
// over many addresses. A JSON body sent without a Content-Type is read as
// JSON by FastAPI (a body model is parsed as JSON when the request has no
// Content-Type) and by the usual Go handler (json.NewDecoder(r.Body),
// which never looks at the header): the upstream acts on the account the
// body names, and so does the limit, whatever the address.
func TestAJSONBodyWithoutAContentTypeCountsItsAccount(t *testing.T) {
	const cfg = `
identity:
  trusted_proxies: [127.0.0.1/32]
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 1000, window: 1m}
rules:
  - name: logins
    match: {methods: [POST], paths: ["/v1/login"]}
    key: [json:email]
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 2, window: 1m}
`
	var alice atomic.Int64 // sign-in attempts on alice the upstream received
	f := newFixtureOn(t, cfg, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Email string `json:"email"`
		}
		// As a Go handler (or FastAPI for a request without a
		// Content-Type) reads it: the header is not consulted.
		if json.NewDecoder(r.Body).Decode(&in) == nil && in.Email == "alice@example.com" {
			alice.Add(1)
		}
	}))
	var statuses []int
	for i := range 5 {
		body := fmt.Sprintf(" \n{\"email\":\"alice@example.com\",\"password\":\"guess-%d\"}", i)
		req, _ := http.NewRequest("POST", f.http.URL+"/v1/login", strings.NewReader(body))
		req.Header.Set("X-Forwarded-For", fmt.Sprintf("203.0.113.%d", i+1)) // a botnet: one address per attempt
		resp, err := f.http.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		statuses = append(statuses, resp.StatusCode)
	}
	if want := []int{200, 200, 429, 429, 429}; !slices.Equal(statuses, want) || alice.Load() != 2 {
		t.Errorf("attempts on alice without a Content-Type, each from another address: %v, the upstream received %d; want %v, 2 (her limit)", statuses, alice.Load(), want)
	}
}
