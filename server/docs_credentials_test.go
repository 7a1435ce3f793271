package server_test

import (
	"strings"
	"testing"
)

// A rule may match one client by the value of a header that carries a
// credential (an API key, a bearer token, a cookie) or an identity a
// trusted layer sets (the user and plan headers): the public /docs tells
// the rule's requests without that value, which would hand the credential
// to anyone who reads the page. Other header values (a Content-Type) are
// told as written.
func TestPublicDocsTellNoCredentialOfARule(t *testing.T) {
	secrets := []string{"SuperSecretKey123", "SecretToken456", "session=s3cr3t", "ProxySecret789", "alice-admin", "vip-plan"}
	cfg := strings.Replace(testConfig, "  trusted_proxies: [127.0.0.1/32]\n",
		"  trusted_proxies: [127.0.0.1/32]\n  user_header: X-User\n  plan_header: X-Plan\n  api_key_headers: [X-API-Key, X-Partner-Key]\n", 1) + `rules:
  - name: partner
    match:
      headers: [{name: x-partner-key, value: SuperSecretKey123}]
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 10, window: 1m}]
  - name: internal
    match:
      headers: [{name: Authorization, value: "Bearer SecretToken456"}]
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 10, window: 1m}]
  - name: session
    match:
      headers: [{name: Cookie, value: "session=s3cr3t"}]
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 10, window: 1m}]
  - name: proxy
    match:
      headers: [{name: Proxy-Authorization, value: "Basic ProxySecret789"}]
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 10, window: 1m}]
  - name: admin
    match:
      headers: [{name: X-User, value: alice-admin}, {name: X-Plan, value: vip-plan}]
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 10, window: 1m}]
  - name: json
    match:
      headers: [{name: Content-Type, value: application/json}]
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 10, window: 1m}]
`
	f := newFixture(t, cfg)
	page := readAll(t, f.do(t, "GET", "/docs", "", nil))
	told := 0
	for _, s := range secrets {
		if strings.Contains(page, s) {
			told++
			t.Errorf("/docs tells %q", s)
		}
	}
	t.Logf("%d of %d credentials told", told, len(secrets))
	for _, want := range []string{"with a particular x-partner-key", "with a particular Authorization", "with a particular Cookie",
		"with a particular Proxy-Authorization", "with a particular X-User with a particular X-Plan", "with Content-Type: application/json"} {
		if !strings.Contains(page, want) {
			t.Errorf("/docs lacks %q", want)
		}
	}
}
