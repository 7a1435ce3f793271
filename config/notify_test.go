package config_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

const notifyPlans = `plans:
  free:
    limits:
      - {name: per-second, algorithm: gcra, quantity: 5, window: 1s}
      - {name: per-month, algorithm: fixed-window, quantity: 1000, window: month}
rules:
  - {name: uploads, match: {paths: ["/up"]}, limits: [{name: per-day, algorithm: fixed-window, quantity: 10, window: 1d}]}
`

func TestNotify(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "hook.secret")
	os.WriteFile(secret, []byte("s3cret\n"), 0o600)
	file := filepath.Join(dir, "sluice.yaml")
	os.WriteFile(file, []byte(notifyPlans+"notify:\n  url: https://billing.example.com/hook\n  secret_file: hook.secret\n  at: [100, 80]\n  limits: [per-month, uploads.per-day]\n"), 0o644)
	c, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	n := c.Notify
	if n.URL != "https://billing.example.com/hook" || string(n.Secret) != "s3cret" || !slices.Equal(n.At, []int{80, 100}) ||
		!slices.Equal(n.Limits, []string{"per-month", "uploads.per-day"}) {
		t.Fatalf("%+v", n)
	}
	c, err = config.Parse("t.yaml", []byte(notifyPlans+"notify: {url: \"http://127.0.0.1:9/hook\", limits: [per-month]}\n"))
	if err != nil || !slices.Equal(c.Notify.At, []int{100}) {
		t.Fatalf("defaults: %v %+v", err, c.Notify)
	}
	for _, bad := range []struct{ yaml, want string }{
		{"notify: {url: \"http://billing.example.com/\", limits: [per-month]}", `notify.url: "http://billing.example.com/" is not an https:// URL (http:// only to a loopback host)`},
		{"notify: {limits: [per-month]}", "notify.url: missing"},
		{"notify: {url: \"https://x.example/\"}", "notify.limits: missing"},
		{"notify: {url: \"https://x.example/\", limits: [per-year]}", `notify.limits: "per-year" is no limit of a plan`},
		{"notify: {url: \"https://x.example/\", limits: [per-second]}", `notify.limits: "per-second" is gcra: a share of a quota is a fixed window's`},
		{"notify: {url: \"https://x.example/\", limits: [per-month], at: [0]}", "notify.at[0]: 0 is out of range [1, 100]"},
		{"notify: {url: \"https://x.example/\", limits: [per-month], at: [80, 80]}", "notify.at[1]: 80 is listed twice"},
	} {
		_, err := config.Parse("t.yaml", []byte(notifyPlans+bad.yaml+"\n"))
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v, want %s", bad.yaml, err, bad.want)
		}
	}
}
