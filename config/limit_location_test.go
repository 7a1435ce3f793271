package config_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// A rule's limit whose full name ("<rule>.<limit>") is a global limit's is
// refused at that limit, not at its list (whose place is its first
// entry's): here the second limit, x, at line 9.
func TestARulesLimitThatClashesIsLocatedAtItself(t *testing.T) {
	y := onePlan + `global: [{name: r.x, algorithm: gcra, quantity: 100, window: 1s}]
rules:
  - name: r
    limits:
      - {name: y, algorithm: gcra, quantity: 1, window: 1s}
      - {name: x, algorithm: gcra, quantity: 1, window: 1s}
`
	_, err := config.Parse("r.yaml", []byte(y))
	es := config.Errors(err)
	if len(es) != 1 {
		t.Fatalf("%v, want one error", err)
	}
	if e := es[0]; e.Line != 9 || !strings.HasPrefix(e.Path, "rules[0].limits[1]") {
		t.Errorf("%v\nwant it at rules[0].limits[1], line 9 (limit x), not at line %d", e, e.Line)
	}
}

// A plan's limit named as a global limit is refused at that limit, not
// at the plan's name: here the plan's third limit, at line 6.
func TestAPlansLimitNamedLikeAGlobalOneIsLocatedAtItself(t *testing.T) {
	y := `plans:
  free:
    limits:
      - {name: per-second, algorithm: gcra, quantity: 5, window: 1s}
      - {name: per-minute, algorithm: gcra, quantity: 50, window: 1m}
      - {name: global, algorithm: gcra, quantity: 500, window: 1h}
global:
  - {name: global, algorithm: gcra, quantity: 5000, window: 1s}
`
	_, err := config.Parse("g.yaml", []byte(y))
	es := config.Errors(err)
	if len(es) != 1 {
		t.Fatalf("%v, want one error", err)
	}
	if e := es[0]; e.Line != 6 || e.Path != "plans.free.limits[2]" {
		t.Errorf("%v\nwant it at plans.free.limits[2], line 6 (the limit named global), not at line %d", e, e.Line)
	}
}
