package config_test

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
)

// degradation.retry_after is how long every shed client is told to wait,
// and degradation.min_dwell how long a level is held once entered, its
// signals cleared or not: past an hour, clients stay away and refusals go
// on long after an overload ends, so each is refused above 1h at its line.
func TestDegradationWaitsAreBounded(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	for _, c := range []struct{ yaml, want string }{
		{"degradation: {retry_after: 1d}\n",
			`d.yaml:3:28: degradation.retry_after: 24h0m0s, more than 1h: every client shed would be told to stay away that long, ` +
				`long after an overload ends (pin a level through /v1/degradation to refuse for longer)`},
		{"degradation: {min_dwell: 1h0m1s}\n",
			`d.yaml:3:26: degradation.min_dwell: 1h0m1s, more than 1h: a level would go on refusing that long after its signals clear ` +
				`(pin a level through /v1/degradation to hold it longer)`},
	} {
		_, err := config.Parse("d.yaml", []byte(plans+c.yaml))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n%v\nwant exactly:\n%s", c.yaml, err, c.want)
		}
	}
	c, err := config.Parse("d.yaml", []byte(plans+"degradation: {retry_after: 1h, min_dwell: 1h}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Degradation.RetryAfter != time.Hour || c.Degradation.Controller.MinDwell != time.Hour {
		t.Errorf("retry_after %v, min_dwell %v; want 1h each", c.Degradation.RetryAfter, c.Degradation.Controller.MinDwell)
	}
}
