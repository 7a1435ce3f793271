package config_test

import (
	"testing"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/testpki"
)

// A file's name written empty ("", as a template renders an unset value)
// is refused at its line, never read as no file: a listener's cert_file
// and key_file as plain HTTP, an admin listener's client_ca_file as TLS
// without client certificates.
func TestTLSOfEmptyFileNamesIsRefused(t *testing.T) {
	ca := testpki.New(t, "ca")
	ca.Server(t, "srv")
	cert, key := ca.File("srv"), ca.KeyFile("srv")
	for _, c := range []struct {
		yaml, path string
		line       int
	}{
		{"tls: {cert_file: \"\", key_file: \"\"}\n", "tls.cert_file", 1},
		{"admin:\n  tls:\n    cert_file: \"\"\n    key_file: \"\"\n", "admin.tls.cert_file", 3},
		{"admin:\n  tls:\n    cert_file: " + cert + "\n    key_file: " + key + "\n    client_ca_file: \"\"\n", "admin.tls.client_ca_file", 5},
	} {
		cfg, err := config.Parse("t.yaml", []byte(c.yaml+onePlan))
		if err == nil {
			t.Errorf("%q loads: public TLS %v, admin TLS %v, admin mutual TLS %v; want it refused at %s",
				c.yaml, cfg.TLS.Enabled(), cfg.Admin.TLS.Enabled(), cfg.Admin.TLS.ClientCAFile != "", c.path)
			continue
		}
		if es := config.Errors(err); len(es) == 0 || es[0].Line != c.line || es[0].Path != c.path {
			t.Errorf("%q: %v, want an error of %s at line %d", c.yaml, err, c.path, c.line)
		}
	}
}

// keys_file: "" is refused at its line, as keys_file: with nothing is:
// read as no keys file, every key the file would list would be unknown.
// Another file's name written empty is refused once, not also as a file
// that cannot be read.
func TestAnEmptyFileNameIsRefusedOnce(t *testing.T) {
	for _, c := range []struct{ yaml, path string }{
		{"keys_file: \"\"\n", "keys_file"},
		{"settle: {secret_file: \"\"}\n", "settle.secret_file"},
		{"store: {type: redis, redis: {addresses: [\"r:6379\"], password_file: \"\"}}\n", "store.redis.password_file"},
		{"upstream: https://api.internal\nupstream_tls: {ca_file: \"\"}\n", "upstream_tls.ca_file"},
	} {
		cfg, err := config.Parse("t.yaml", []byte(c.yaml+onePlan))
		if err == nil {
			t.Errorf("%q loads (keys file %q, upstream TLS %+v); want it refused at %s", c.yaml, cfg.KeysFile, cfg.UpstreamTLS, c.path)
			continue
		}
		if es := config.Errors(err); len(es) != 1 || es[0].Path != c.path || es[0].Msg != "empty: name a file, or remove the line" {
			t.Errorf("%q: %v, want one error at %s", c.yaml, err, c.path)
		}
	}
}

// upstream: "" is refused at its line, as upstream: with nothing is: read
// as no upstream, sluice serve would answer every request with its demo
// upstream instead of proxying to the API.
func TestAnEmptyUpstreamIsRefused(t *testing.T) {
	cfg, err := config.Parse("t.yaml", []byte("upstream: \"\"\n"+onePlan))
	if err == nil {
		t.Fatalf("upstream: \"\" loads with Upstream %q (the demo upstream answers); want it refused at t.yaml:1", cfg.Upstream)
	}
	if es := config.Errors(err); len(es) != 1 || es[0].Line != 1 || es[0].Path != "upstream" {
		t.Errorf("%v, want one error at upstream, line 1", err)
	}
}

// A plan named by an empty string (a template's quoted empty value) is a
// name, of no plan, refused at its line: default_plan: "", anonymous_plan:
// "" and a key's plan: "" are never read as the field left out, which
// would put clients on another plan (anonymous clients on the default
// plan's 1,000 a second rather than their 10).
func TestAnEmptyPlanNameIsRefused(t *testing.T) {
	const plans = `plans:
  anonymous: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1s}]}
  pro: {limits: [{name: m, algorithm: gcra, quantity: 1000, window: 1s}]}
`
	for _, c := range []struct{ yaml, path string }{
		{"default_plan: pro\nanonymous_plan: \"\"\n", "anonymous_plan"},
		{"default_plan: \"\"\nanonymous_plan: anonymous\n", "default_plan"},
		{"default_plan: anonymous\nkeys:\n  - {name: k, sha256: 9f8cfdb17116bf0e2a44e071454f25594cb9b8737bf331e6a2f0b30550572f29, plan: \"\"}\n", "keys[0].plan"},
	} {
		cfg, err := config.Parse("p.yaml", []byte(plans+c.yaml))
		if err == nil {
			var keyPlan string
			for _, k := range cfg.Keys {
				keyPlan = k.Plan.Name
			}
			t.Errorf("%q loads: default plan %q, anonymous plan %q, key's plan %q; want %s refused", c.yaml,
				cfg.Policy.DefaultPlan, cfg.Policy.AnonymousPlan, keyPlan, c.path)
			continue
		}
		if es := config.Errors(err); len(es) != 1 || es[0].Path != c.path {
			t.Errorf("%q: %v, want one error at %s", c.yaml, err, c.path)
		}
	}
}
