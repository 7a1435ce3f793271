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
		{"shutdown: {delay: -1s}\n", 0, 0, `shutdown.delay: "-1s" is negative`},
		{"shutdown: {drain: 500ms}\n", 0, 0, `c.yaml:1:19: shutdown.drain: 500ms: give a drain from 1s to 10m`},
		{"shutdown: {drain: 0s}\n", 0, 0, `shutdown.drain: "0s" must be positive`},
		{"shutdown: {linger: 1s}\n", 0, 0, `shutdown.linger`},
	} {
		cfg, err := config.Parse("c.yaml", []byte(c.yaml+plans))
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.yaml, err, c.err)
			} else if n := len(config.Errors(err)); n != 1 {
				t.Errorf("%q: %d errors, want one: %v", c.yaml, n, err)
			}
		case err != nil:
			t.Errorf("%q: %v", c.yaml, err)
		case cfg.Shutdown.Delay != c.delay || cfg.Shutdown.Drain != c.drain:
			t.Errorf("%q: %+v, want delay %v, drain %v", c.yaml, cfg.Shutdown, c.delay, c.drain)
		}
	}
}

// The durations whose 0 is documented as none (response.retry_jitter: the
// exact wait; degradation.stale_for: no stale cache; shutdown.delay: stop
// at once) take it in any unit; a negative one is still an error.
func TestZeroMeansNoneInAnyUnit(t *testing.T) {
	plans := "plans:\n  free:\n    limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]\n"
	for _, zero := range []string{"0", "0s", "0ms", "0m"} {
		cfg, err := config.Parse("z.yaml", []byte(plans+"response: {retry_jitter: "+zero+"}\n"+
			"degradation: {stale_for: "+zero+"}\nshutdown: {delay: "+zero+"}\n"))
		if err != nil {
			t.Errorf("%s: %v", zero, err)
			continue
		}
		if cfg.Response.RetryJitter != 0 || cfg.Degradation.StaleFor != 0 || cfg.Shutdown.Delay != 0 {
			t.Errorf("%s: retry_jitter %v, stale_for %v, delay %v; want 0", zero, cfg.Response.RetryJitter, cfg.Degradation.StaleFor, cfg.Shutdown.Delay)
		}
	}
	_, err := config.Parse("z.yaml", []byte(plans+"response: {retry_jitter: -1s}\n"))
	if err == nil || !strings.Contains(err.Error(), `response.retry_jitter: "-1s" is negative`) {
		t.Errorf("a negative jitter: %v", err)
	}
}
