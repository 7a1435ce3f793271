package envoy_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/envoy"
)

// A rules file of many domains (one YAML document each, which the service
// reads as a domain apiece) with one `!` anywhere in it, here in a comment
// where it is no tag, loads in time linear in the file, as the same file
// without the `!` does: the file is prepared once for the `!`s of all its
// documents (yamlexpand.Source), not once per document, which grew with
// the number of documents times the file's size (minutes for a 4 MiB file
// of small domains).
func TestManyDomainsWithABangLoadInLinearTime(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 4000; i++ {
		fmt.Fprintf(&b, "domain: d%d\ndescriptors:\n  - key: user\n    rate_limit: {unit: minute, requests_per_unit: 1}\n---\n", i)
	}
	plain := "# generated, do not edit.\n" + b.String()
	bang := "# generated, do not edit!\n" + b.String()
	load := func(src string) time.Duration {
		t0 := time.Now()
		if _, err := envoy.LoadRules("rules.yaml", []byte(src)); err != nil {
			t.Fatal(err)
		}
		return time.Since(t0)
	}
	without := load(plain)
	limit := 3*without + 500*time.Millisecond
	with := load(bang)
	if with > limit { // once more, in case the machine was busy
		without = min(without, load(plain))
		limit = 3*without + 500*time.Millisecond
		with = min(with, load(bang))
	}
	if with > limit {
		t.Errorf("a %d-byte file of 4000 domains loads in %v; with a `!` in its first comment, %v: want at most %v (linear in the file, whatever a comment says)", len(bang), without, with, limit)
	}
}
