package migrate_test

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/migrate"
)

// A rules file of two YAML documents: envoyproxy/ratelimit reads the first
// and ignores the second without a word (docs/envoy.md, "Several documents
// in one file"); sluice's service reads both. The import keeps the first
// document alone, in the shadow and the enforced configuration alike, so
// sluice limits domain a only, as envoyproxy/ratelimit did, and the report
// names domain b as not imported.
func TestImportEnvoyRulesKeepsTheFirstDocumentOnly(t *testing.T) {
	src := `domain: a
descriptors:
  - key: k
    rate_limit: {unit: minute, requests_per_unit: 1}
---
domain: b
descriptors:
  - key: k
    rate_limit: {unit: minute, requests_per_unit: 1}
`
	tr, err := migrate.Import("envoy", src, "config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	domains := func(enforce bool) []string {
		files, err := tr.Files(enforce)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		p := filepath.Join(dir, migrate.EnvoyRulesFile)
		if err := os.WriteFile(p, []byte(files[migrate.EnvoyRulesFile]), 0o644); err != nil {
			t.Fatal(err)
		}
		rules, err := envoy.LoadRuleFiles(p)
		if err != nil {
			t.Fatal(err)
		}
		return rules.Domains()
	}
	shadow, enforced := domains(false), domains(true)
	if !slices.Equal(shadow, enforced) {
		t.Errorf("the shadow import loads domains %v, the enforced one %v", shadow, enforced)
	}
	if slices.Contains(enforced, "b") {
		t.Errorf("the enforced import limits domain b, which envoyproxy/ratelimit ignores (it reads a file's first document)")
	}
	if got := differsLines(tr, "domain b (line 6)"); len(got) != 1 || !strings.Contains(got[0], "not imported") {
		t.Errorf("the report does not name domain b as not imported: %q", got)
	}
}

// The same two documents in a file whose lines end in a bare "\r", or in
// UTF-16 with its byte order mark: yaml.v2 (and so envoyproxy/ratelimit)
// and yaml.v3 read both as the UTF-8 text with "\n", domain a first. The
// import finds the second document where the parser does, so the shadow
// and the enforced rules file hold domain a alone (in the file's own
// encoding for the enforced one), which the service loads.
func TestImportOfAnyEncodingOrLineBreakKeepsTheFirstDocumentOnly(t *testing.T) {
	const text = "domain: a\ndescriptors:\n  - key: k\n    rate_limit: {unit: minute, requests_per_unit: 1}\n---\ndomain: b\ndescriptors:\n  - key: k\n    rate_limit: {unit: minute, requests_per_unit: 1}\n"
	encode16 := func(bom []byte, put func([]byte, uint16) []byte) string {
		src := bom
		for _, u := range utf16.Encode([]rune(text)) {
			src = put(src, u)
		}
		return string(src)
	}
	for name, src := range map[string]string{
		"bare CR":   strings.ReplaceAll(text, "\n", "\r"),
		"NEL":       strings.ReplaceAll(text, "\n", "\u0085"),
		"UTF-16LE":  encode16([]byte{0xFF, 0xFE}, binary.LittleEndian.AppendUint16),
		"UTF-16BE":  encode16([]byte{0xFE, 0xFF}, binary.BigEndian.AppendUint16),
		"UTF-8 BOM": "\uFEFF" + text,
	} {
		tr, err := migrate.Import("envoy", src, "config.yaml")
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for _, enforce := range []bool{false, true} {
			files, err := tr.Files(enforce)
			if err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(t.TempDir(), migrate.EnvoyRulesFile)
			if err := os.WriteFile(p, []byte(files[migrate.EnvoyRulesFile]), 0o644); err != nil {
				t.Fatal(err)
			}
			rules, err := envoy.LoadRuleFiles(p)
			if err != nil {
				t.Fatalf("%s, enforce %v: %v", name, enforce, err)
			}
			if got := rules.Domains(); !slices.Equal(got, []string{"a"}) {
				t.Errorf("%s, enforce %v: the imported rules file loads domains %v, want [a] (envoyproxy/ratelimit reads the first document only)", name, enforce, got)
			}
		}
		if got := differsLines(tr, "domain b (line 6)"); len(got) != 1 || !strings.Contains(got[0], "not imported") {
			t.Errorf("%s: the report does not name domain b as not imported: %q", name, got)
		}
	}
}
