package migrate_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestIngressNginxGlobalRateLimitIsReported: ingress-nginx's global rate
// limit (global-rate-limit per global-rate-limit-window, counted in
// memcached for every replica) is a limit the import does not write; an
// Ingress with it beside limit-rps must say so, not lose it without a word,
// and one with only it must be refused naming it.
func TestIngressNginxGlobalRateLimitIsReported(t *testing.T) {
	src := `kind: Ingress
metadata:
  name: api
  namespace: shop
  annotations:
    nginx.ingress.kubernetes.io/limit-rps: "10"
    nginx.ingress.kubernetes.io/global-rate-limit: "1000"
    nginx.ingress.kubernetes.io/global-rate-limit-window: "1m"
spec:
  rules: [{host: api.example.com}]
`
	tr, err := migrate.Import("ingress-nginx", src, "ingress.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := findDifference(tr, "Ingress shop/api global-rate-limit", "not imported"); !ok || d.Same {
		t.Errorf("global-rate-limit 1000 per 1m is not reported as not imported: %+v", tr.Differences)
	}
	only := strings.Replace(src, "    nginx.ingress.kubernetes.io/limit-rps: \"10\"\n", "", 1)
	_, err = migrate.Import("ingress-nginx", only, "ingress.yaml")
	if err == nil || !strings.Contains(err.Error(), "global-rate-limit") {
		t.Errorf("an Ingress with only global-rate-limit: %v, want an error naming global-rate-limit", err)
	}
}
