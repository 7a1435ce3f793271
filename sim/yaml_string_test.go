package sim

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sluice-dev/sluice/internal/yamlcheck"
)

// yamlString writes every string the designer writes (Redis addresses,
// routes' methods and paths, a user header, a zone, a name YAML would not
// read back as written) so that the YAML decoder the configuration uses
// reads it back equal: every character, control characters and the ones
// YAML reads as line breaks among them, and the text around them.
func TestYAMLStringLoadsBackEqual(t *testing.T) {
	strs := []string{"", " ", "  lead", "trail  ", `"`, `\`, `\"`, "a: b", "#c", "- x", "null", "~", "&a", "*a", "!t",
		"a\nb", "a\r\nb", "\t", "x\x7f", "x\u0085y", "x\u2028y", "x\u2029y", "\ufeffx", "x\ufffe\uffff", "é 日本 🙂",
		"${REDIS_HOST}:6379", "<&>", "'single'", "%TAG", "---", "..."}
	var b strings.Builder
	for r := rune(0); r <= utf8.MaxRune; r++ { // every character, 256 to a string
		if utf8.ValidRune(r) {
			b.WriteRune(r)
		}
		if r%256 == 255 {
			strs = append(strs, b.String())
			b.Reset()
		}
	}
	for _, s := range strs {
		doc, err := yamlcheck.Parse("t.yaml", []byte("v: "+yamlString(s)+"\n"))
		if err != nil {
			t.Errorf("%+q: %v", s, err)
			continue
		}
		if got := doc.Content[1].Value; got != s {
			t.Errorf("%+q: read back as %+q", s, got)
		}
	}
}
