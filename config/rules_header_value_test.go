package config_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// A rule's header value is read without the whitespace around it, as it is
// matched: a block scalar's newline is no part of it (sluice check's table
// and the witness requests of an except entry read it so too). A value of
// whitespace alone is refused at its line, never read as "present".
func TestARuleHeaderValueIsReadWithoutTheWhitespaceAroundIt(t *testing.T) {
	const head = "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\nrules:\n  - name: beta\n    match:\n      headers:\n        - name: X-Beta\n          value: "
	const tail = "    limits: [{name: m, algorithm: gcra, quantity: 1, window: 1m}]\n"
	cfg, err := config.Parse("sluice.yaml", []byte(head+"|\n            1\n"+tail))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Rules[0].Headers[0].Value; got != "1" {
		t.Errorf("a block scalar's value read as %q, want \"1\"", got)
	}
	_, err = config.Parse("sluice.yaml", []byte(head+"\"  \"\n"+tail))
	if err == nil || !strings.Contains(err.Error(), "sluice.yaml:") {
		t.Errorf("a value of whitespace alone: %v, want an error at its line", err)
	}
}
