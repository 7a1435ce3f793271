package config_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// TestLogRoomWarningNamesTheLogTooLongForTheStore: a memory store whose
// max_keys is below 128 times a sliding log's or concurrency limit's
// quantity is warned of, naming the limit and the max_keys it needs; one
// large enough, a Redis store and a policy without logs are not.
func TestLogRoomWarningNamesTheLogTooLongForTheStore(t *testing.T) {
	const plans = `
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 1000000, window: 1m}
      - {name: per-day, algorithm: sliding-window-log, quantity: 100000, window: 24h}
default_plan: free
`
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"default max_keys", plans, "store.max_keys (1000000) is less than 128 times the quantity of the longest sliding log or concurrency limit, per-day of plan free (100000)"},
		{"max_keys 12800000", "store: {type: memory, max_keys: 12800000}\n" + plans, ""},
		{"max_keys 12799999", "store: {type: memory, max_keys: 12799999}\n" + plans, "set store.max_keys to at least 12800000"},
		{"a rule's log", `
plans:
  free:
    limits: [{name: per-minute, algorithm: gcra, quantity: 10, window: 1m}]
default_plan: free
store: {type: memory, max_keys: 1000}
rules:
  - name: logins
    match: {paths: ["/login"]}
    limits: [{name: per-hour, algorithm: sliding-window-log, quantity: 20, window: 1h}]
`, "per-hour of rule logins (20)"},
		{"no log", "store: {type: memory, max_keys: 10}\nplans:\n  free:\n    limits: [{name: per-minute, algorithm: gcra, quantity: 100000, window: 1m}]\ndefault_plan: free\n", ""},
		{"redis", "store: {type: redis, redis: {addresses: ['127.0.0.1:6379']}}\n" + plans, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Parse("sluice.yaml", []byte(tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			got := cfg.LogRoomWarning()
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("LogRoomWarning() = %q, want %q", got, tc.want)
			}
		})
	}
}
