package envoy_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/envoy"
)

// A rules file's cost grows with its size, not with its size squared. A
// ~1 MB file (a quarter of the 4 MiB a rules file may be) whose one
// descriptor has a 1 MiB key and 800 children, each with a rate_limit and
// no name, loads in about a tenth of a second, as gopkg.in/yaml.v2 decodes
// it: naming a rule after its path (the path cleaned, cut and hashed) must
// not walk the whole path again for every rule, ~10 s here.
func TestRulesUnderALongKeyLoadInTimeLinearInTheFile(t *testing.T) {
	var b strings.Builder
	b.WriteString("domain: api\ndescriptors:\n  - key: " + strings.Repeat("k", 1<<20) + "\n    descriptors:\n")
	for i := range 800 {
		fmt.Fprintf(&b, "      - {key: c%d, rate_limit: {unit: second, requests_per_unit: 5}}\n", i)
	}
	loadWithin(t, b.String(), 800, 8*time.Second)
}

// The same holds where aliases repeat a long key: a 1 MiB key aliased in
// 1,000 descriptors, each the child of its own and each with a rule named
// after its path, is cleaned and hashed once (its place in each path's
// hash is its own SHA-256), not once per descriptor (~25 s).
func TestRulesUnderAnAliasedLongKeyLoadInTimeLinearInTheFile(t *testing.T) {
	var b strings.Builder
	b.WriteString("domain: api\ndescriptors:\n  - {key: &k " + strings.Repeat("k", 1<<20) + ", rate_limit: &r {unit: second, requests_per_unit: 5}}\n")
	for i := range 1000 {
		fmt.Fprintf(&b, "  - {key: p%d, descriptors: [{key: *k, rate_limit: *r}]}\n", i)
	}
	loadWithin(t, b.String(), 1001, 8*time.Second)
}

// loadWithin loads the rules file and checks that it has limits limits
// and took less than most (many times what it takes).
func loadWithin(t *testing.T, file string, limits int, most time.Duration) {
	t.Helper()
	start := time.Now()
	r, err := envoy.LoadRules("rules.yaml", []byte(file))
	took := time.Since(start)
	if err != nil {
		t.Fatalf("a %d-byte file: %v", len(file), err)
	}
	if n := len(r.Limits()); n != limits {
		t.Errorf("%d limits, want %d", n, limits)
	}
	if took > most {
		t.Errorf("a %d-byte rules file took %v to load; want well under %v", len(file), took, most)
	}
}

// The keys and values of a file's descriptors, counted at every place an
// alias repeats them, are bounded (envoyproxy/ratelimit copies each into
// every descriptor; the rules tree holds and hashes each there): a 2 MiB
// key aliased in 600 descriptors is refused at the descriptor that passes
// 1 GiB, and a key named in a message is shown by its start.
func TestRulesRepeatingLongKeysPastTheirBoundAreRefused(t *testing.T) {
	var b strings.Builder
	b.WriteString("domain: api\ndescriptors:\n  - {key: &k " + strings.Repeat("k", 2<<20) + ", value: x, rate_limit: &r {unit: second, requests_per_unit: 5}}\n")
	for i := range 600 {
		fmt.Fprintf(&b, "  - {key: *k, value: v%d, rate_limit: *r}\n", i)
	}
	_, err := envoy.LoadRules("rules.yaml", []byte(b.String()))
	want := "rules.yaml:514:5: descriptors[511]: the keys and values of the file's descriptors, each counted wherever an alias repeats it, total more than 1073741824 bytes by here"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("got %.300v, want %s…", err, want)
	}

	f := "domain: api\ndescriptors:\n  - {key: &k " + strings.Repeat("k", 1<<20) + "}\n  - {key: *k}\n"
	_, err = envoy.LoadRules("rules.yaml", []byte(f))
	want = "rules.yaml:3:11: descriptors[1].key: key " + strings.Repeat("k", 100) + "… (1048576 bytes) is already a descriptor of this list (line 3)"
	if err == nil || err.Error() != want {
		t.Errorf("got %.300v, want %s", err, want)
	}
}
