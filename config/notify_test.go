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
		{"notify: {url: \"https://x.example/\", limits: [per-year]}", `notify.limits[0]: "per-year" is no limit of a plan`},
		{"notify: {url: \"https://x.example/\", limits: [per-second]}", `notify.limits[0]: "per-second" is gcra in plan free: a share of a quota is a fixed window's`},
		{"notify: {url: \"https://x.example/\", limits: [per-month], at: [0]}", "notify.at[0]: 0 is out of range [1, 100]"},
		{"notify: {url: \"https://x.example/\", limits: [per-month], at: [80, 80]}", "notify.at[1]: 80 is listed twice"},
	} {
		_, err := config.Parse("t.yaml", []byte(notifyPlans+bad.yaml+"\n"))
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v, want %s", bad.yaml, err, bad.want)
		}
	}
}

// A limit name notify.limits lists may be the name of limits of several
// plans (and of a key's own limits); the server notifies only the
// fixed-window ones. Whether the file loaded depended on which plan came
// last: with free's per-month a gcra before pro's fixed window it loaded,
// and free's clients were never notified; the other way round it was
// refused. Either order is refused, naming the limit that is no fixed
// window and where it is.
func TestNotifyJudgesEveryLimitOfAName(t *testing.T) {
	const free = "  free: {limits: [{name: per-month, algorithm: gcra, quantity: 10, window: 720h}]}\n"
	const pro = "  pro: {limits: [{name: per-month, algorithm: fixed-window, quantity: 100, window: month}]}\n"
	const notify = "notify: {url: \"https://x.example/\", limits: [per-month]}\n"
	const key = "keys:\n  - {name: acme, sha256: " + "1fbfd5e2a34698deb796eb78add256a067ec065519b8329b1eb85f5e2ef906d4" +
		", plan: pro, limits: [{name: per-month, algorithm: token-bucket, quantity: 100, window: 720h}]}\n"
	for _, c := range []struct{ name, yaml, want string }{
		{"a gcra in the first plan", "plans:\n" + free + pro + notify,
			`t.yaml:4:46: notify.limits[0]: "per-month" is gcra in plan free: a share of a quota is a fixed window's (a day's, a month's)`},
		{"a gcra in the last plan", "plans:\n" + pro + free + notify,
			`t.yaml:4:46: notify.limits[0]: "per-month" is gcra in plan free: a share of a quota is a fixed window's (a day's, a month's)`},
		{"a key's own limit", "plans:\n" + pro + key + notify,
			`t.yaml:5:46: notify.limits[0]: "per-month" is token-bucket in the limits of key acme: a share of a quota is a fixed window's (a day's, a month's)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := config.Parse("t.yaml", []byte(c.yaml))
			if err == nil || err.Error() != c.want {
				t.Fatalf("error:\n%v\nwant exactly:\n%s", err, c.want)
			}
		})
	}
}
