package config_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// A syntax error is reported at the line of the offending text, not at
// the start of the list or mapping it breaks (which yaml.v3 names): here
// line 19, indented one space too few, rather than line 14, where pro's
// list of limits starts.
func TestAMisindentedLineIsReportedAtItsLine(t *testing.T) {
	y := `plans:
  free:
    limits:
      - name: per-second
        algorithm: gcra
        quantity: 5
        window: 1s
      - name: per-day
        algorithm: fixed-window
        quantity: 1000
        window: 24h
  pro:
    limits:
      - name: per-second
        algorithm: gcra
        quantity: 50
        window: 1s
      - name: per-day
       algorithm: fixed-window
        quantity: 100000
        window: 24h
`
	_, err := config.Parse("p.yaml", []byte(y))
	es := config.Errors(err)
	if len(es) != 1 {
		t.Fatalf("%v, want one syntax error", err)
	}
	if es[0].Line != 19 {
		t.Errorf("%v\nreported at line %d (%q), want line 19 (%q), the line indented one space too few",
			es[0], es[0].Line, strings.Split(y, "\n")[es[0].Line-1], strings.Split(y, "\n")[18])
	}
}
