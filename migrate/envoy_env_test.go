package migrate_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// envoyDeployment is a Deployment of envoyproxy/ratelimit whose container
// sets the response headers' settings: two in env, one from a ConfigMap
// of settings (envFrom) that the manifest holds too.
const envoyDeployment = `apiVersion: v1
kind: ConfigMap
metadata:
  name: ratelimit-env
data:
  LIMIT_RESET_HEADER: X-RateLimit-Reset
  USE_STATSD: "false"
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: ratelimit
spec:
  template:
    spec:
      containers:
        - name: statsd-exporter
          image: prom/statsd-exporter
        - name: ratelimit
          image: envoyproxy/ratelimit:master
          envFrom:
            - configMapRef: {name: ratelimit-env}
          env:
            - {name: LIMIT_RESPONSE_HEADERS_ENABLED, value: "true"}
            - {name: LIMIT_LIMIT_HEADER, value: X-RateLimit-Limit}
            - {name: RUNTIME_ROOT, value: /data}
`

// envoyHeaders returns the text of the translation's differences about
// the response headers.
func envoyHeaders(tr *migrate.Translation) string {
	var b strings.Builder
	for _, d := range tr.Differences {
		if d.Where == "response headers" {
			b.WriteString(d.Text + "\n")
		}
	}
	return b.String()
}

// A Kubernetes manifest of envoyproxy/ratelimit — its rules' ConfigMap
// and its Deployment, in one file (several documents, or the List that
// kubectl get configmap,deployment -o yaml prints), in any order — is
// read whole: the rules from the ConfigMap, and the Deployment's
// LIMIT_RESPONSE_HEADERS_ENABLED, LIMIT_LIMIT_HEADER,
// LIMIT_REMAINING_HEADER and LIMIT_RESET_HEADER (env, or envFrom a
// ConfigMap of the manifest) as the envoy section that sends the same
// headers: headers: draft-6 and the names that are not the defaults.
func TestImportEnvoyDeploymentHeaderSettings(t *testing.T) {
	list := "apiVersion: v1\nkind: List\nitems:\n"
	for _, doc := range strings.Split(envoyDeployment+"---\n"+envoyConfigMap, "---\n") {
		list += "  - " + strings.ReplaceAll(strings.TrimSuffix(doc, "\n"), "\n", "\n    ") + "\n"
	}
	for name, src := range map[string]string{
		"the ConfigMap first":  envoyConfigMap + "---\n" + envoyDeployment,
		"the Deployment first": envoyDeployment + "---\n" + envoyConfigMap,
		"a List":               list,
	} {
		tr, err := migrate.Import("envoy", src, "ratelimit.yaml")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if files, err := tr.Files(false); err != nil || !strings.Contains(files[migrate.EnvoyRulesFile], "domain: rl") {
			t.Errorf("%s: the rules file is not the ConfigMap's (%v):\n%s", name, err, files[migrate.EnvoyRulesFile])
		}
		got := envoyHeaders(tr)
		for _, want := range []string{"headers: draft-6", "limit_header: X-RateLimit-Limit", "reset_header: X-RateLimit-Reset", "Deployment ratelimit"} {
			if !strings.Contains(got, want) {
				t.Errorf("%s: the response headers' translation does not say %q:\n%s", name, want, got)
			}
		}
		if strings.Contains(got, "remaining_header") {
			t.Errorf("%s: a default name is renamed:\n%s", name, got)
		}
		cfg := load(t, tr, false)
		if e := cfg.Envoy; e.Headers != "draft-6" || e.LimitHeader != "X-RateLimit-Limit" || e.RemainingHeader != "RateLimit-Remaining" || e.ResetHeader != "X-RateLimit-Reset" {
			t.Errorf("%s: the configuration's envoy section is %+v", name, e)
		}
	}
}

// Without LIMIT_RESPONSE_HEADERS_ENABLED (or with it false)
// envoyproxy/ratelimit sends no headers: headers: none, and a name it
// sets changes nothing. A value that is no boolean, which stops
// envoyproxy/ratelimit from starting, is refused.
func TestImportEnvoyDeploymentWithoutHeaders(t *testing.T) {
	for name, env := range map[string]string{
		"unset": `            - {name: LIMIT_LIMIT_HEADER, value: X-RateLimit-Limit}`,
		"false": `            - {name: LIMIT_RESPONSE_HEADERS_ENABLED, value: "False"}`,
	} {
		src := envoyConfigMap + `---
apiVersion: apps/v1
kind: Deployment
metadata: {name: ratelimit}
spec:
  template:
    spec:
      containers:
        - name: ratelimit
          image: envoyproxy/ratelimit:master
          env:
` + env + "\n"
		tr, err := migrate.Import("envoy", src, "ratelimit.yaml")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := envoyHeaders(tr); !strings.Contains(got, "headers: none") || strings.Contains(got, "limit_header:") {
			t.Errorf("%s: want headers: none and no name:\n%s", name, got)
		}
		if cfg := load(t, tr, false); cfg.Envoy.Headers != "none" {
			t.Errorf("%s: the configuration's envoy.headers is %q, want none", name, cfg.Envoy.Headers)
		}
	}
	src := envoyConfigMap + `---
apiVersion: apps/v1
kind: Deployment
metadata: {name: ratelimit}
spec:
  template:
    spec:
      containers:
        - name: ratelimit
          image: envoyproxy/ratelimit:master
          env:
            - {name: LIMIT_RESPONSE_HEADERS_ENABLED, value: "enabled"}
`
	if _, err := migrate.Import("envoy", src, "ratelimit.yaml"); err == nil || !strings.Contains(err.Error(), "LIMIT_RESPONSE_HEADERS_ENABLED") {
		t.Errorf("a setting that is no boolean: err = %v", err)
	}
}

// A container whose environment comes through envFrom from a Secret, or
// from a ConfigMap the manifest does not hold, may set
// LIMIT_RESPONSE_HEADERS_ENABLED there: the report says the response
// headers' settings were not read, and the configuration names no
// headers value, rather than stating that envoyproxy/ratelimit sends none.
func TestHeaderSettingsFromASecretAreReportedNotRead(t *testing.T) {
	for name, from := range map[string]string{
		"a Secret":                    `            - secretRef: {name: ratelimit-env}`,
		"a ConfigMap not in the file": `            - configMapRef: {name: ratelimit-env}`,
	} {
		src := envoyConfigMap + `---
apiVersion: apps/v1
kind: Deployment
metadata: {name: ratelimit}
spec:
  template:
    spec:
      containers:
        - name: ratelimit
          image: envoyproxy/ratelimit:master
          envFrom:
` + from + `
          env:
            - {name: RUNTIME_ROOT, value: /data}
`
		tr, err := migrate.Import("envoy", src, "ratelimit.yaml")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := envoyHeaders(tr)
		if strings.Contains(got, "does not set LIMIT_RESPONSE_HEADERS_ENABLED") || !strings.Contains(got, "outside the file") {
			t.Errorf("envFrom %s: the settings it may hold are not reported as not read:\n%s", name, got)
		}
		if cfg := load(t, tr, false); cfg.Envoy.Headers == "none" {
			t.Errorf("envFrom %s: the configuration says headers: none, though LIMIT_RESPONSE_HEADERS_ENABLED may be true there", name)
		}
	}
}
