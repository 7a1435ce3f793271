package config_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// A limit that counts by the answer (count: successes, failures, status:,
// header:) is charged when a request is admitted and refunded once the
// answer shows it does not count, so at a decision its count holds
// reservations, not use. notify judges each decision as it is made: a
// notification of such a limit would tell a billing system of use that
// never happened (one success in flight, half of a failures quota of 2
// "used") and, told once per window, keep the real crossing from being
// told. notify.limits naming one is refused at its line, the limit's own
// count: or its rule's; a limit that counts every request loads.
func TestNotifyRefusesALimitCountedByTheAnswer(t *testing.T) {
	const notify = "notify: {url: \"https://x.example/\", limits: [%s]}\n"
	for _, c := range []struct{ name, yaml, limit, want string }{
		{"a plan's failures", "plans:\n  free: {limits: [{name: per-day, algorithm: fixed-window, quantity: 2, window: 1d, count: failures}]}\n",
			"per-day", `t.yaml:3:46: notify.limits[0]: "per-day" counts failures`},
		{"a rule's status list", "plans:\n  free: {limits: [{name: per-day, algorithm: fixed-window, quantity: 2, window: 1d}]}\n" +
			"rules:\n  - name: scans\n    match: {paths: [\"/\"]}\n    key: [ip]\n    count: \"status:404\"\n" +
			"    limits: [{name: misses, algorithm: fixed-window, quantity: 5, window: 1h}]\n",
			"scans.misses", `t.yaml:9:46: notify.limits[0]: "scans.misses" counts status:404`},
		{"a header's units", "plans:\n  free: {limits: [{name: tokens, algorithm: fixed-window, quantity: 1000, window: 1d, count: \"header:X-Tokens\"}]}\n",
			"tokens", `t.yaml:3:46: notify.limits[0]: "tokens" counts header:X-Tokens`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := config.Parse("t.yaml", []byte(c.yaml+strings.Replace(notify, "%s", c.limit, 1)))
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("error:\n%v\nwant one starting:\n%s", err, c.want)
			}
		})
	}
	ok := "plans:\n  free: {limits: [{name: per-day, algorithm: fixed-window, quantity: 2, window: 1d, count: all}]}\n" +
		strings.Replace(notify, "%s", "per-day", 1)
	if _, err := config.Parse("t.yaml", []byte(ok)); err != nil {
		t.Errorf("a limit that counts every request: %v", err)
	}
}
