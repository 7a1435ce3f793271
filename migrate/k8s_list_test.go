package migrate_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// kubectlList writes the documents of src as `kubectl get … -o yaml`
// prints several resources: one List whose items are the resources.
func kubectlList(src string) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nitems:\n")
	for _, doc := range strings.Split(src, "\n---\n") {
		for i, line := range strings.Split(strings.TrimRight(doc, "\n"), "\n") {
			if i == 0 {
				b.WriteString("- " + line + "\n")
			} else {
				b.WriteString("  " + line + "\n")
			}
		}
	}
	b.WriteString("kind: List\nmetadata:\n  resourceVersion: \"\"\n")
	return b.String()
}

// traefikCRDs are a Middleware and the IngressRoute that names it.
const traefikCRDs = `apiVersion: traefik.io/v1alpha1
kind: Middleware
metadata: {name: api-rl, namespace: shop}
spec:
  rateLimit: {average: 100, burst: 50}
---
apiVersion: traefik.io/v1alpha1
kind: IngressRoute
metadata: {name: api, namespace: shop}
spec:
  routes:
    - match: Host(` + "`shop.example.com`" + `) && PathPrefix(` + "`/api/`" + `)
      kind: Rule
      middlewares: [{name: api-rl}]
      services: [{name: api, port: 80}]
`

// TestImportKubectlList: `kubectl get … -o yaml` of several resources
// prints one List of them, the way docs/migration.md asks for Envoy
// Gateway's policies; each Kubernetes format reads the List's items as it
// reads the same resources written as documents, and Detect knows them.
func TestImportKubectlList(t *testing.T) {
	for _, c := range []struct{ format, src string }{
		{"envoy-gateway", egPolicies},
		{"ingress-nginx", ingressFile},
		{"kong", kongK8s},
		{"traefik", traefikCRDs},
	} {
		t.Run(c.format, func(t *testing.T) {
			list := kubectlList(c.src)
			if got, ok := migrate.Detect(list); !ok || got != c.format {
				t.Errorf("Detect = %q (%v), want %s", got, ok, c.format)
			}
			want, err := migrate.Import(c.format, c.src, "resources.yaml")
			if err != nil {
				t.Fatal(err)
			}
			got, err := migrate.Import(c.format, list, "resources.yaml")
			if err != nil {
				t.Fatalf("the List: %v", err)
			}
			if len(got.SluiceRules) == 0 {
				t.Errorf("the List imports no rule")
			}
			wantFiles, err := want.Files(true)
			if err != nil {
				t.Fatal(err)
			}
			gotFiles, err := got.Files(true)
			if err != nil {
				t.Fatal(err)
			}
			if gotFiles[migrate.ConfigFile] != wantFiles[migrate.ConfigFile] {
				t.Errorf("the List imports\n%s\nthe documents\n%s", gotFiles[migrate.ConfigFile], wantFiles[migrate.ConfigFile])
			}
		})
	}
}
