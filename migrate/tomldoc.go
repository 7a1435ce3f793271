package migrate

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
	"go.yaml.in/yaml/v3"
)

// tomlDocument decodes src, a TOML file, into a T and passes it to use,
// as eachDocument passes the YAML document of the same tables and values:
// TOML's tables are read as YAML's mappings, its arrays as sequences, its
// strings, integers, floats, booleans and dates as scalars of those types,
// and T's yaml tags name the keys. An error names source; a syntax error
// also the line and column, a value of the wrong type the value (the TOML
// parser gives no line for it).
func tomlDocument[T any](src, source string, use func(*T) error) error {
	src = strings.TrimPrefix(src, "\uFEFF")
	var tables map[string]any
	if _, err := toml.Decode(src, &tables); err != nil {
		if pe, ok := errors.AsType[toml.ParseError](err); ok {
			line, col := position(src, pe.Position.Start)
			return fmt.Errorf("%s:%d:%d: %s", source, line, col, pe.Message)
		}
		return fmt.Errorf("%s: %w", source, err)
	}
	var doc yaml.Node
	if err := doc.Encode(tables); err != nil {
		return fmt.Errorf("%s: %w", source, err)
	}
	var d T
	if err := doc.Decode(&d); err != nil {
		if te, ok := errors.AsType[*yaml.TypeError](err); ok {
			// The nodes made from TOML have no lines: drop yaml's "line 0".
			msgs := make([]string, len(te.Errors))
			for i, m := range te.Errors {
				msgs[i] = strings.TrimPrefix(m, "line 0: ")
			}
			return fmt.Errorf("%s: %s", source, strings.Join(msgs, "; "))
		}
		return fmt.Errorf("%s: %w", source, err)
	}
	if err := use(&d); err != nil {
		return fmt.Errorf("%s: %w", source, err)
	}
	return nil
}

// position returns the line and column, both from 1, of the byte at offset
// in src (its end, for an offset beyond it). The TOML parser's own line of
// an error at a newline is the next one; the offset is where it stopped.
func position(src string, offset int) (line, col int) {
	before := src[:min(max(offset, 0), len(src))]
	start := strings.LastIndexByte(before, '\n') + 1
	return 1 + strings.Count(before, "\n"), 1 + utf8.RuneCountInString(before[start:])
}
