package migrate

import (
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
)

// A rule of several alternatives, one of which names nothing (a source's
// route that takes every request), takes every request: the configuration
// says so by naming no match, which loads, rather than by an empty
// alternative, which the configuration refuses.
func TestARuleWithAnAlternativeOfEveryRequestLoads(t *testing.T) {
	for _, plans := range [][]string{nil, {"free"}} {
		tr := &Translation{
			Format: "haproxy", Source: "haproxy.cfg",
			Plans: []Plan{{Name: "free", Limits: []Limit{{Name: "per-second", Algorithm: "fixed-window", Quantity: 10, Window: time.Second}}}},
			SluiceRules: []Rule{{
				Name:   "shared",
				Any:    []RuleMatch{{Paths: []string{"/api/"}}, {}},
				Plans:  plans,
				Key:    []string{"ip"},
				Limits: []Limit{{Name: "per-minute", Algorithm: "fixed-window", Quantity: 100, Window: time.Minute}},
			}},
		}
		files, err := tr.Files(true)
		if err != nil {
			t.Fatal(err)
		}
		text := files[ConfigFile]
		if strings.Contains(text, "{}") {
			t.Errorf("plans %q: the configuration holds an empty alternative:\n%s", plans, text)
		}
		if _, err := config.Parse(ConfigFile, []byte(text)); err != nil {
			t.Errorf("plans %q: %v\n%s", plans, err, text)
		}
	}
}
