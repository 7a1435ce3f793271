package yamlcheck_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/internal/yamlcheck"
)

// A file is one YAML document: what follows a second "---" is refused at
// its line, never left unread; an empty document after one is nothing.
func TestParseReadsOneDocument(t *testing.T) {
	for _, c := range []struct {
		name, yaml, want string
	}{
		{"a second document is refused at its first line", "a: 1\n---\nb: 2\n", "f.yaml:3:1: a second YAML document"},
		{"a second document of a list is refused too", "- a\n---\n- b\n", "f.yaml:3:1: a second YAML document"},
		{"a syntax error in a second document is reported", "a: 1\n---\nb: [\n", "f.yaml:3:1: YAML syntax"},
		{"a trailing marker is nothing", "a: 1\n---\n", ""},
		{"a trailing marker and comments are nothing", "a: 1\n---\n# later\n", ""},
		{"a document end marker is nothing", "a: 1\n...\n", ""},
		{"a leading marker starts the one document", "---\na: 1\n", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			n, err := yamlcheck.Parse("f.yaml", []byte(c.yaml))
			if c.want == "" {
				if err != nil || len(n.Content) != 2 || n.Content[0].Value != "a" {
					t.Fatalf("Parse: %v, %v; want the mapping a: 1", n, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
			if len(yamlcheck.Errors(err)) != 1 {
				t.Errorf("%v is not one *Error", err)
			}
		})
	}
	if _, err := yamlcheck.Parse("f.yaml", []byte("# nothing\n")); !errors.Is(err, io.EOF) {
		t.Errorf("comments alone: %v, want io.EOF", err)
	}
}
