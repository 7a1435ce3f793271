package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A configuration that sluice serve would refuse is not valid to sluice
// check either, though the file itself loads: a rule file of the envoy
// section that does not load, a TLS certificate that is no certificate.
// A good envoy section is summed up on an ENVOY line.
func TestCheckRefusesWhatServeRefuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const plans = "plans:\n  free:\n    limits:\n      - {name: per-minute, algorithm: fixed-window, quantity: 3, window: 1m}\n"
	write("bad-rules.yaml", "domain: api\ndescriptors:\n  - key: remote_address\n    rate_limit: {unit: minute, requests_per_unit: -5}\n")
	write("rules.yaml", "domain: api\ndescriptors:\n  - key: remote_address\n    rate_limit: {unit: minute, requests_per_unit: 5}\n")
	write("junk.pem", "not a certificate\n")
	for _, c := range []struct {
		name, config, stderr, stdout string
	}{
		{"envoy rules that do not load", plans + "envoy: {listen: 127.0.0.1:8081, rules: [bad-rules.yaml]}\n",
			"bad-rules.yaml:4:51: descriptors[0].rate_limit.requests_per_unit: -5 is out of range", ""},
		{"a certificate that is none", plans + "tls: {cert_file: junk.pem, key_file: junk.pem}\n",
			"sluice.yaml:5:6: tls: cert_file " + filepath.Join(dir, "junk.pem") + " with key_file", ""},
		{"an admin certificate that is none", plans + "admin: {listen: 127.0.0.1:9090, tls: {cert_file: junk.pem, key_file: junk.pem}}\n",
			"sluice.yaml:5:38: admin.tls: cert_file " + filepath.Join(dir, "junk.pem") + " with key_file", ""},
		{"good envoy rules", plans + "envoy: {listen: 127.0.0.1:8081, rules: [rules.yaml]}\n",
			"", "ENVOY  " + filepath.Join(dir, "rules.yaml") + ": domains api\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := write("sluice.yaml", c.config)
			var out, errOut bytes.Buffer
			code := run(context.Background(), []string{"check", file}, &out, &errOut)
			if c.stderr == "" {
				if code != 0 || !strings.Contains(out.String(), c.stdout) {
					t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s\nwant 0 and %q", code, out.String(), errOut.String(), c.stdout)
				}
				return
			}
			if code != 1 || !strings.Contains(errOut.String(), c.stderr) || !strings.Contains(errOut.String(), "sluice.yaml is not valid") {
				t.Errorf("exit %d, stderr:\n%s\nwant 1 and %q", code, errOut.String(), c.stderr)
			}
		})
	}
}

// A link to nothing in a rules folder is skipped by the server with a
// warning in its log; sluice check names it on the ENVOY line, where the
// operator checking the configuration reads, and logs nothing of it to
// the process's default logger (which the server's log is not).
func TestCheckNamesARulesLinkToNothing(t *testing.T) {
	dir := t.TempDir()
	rules := filepath.Join(dir, "rules")
	if err := os.Mkdir(rules, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rules, "api.yaml"), []byte("domain: api\ndescriptors:\n  - key: remote_address\n    rate_limit: {unit: minute, requests_per_unit: 5}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(rules, "gone.yaml")
	if err := os.Symlink(filepath.Join(dir, "nowhere.yaml"), dangling); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "sluice.yaml")
	config := "plans:\n  free:\n    limits:\n      - {name: per-minute, algorithm: fixed-window, quantity: 3, window: 1m}\n" +
		"envoy: {listen: 127.0.0.1:8081, rules: [rules]}\n"
	if err := os.WriteFile(file, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut, logged bytes.Buffer
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewTextHandler(&logged, nil)))
	if code := run(context.Background(), []string{"check", file}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut.String())
	}
	if logged.Len() > 0 {
		t.Errorf("check logged to the default logger:\n%s", logged.String())
	}
	if want := "ENVOY  " + rules + ": domains api; skipped, a link to nothing: " + dangling + "\n"; !strings.Contains(out.String(), want) {
		t.Errorf("stdout:\n%s\nwant %q", out.String(), want)
	}
}
