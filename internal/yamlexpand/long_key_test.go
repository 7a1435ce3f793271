package yamlexpand_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/internal/yamlexpand"
)

// A key longer than MaxKeyBytes names no field of a rules file
// (envoyproxy/ratelimit refuses it as an unknown key): it is refused where
// it is written, or where an alias makes it a key, before aliases and
// merge keys can repeat it. A key of MaxKeyBytes is expanded as any other.
func TestKeysLongerThanTheBoundAreRefused(t *testing.T) {
	long := strings.Repeat("k", yamlexpand.MaxKeyBytes+1)
	shown := strings.Repeat("k", 100) + fmt.Sprintf("… (%d bytes)", len(long))
	cases := []struct{ doc, want string }{
		{"descriptors:\n  - &d\n    key: x\n    ? " + long + "\n    : 1\n  - *d\n  - {<<: *d, key: y}\n",
			"descriptors[0]." + shown + ": a key of 1025 bytes, which names no field (none is named in more than 1024; envoyproxy/ratelimit refuses it too, as an unknown key)"},
		{"descriptors:\n  - {key: &k " + long + "}\n  - {key: a, *k : 1}\n",
			"descriptors[1].*k: a key written as an alias of a text of 1025 bytes, which names no field (none is named in more than 1024; envoyproxy/ratelimit refuses it too, as an unknown key)"},
		{"descriptors:\n  - {key: &k " + long[1:] + "}\n  - {key: a, *k : 1}\n  - {key: b, ? " + long[1:] + " : 1}\n", ""},
	}
	for _, c := range cases {
		var root yaml.Node
		if err := yaml.Unmarshal([]byte(c.doc), &root); err != nil {
			t.Fatal(err)
		}
		var got string
		_, ok := yamlexpand.New(yamlexpand.Options{Report: reportTo(&got)}).Expand(root.Content[0])
		if ok != (c.want == "") || got != c.want {
			t.Errorf("%.80q…: expanded %v, reported %.300q; want %.300q", c.doc, ok, got, c.want)
		}
	}
}

// A rules file whose 2,000 descriptors each use, as a key, an alias of a
// 1 MiB text is refused at the first such key, with one problem, in time
// and memory linear in the file: reading every use (its path, its
// duplicate check, its "unknown field" message, each holding the whole
// key) would cost the key's length 2,000 times over, 2 GB of paths and
// messages and 52 MB of problems listed. What loading allocates is
// checked, a measure of its work that a loaded machine does not change,
// and its time is bounded many times over.
func TestAnAliasedLongKeyIsRefusedInTimeLinearInTheFile(t *testing.T) {
	var b strings.Builder
	b.WriteString("domain: api\ndescriptors:\n  - {key: &k " + strings.Repeat("k", 1<<20) + "}\n")
	for i := range 2000 {
		fmt.Fprintf(&b, "  - {key: a%d, *k : 1}\n", i)
	}
	file := []byte(b.String())
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	_, err := envoy.LoadRules("rules.yaml", file)
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	want := "rules.yaml:4:15: descriptors[1].*k: a key written as an alias of a text of 1048576 bytes, which names no field (none is named in more than 1024; envoyproxy/ratelimit refuses it too, as an unknown key)"
	if err == nil || err.Error() != want {
		t.Errorf("got %d bytes of problems: %.300v…; want %s", len(fmt.Sprint(err)), err, want)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 20*uint64(len(file)) {
		t.Errorf("loading a %d-byte rules file allocated %d bytes; want at most 20 times the file", len(file), alloc)
	}
	if most := 10 * time.Second; took > most {
		t.Errorf("a %d-byte rules file took %v to load; want well under %v", len(file), took, most)
	}
}
