package config_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// envoy.rules names files and directories: an empty entry (which would
// be the configuration's own folder, sluice.yaml included) and one listed
// twice (whose domains would each be defined twice) are refused at their
// line.
func TestEnvoyRulesEntriesAreRefusedEmptyOrTwice(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	for _, c := range []struct{ yaml, want string }{
		{"envoy: {rules: \"\"}\n", `t.yaml:1:16: envoy.rules: empty: name a rules file or directory`},
		{"envoy: {rules: [a.yaml, \"\"]}\n", `t.yaml:1:25: envoy.rules[1]: empty: name a rules file or directory`},
		{"envoy: {rules: [a.yaml, ./a.yaml]}\n", `t.yaml:1:25: envoy.rules[1]: "./a.yaml" is envoy.rules[0] ("a.yaml") again`},
	} {
		_, err := config.Parse("t.yaml", []byte(c.yaml+plans))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %s", c.yaml, err, c.want)
		}
	}
	if _, err := config.Parse("t.yaml", []byte("envoy: {rules: [a.yaml, rules.d]}\n"+plans)); err != nil {
		t.Errorf("two rules paths: %v", err)
	}
}
