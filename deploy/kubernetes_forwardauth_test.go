package deploy_test

import (
	"crypto/sha256"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// exampleIngressToken is the ingress-nginx caller's token whose hash the
// shipped ConfigMap holds (its comment names it).
const exampleIngressToken = "sluice_example-ingress-nginx-token-replace-me"

// TestKubernetesForwardAuthCallerIsSetUp: the NetworkPolicy lets
// ingress-nginx in to the admin listener to ask forward-auth, so the
// ConfigMap is set up for that caller: a caller with the check scope,
// whose example token is the one its comment names, and a
// response.deny_status that ingress-nginx's auth-url passes to its client
// (401 or 403; it turns any other answer but a 2xx into a 500, every
// refusal then an error page).
func TestKubernetesForwardAuthCallerIsSetUp(t *testing.T) {
	t.Parallel()
	kinds := readManifests(t)
	if !policyAdmitsIngressNginx(kinds["NetworkPolicy"]) {
		t.Skip("the NetworkPolicy names no ingress-nginx caller of the admin listener")
	}
	cm := kinds["ConfigMap"]
	if !strings.Contains(cm.Data["sluice.yaml"], exampleIngressToken) {
		t.Errorf("the ConfigMap's comments do not name the example token %q", exampleIngressToken)
	}
	cfg := servedConfig(t, cm)
	sum := sha256.Sum256([]byte(exampleIngressToken))
	if !slices.ContainsFunc(cfg.Admin.Callers, func(c config.Caller) bool {
		return c.TokenHash == sum && c.Scopes.Has(config.ScopeCheck)
	}) {
		t.Errorf("no caller of the ConfigMap holds the check scope with the token %q: ingress-nginx's forward-auth requests get 401", exampleIngressToken)
	}
	if s := cfg.Response.DenyStatus; s != http.StatusUnauthorized && s != http.StatusForbidden {
		t.Errorf("the ConfigMap's response.deny_status is %d: ingress-nginx's auth-url turns it into a 500; want 403", s)
	}
}

// policyAdmitsIngressNginx reports whether a rule of the NetworkPolicy
// names ingress-nginx's namespace as a peer.
func policyAdmitsIngressNginx(policy manifest) bool {
	for _, r := range policy.Spec.Ingress {
		for _, peer := range r.From {
			if ns := peer.NamespaceSelector; ns != nil && ns.MatchLabels["kubernetes.io/metadata.name"] == "ingress-nginx" {
				return true
			}
		}
	}
	return false
}
