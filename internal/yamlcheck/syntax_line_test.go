package yamlcheck_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/internal/yamlcheck"
)

// A parser's error is located at the line of the text it was found at,
// however far from the start of the list or mapping it breaks, which
// yaml.v3 names instead (unless that is the first line).
func TestAParsersErrorIsAtItsOwnLine(t *testing.T) {
	var keys strings.Builder
	keys.WriteString("# keys\n")
	for i := range 2_000 {
		fmt.Fprintf(&keys, "- name: k%d\n  plan: free\n", i)
	}
	long := strings.Replace(keys.String(), "- name: k1900\n  plan", "- name: k1900\n plan", 1)
	for _, c := range []struct{ name, yaml, want string }{
		{"an entry's key indented one space too few", "a:\n  b:\n    - x: 1\n      y: 2\n    - x: 3\n     y: 4\n",
			"f.yaml:6:1: YAML syntax: did not find expected '-' indicator"},
		{"a key indented less than its nested mapping", "a:\n  b: 1\n  c:\n    d: 1\n    e: 2\n   f: 3\n",
			"f.yaml:6:1: YAML syntax: did not find expected key"},
		{"the 1,901st entry of a list of 2,000", long, "f.yaml:3803:1: YAML syntax: did not find expected '-' indicator"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := yamlcheck.Parse("f.yaml", []byte(c.yaml))
			if err == nil || err.Error() != c.want {
				t.Errorf("error %v\nwant %s", err, c.want)
			}
		})
	}
}
