package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
)

func TestShutdown(t *testing.T) {
	plans := "plans:\n  free:\n    limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]\n"
	for _, c := range []struct {
		yaml         string
		delay, drain time.Duration
		err          string
	}{
		{"", 0, 10 * time.Second, ""},
		{"shutdown: {delay: 5s}\n", 5 * time.Second, 10 * time.Second, ""},
		{"shutdown: {delay: 0s, drain: 30s}\n", 0, 30 * time.Second, ""},
		{"shutdown: {delay: 6m}\n", 0, 0, `c.yaml:1:19: shutdown.delay: 6m0s: give a delay from 0s to 5m`},
		{"shutdown: {delay: -1s}\n", 0, 0, `shutdown.delay: "-1s" must be positive`},
		{"shutdown: {drain: 500ms}\n", 0, 0, `c.yaml:1:19: shutdown.drain: 500ms: give a drain from 1s to 10m`},
		{"shutdown: {drain: 0s}\n", 0, 0, `shutdown.drain: "0s" must be positive`},
		{"shutdown: {linger: 1s}\n", 0, 0, `shutdown.linger`},
	} {
		cfg, err := config.Parse("c.yaml", []byte(c.yaml+plans))
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.yaml, err, c.err)
			}
		case err != nil:
			t.Errorf("%q: %v", c.yaml, err)
		case cfg.Shutdown.Delay != c.delay || cfg.Shutdown.Drain != c.drain:
			t.Errorf("%q: %+v, want delay %v, drain %v", c.yaml, cfg.Shutdown, c.delay, c.drain)
		}
	}
}
