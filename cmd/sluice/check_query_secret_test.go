package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sluice check masks a secret carried in a URL's query as it masks a
// URL's password, in what it prints of a configuration it loads (the
// NOTIFY line's webhook, the IDENTITY line's jwks_url) and in the error of
// one it refuses: an operator pipes its output into CI logs. The other
// parameters stay readable.
func TestCheckNeverPrintsASecretOfAURLsQuery(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: w, algorithm: fixed-window, quantity: 10, window: month}]}\ndefault_plan: free\n"
	for _, c := range []struct {
		name, text string
		code       int
		want       string
	}{
		{"notify.url loaded", "notify: {url: \"https://hooks.example.com/x?v=2&token=hunter2secret\", limits: [w]}\n", 0,
			"NOTIFY  https://hooks.example.com/x?v=2&token=xxxxx at 100% of w"},
		{"jwks_url loaded", "identity:\n  jwt: {jwks_url: \"https://idp.example.com/keys?tenant=a&access_token=hunter2secret\"}\n", 0,
			"keys from https://idp.example.com/keys?tenant=a&access_token=xxxxx"},
		{"notify.url refused", "notify: {url: \"http://hooks.example.com/x?v=2&token=hunter2secret\", limits: [w]}\n", 1,
			`notify.url: "http://hooks.example.com/x?v=2&token=xxxxx" is not an https:// URL`},
		{"jwks_url refused", "identity:\n  jwt: {jwks_url: \"https:///keys?access_token=hunter2secret\"}\n", 1,
			`identity.jwt.jwks_url: "https:///keys?access_token=xxxxx" is not an https:// URL`},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "sluice.yaml")
			if err := os.WriteFile(file, []byte(plans+c.text), 0o600); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := runSluice(t, "check", file)
			if code != c.code || !strings.Contains(out+errOut, c.want) {
				t.Errorf("sluice check: exit %d, stdout %q, stderr %q; want %d and %q", code, out, errOut, c.code, c.want)
			}
			if strings.Contains(out+errOut, "hunter2") {
				t.Errorf("sluice check printed the secret:\n%s%s", out, errOut)
			}
		})
	}
}
