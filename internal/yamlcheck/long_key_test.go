package yamlcheck_test

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/internal/yamlcheck"
)

// counted is a message argument that counts how often it is formatted.
type counted struct{ n *int }

func (c counted) String() string { *c.n++; return "x" }

// A problem past MaxErrors is counted, and its message never made: a file
// whose every descriptor repeats a long text in its message must not cost
// that text for each problem left unlisted.
func TestProblemsPastTheMostAreNotFormatted(t *testing.T) {
	d := &yamlcheck.Decoder{File: "f.yaml"}
	formatted := 0
	for range yamlcheck.MaxErrors + 1000 {
		d.Errorf(nil, "x", "problem %v", counted{&formatted})
	}
	if formatted != yamlcheck.MaxErrors {
		t.Errorf("%d messages made for %d problems listed", formatted, yamlcheck.MaxErrors)
	}
	if errs := yamlcheck.Errors(d.Err()); len(errs) != yamlcheck.MaxErrors+1 ||
		errs[len(errs)-1].Msg != "and 1000 more problems, not listed (only the first 50 are)" {
		t.Errorf("got %d errors, the last %v", len(errs), errs[len(errs)-1])
	}
}

// A field path names a key longer than 100 bytes by its start and its
// length, as a message shows it, so that each path under a long key (and
// each message naming one) is short however long the key; a long text is
// described so too. Shorter keys and texts are shown whole.
func TestALongKeyIsShownByItsStart(t *testing.T) {
	long := strings.Repeat("é", 1<<19) // 1 MiB, cut at a character
	root, err := yamlcheck.Parse("f.yaml", []byte("plans:\n  ? "+long+"\n  : {limits: [{window: 1m, x: 1}]}\n  "+strings.Repeat("p", 100)+": {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	d := &yamlcheck.Decoder{File: "f.yaml"}
	var paths []string
	d.Mapping(root, "", map[string]yamlcheck.Field{"plans": func(n *yaml.Node, p string) {
		d.Entries(n, p, func(_, v *yaml.Node, p string) {
			paths = append(paths, p)
			d.Mapping(v, p, map[string]yamlcheck.Field{"limits": func(n *yaml.Node, p string) {
				d.List(n, p, func(_ int, e *yaml.Node, p string) {
					d.Mapping(e, p, map[string]yamlcheck.Field{"window": func(n *yaml.Node, p string) { d.Duration(n, p) }})
				})
			}})
		})
	}})
	start := strings.Repeat("é", 50)
	want := []string{"plans." + start + "… (1048576 bytes)", "plans." + strings.Repeat("p", 100)}
	if len(paths) != 2 || paths[0] != want[0] || paths[1] != want[1] {
		t.Errorf("paths %.300q, want %q", paths, want)
	}
	wantErr := "f.yaml:3:28: plans." + start + "… (1048576 bytes).limits[0].x: unknown field (known: window)"
	if err := d.Err(); err == nil || err.Error() != wantErr {
		t.Errorf("got %.300v, want %s", err, wantErr)
	}

	text := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: strings.Repeat("v", 5000)}
	if got, want := yamlcheck.Describe(text), `"`+strings.Repeat("v", 100)+`"… (5000 bytes)`; got != want {
		t.Errorf("Describe of a long text: %.300s, want %s", got, want)
	}
}
