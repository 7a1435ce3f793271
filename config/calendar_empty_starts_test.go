package config_test

import (
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// A calendar limit's starts: left empty (as a template renders an empty
// value) is refused, as zone: left empty is, not read as no starts at all
// (months from the 1st, without a word); so are ~ and null.
func TestAnEmptyStartsIsRefused(t *testing.T) {
	for _, v := range []string{"", "~", "null"} {
		yml := "plans:\n  free:\n    limits:\n      - name: m\n        algorithm: fixed-window\n        quantity: 100\n        window: month\n        starts: " + v + "\n"
		cfg, err := config.Parse("s.yaml", []byte(yml))
		if err == nil {
			t.Errorf("starts: %q accepted, read as offset %v (months from the 1st)", v, cfg.Policy.Plans[0].Limits[0].Offset())
		}
	}
}
