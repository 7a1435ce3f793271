package config_test

import (
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// A list entry of nothing ("-" alone, as a template renders an empty value)
// among limits or keys was left out without a word: the plan lost a limit,
// the key list a key. It is refused at its line.
func TestAnEmptyLimitOrKeyIsRefused(t *testing.T) {
	const m = "{name: m, algorithm: gcra, quantity: 10, window: 1m}"
	for _, c := range []struct{ yaml, want string }{
		{"plans:\n  free:\n    limits:\n      - " + m + "\n      -\n",
			`e.yaml:5:8: plans.free.limits[1]: an empty entry: write the limit (name, algorithm, quantity, window), or remove the line`},
		{"plans:\n  free: {limits: [" + m + "]}\nglobal: [~]\n",
			`e.yaml:3:10: global[0]: an empty entry: write the limit (name, algorithm, quantity, window), or remove the line`},
		{"plans:\n  free: {limits: [" + m + "]}\nkeys:\n  -\n",
			`e.yaml:4:4: keys[0]: an empty entry: write the key (sha256, plan), or remove the line`},
	} {
		_, err := config.Parse("e.yaml", []byte(c.yaml))
		if err == nil || err.Error() != c.want {
			t.Errorf("%q:\n%v\nwant exactly:\n%s", c.yaml, err, c.want)
		}
	}
}
