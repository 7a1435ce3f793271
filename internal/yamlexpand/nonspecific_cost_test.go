package yamlexpand_test

import (
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/internal/yamlexpand"
)

// A rules file written as JSON (valid YAML, and how many generators write
// envoyproxy/ratelimit files) is one long line. One `!` anywhere in it,
// even inside a quoted text where it is no tag, has MarkNonSpecific find
// every scalar's column on it: in one walk along the line, not one from
// its start per scalar, which was quadratic in the line's length (a 1.2
// MB one-line file took 3 minutes through envoy.LoadRules, against under
// a second without the `!`: a reload or `sluice import` stalled).
func TestMarkNonSpecificIsLinearOnALongLine(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"domain": "api", "descriptors": [`)
	for i := 0; i < 2000; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(`{"key": "user", "value": "u` + strings.Repeat("x", 20) + `", "descriptors": [{"key": "k", "value": "v", "rate_limit": {"unit": "minute", "requests_per_unit": 1}}]}`)
	}
	b.WriteString(`]}`)
	src := []byte(strings.Replace(b.String(), `"value": "v"`, `"value": "hi!"`, 1))

	var root yaml.Node
	t0 := time.Now()
	if err := yaml.Unmarshal(src, &root); err != nil {
		t.Fatal(err)
	}
	decode := time.Since(t0)

	t0 = time.Now()
	yamlexpand.MarkNonSpecific(yamlexpand.NewSource(src), &root)
	mark := time.Since(t0)
	if limit := 3*decode + 500*time.Millisecond; mark > limit {
		t.Errorf("MarkNonSpecific on a %d-byte one-line file with one `!` in a text took %v, the decode itself %v: want at most %v (linear, a few scans)", len(src), mark, decode, limit)
	}
}
