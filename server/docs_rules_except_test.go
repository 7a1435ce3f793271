package server

import (
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// /docs tells what a rule's except: leaves out after what it matches,
// hiding the value of a credential header.
func TestDocsTellARulesExcept(t *testing.T) {
	cfg, err := config.Parse("a.yaml", []byte(`identity: {api_key_headers: [X-API-Key]}
plans:
  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}
rules:
  - name: api
    match: {paths: [/api/]}
    except:
      - {methods: [OPTIONS]}
      - {hosts: [b.example], paths: [/api/health]}
      - {headers: [{name: X-API-Key, value: internal}]}
    limits: [{name: m, algorithm: fixed-window, quantity: 3, window: 1m}]
`))
	if err != nil {
		t.Fatal(err)
	}
	secret := func(h string) bool { return credentialHeader(cfg, h) }
	want := "any method /api/, except OPTIONS or /api/health on b.example or with a particular X-API-Key"
	if got := ruleRequests(cfg.Rules[0], secret); got != want {
		t.Errorf("ruleRequests: %q, want %q", got, want)
	}
}

// A rule whose except: names a host decides by the request's host:
// forward-auth warns of a request without one.
func TestNamesHostOfARulesExcept(t *testing.T) {
	cfg, err := config.Parse("a.yaml", []byte(`plans:
  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}
rules:
  - name: api
    except: [{hosts: [internal.example]}]
    limits: [{name: m, algorithm: fixed-window, quantity: 3, window: 1m}]
`))
	if err != nil {
		t.Fatal(err)
	}
	if !namesHost(cfg) {
		t.Error("namesHost: false for a rule whose except names a host")
	}
}
