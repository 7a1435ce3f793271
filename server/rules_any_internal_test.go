package server

import (
	"testing"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
)

// A rule whose match is a list of alternatives is read by each of them:
// its hosts name a host (forward-auth warns of a request without one),
// /docs tells each alternative's requests, and its routes are apart.
func TestRuleAlternativesInTheServer(t *testing.T) {
	cfg, err := config.Parse("a.yaml", []byte(`plans:
  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}
rules:
  - name: api
    match:
      - {paths: [/orders]}
      - {methods: [POST], hosts: [b.example], paths: [/billing]}
    key: [route]
    limits: [{name: m, algorithm: fixed-window, quantity: 3, window: 1m}]
`))
	if err != nil {
		t.Fatal(err)
	}
	if !namesHost(cfg) {
		t.Error("namesHost: false for a rule whose second alternative names a host")
	}
	r := cfg.Rules[0]
	if got, want := ruleRequests(r, func(string) bool { return false }), "any method /orders or POST /billing on b.example"; got != want {
		t.Errorf("ruleRequests: %q, want %q", got, want)
	}
	if got, want := ruleKey(r, cfg.Identity.IPv6Prefix), "all clients together, each route apart"; got != want {
		t.Errorf("ruleKey: %q, want %q", got, want)
	}
	if got, want := ruleKey(httplimit.Rule{Key: []string{"route"}, Any: []httplimit.Match{{Paths: []string{"/a"}}}}, 64), "all clients together"; got != want {
		t.Errorf("ruleKey of one route: %q, want %q", got, want)
	}
}
