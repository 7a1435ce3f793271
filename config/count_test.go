package config_test

import (
	"maps"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// count: on limits and rules becomes httplimit.Options.Count by name; a
// rule's limits are named "<rule>.<limit>".
func TestCountLoads(t *testing.T) {
	c, err := config.Parse("t.yaml", []byte(`
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 5, window: 1m, count: failures}
      - {name: per-day, algorithm: sliding-window-counter, quantity: 50, window: 24h}
      - {name: misses, algorithm: sliding-window-log, quantity: 20, window: 1m, count: "status:404,410"}
      - {name: tokens, algorithm: fixed-window, quantity: 9000, window: 1m, count: "header:X-Usage"}
global:
  - {name: all, algorithm: sliding-window-log, quantity: 1000, window: 1m, count: successes}
rules:
  - name: logins
    match: {paths: [/login]}
    count: failures
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 5, window: 1m}
      - {name: per-hour, algorithm: fixed-window, quantity: 20, window: 1h, count: all}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"per-minute": "failures", "all": "successes", "logins": "failures", "logins.per-hour": "all",
		"misses": "status:404,410", "tokens": "header:X-Usage"}
	if got := c.HTTPLimitOptions().Count; !maps.Equal(got, want) {
		t.Errorf("Count: %v, want %v", got, want)
	}
}

// A count that cannot be kept exactly is refused at its line, saying why.
func TestCountErrorsPointAtTheLine(t *testing.T) {
	for _, c := range []struct{ name, yaml, want string }{
		{"a token bucket", `plans:
  free:
    limits:
      - {name: burst, algorithm: token-bucket, quantity: 5, window: 1s, count: failures}
`, `t.yaml:4:80: plans.free.limits[0].count: burst cannot count only failures: a token-bucket cannot refund a request exactly`},
		{"a rule of a token bucket", `plans:
  free:
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 5, window: 1m}]
rules:
  - name: r
    count: successes
    limits: [{name: b, algorithm: gcra, quantity: 5, window: 1s}]
`, `t.yaml:6:12: rules[0].count: b cannot count only successes: a gcra cannot refund`},
		{"an unknown count", `plans:
  free:
    limits:
      - {name: m, algorithm: fixed-window, quantity: 5, window: 1m, count: errors}
`, `t.yaml:4:76: plans.free.limits[0].count: "errors" is not one of all, successes, failures`},
		{"a status that is none", `plans:
  free:
    limits:
      - {name: m, algorithm: fixed-window, quantity: 5, window: 1m, count: "status:404,4x"}
`, `t.yaml:4:76: plans.free.limits[0].count: "status:404,4x": "4x" is neither a status (100 to 599) nor a class (1xx to 5xx)`},
		{"a header that is none", `plans:
  free:
    limits:
      - {name: m, algorithm: fixed-window, quantity: 5, window: 1m, count: "header:X Used"}
`, `t.yaml:4:76: plans.free.limits[0].count: "header:X Used": "X Used" is not a header name`},
		{"two limits of one name counting differently", `plans:
  free:
    limits: [{name: m, algorithm: fixed-window, quantity: 5, window: 1m, count: failures}]
  pro:
    limits: [{name: m, algorithm: fixed-window, quantity: 50, window: 1m, count: successes}]
`, `t.yaml:5:82: plans.pro.limits[0].count: "successes": another limit named "m" says count: failures`},
		{"a limit of the name of a counted one, saying nothing", `plans:
  free:
    limits: [{name: m, algorithm: fixed-window, quantity: 5, window: 1m, count: failures}]
  pro:
    limits: [{name: m, algorithm: fixed-window, quantity: 50, window: 1m}]
`, `t.yaml:5:21: plans.pro.limits[0].name: "m" would count only failures, as plans.free.limits[0].count says of another limit of its name: ` +
			`a count belongs to a name, and limits of one name count alike (say count: "failures" here too, or name one of them apart)`},
		{"a limit saying nothing before one of its name counted", `plans:
  free:
    limits: [{name: m, algorithm: fixed-window, quantity: 5, window: 1m}]
  pro:
    limits: [{name: m, algorithm: fixed-window, quantity: 50, window: 1m, count: "status:404"}]
`, `t.yaml:3:21: plans.free.limits[0].name: "m" would count only answers of status 404, as plans.pro.limits[0].count says of another limit of its name`},
		{"a limit of the name of a rule that counts", `plans:
  free:
    limits: [{name: reports, algorithm: fixed-window, quantity: 60, window: 1m}]
rules:
  - name: reports
    count: successes
    limits: [{name: m, algorithm: fixed-window, quantity: 1, window: 1m}]
`, `t.yaml:3:21: plans.free.limits[0].name: "reports" would count only successes, as rules[0].count says of the limits of rule reports: ` +
			`a count belongs to a name, and limits of one name count alike (say count: "successes" here too, or name one of them apart)`},
		{"a leased limit", `store:
  type: redis
  redis: {addresses: ["127.0.0.1:6379"], lease: auto}
plans:
  free:
    limits: [{name: m, algorithm: fixed-window, quantity: 5, window: 1m, count: failures}]
`, `t.yaml:6:81: plans.free.limits[0].count: failures needs exact refunds, which leased quota cannot give`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := config.Parse("t.yaml", []byte(c.yaml))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error:\n%v\nwant it to contain:\n%s", err, c.want)
			}
		})
	}
	// A leased store with the limit's own lease: off is fine, and so is a
	// sliding log, which is never leased.
	if _, err := config.Parse("t.yaml", []byte(`store:
  type: redis
  redis: {addresses: ["127.0.0.1:6379"], lease: auto}
plans:
  free:
    limits: [{name: m, algorithm: fixed-window, quantity: 5, window: 1m, count: failures, lease: "off"}]
`)); err != nil {
		t.Errorf("lease: off on the counted limit: %v", err)
	}
	if _, err := config.Parse("t.yaml", []byte(`store:
  type: redis
  redis: {addresses: ["127.0.0.1:6379"], lease: auto}
plans:
  free:
    limits: [{name: m, algorithm: sliding-window-log, quantity: 5, window: 1m, count: failures}]
`)); err != nil {
		t.Errorf("a counted sliding log on a leased store: %v", err)
	}
}

// A key's own limits say nothing of counting: limits of one name count
// alike (httplimit.Options.Count is by name), so a count: on one key's
// override would count every client's limit of that name, in every plan,
// by the answer. It is refused at its line, in the configuration as in a
// keys file, and Count is left as the plans say.
func TestCountOnAKeysLimitIsRefused(t *testing.T) {
	_, err := config.Parse("k.yaml", []byte(`plans:
  free: {limits: [{name: m, algorithm: fixed-window, quantity: 10, window: 1m}]}
  pro: {limits: [{name: m, algorithm: fixed-window, quantity: 100, window: 1m}]}
keys:
  - name: k
    sha256: "1111111111111111111111111111111111111111111111111111111111111111"
    limits: [{name: m, algorithm: fixed-window, quantity: 5, window: 1m, count: failures}]
`))
	const want = "k.yaml:7:81: keys[0].limits[0].count: count: belongs on the plan's limit of this name, not on a key's: " +
		"limits of one name count alike, for every client"
	if err == nil || err.Error() != want {
		t.Fatalf("error:\n%v\nwant exactly:\n%s", err, want)
	}
}
