package httplimit

import (
	"strings"
	"testing"
)

// openingOf tells what a body's first bytes start with, read as JSON text
// in the coding they tell, and tells it alike whether they arrive at once
// or a byte at a time, going on from where it left off.
func TestOpeningOfTellsTheFirstCharacterButWhitespace(t *testing.T) {
	for _, c := range []struct {
		opening string
		want    jsonOpening
	}{
		{"  \t\r\n", openingBlank},
		{"  {\"a\":1}", openingObject},
		{"\uFEFF {", openingObject},
		{" \uFEFF{", openingOther}, // a mark after whitespace is no whitespace
		{"  [1]", openingOther},
		{" \x00{\x00", openingObject},                      // UTF-16LE
		{"\x00 \x00 \x00{", openingObject},                 // UTF-16BE
		{"\xFF\xFE \x00{\x00", openingObject},              // UTF-16LE after its mark
		{"\x00\x00\x00 \x00\x00\x00{", openingObject},      // UTF-32BE
		{" \x00\x00\x00{\x00\x00\x00", openingObject},      // UTF-32LE
		{"\x00\x00\x00\x20ftypisom", openingOther},         // UTF-32BE past U+10FFFF: an MP4
		{" \x00\x00\xD8{\x00", openingOther},               // UTF-16LE: a surrogate
		{"\x00\x00\x00 \x00\x00\x00", openingBlank},        // a unit cut short
		{strings.Repeat(" \x00", 100), openingBlank},       // UTF-16LE spaces
		{strings.Repeat(" \x00", 100) + "x", openingBlank}, // a UTF-16 unit cut short
	} {
		got, _ := openingOf([]byte(c.opening), 0)
		if got != c.want {
			t.Errorf("%q at once: %v, want %v", c.opening, got, c.want)
		}
		o, at := openingBlank, 0
		for n := 4; n <= len(c.opening) && o == openingBlank; n++ {
			o, at = openingOf([]byte(c.opening[:n]), at)
		}
		if len(c.opening) >= 4 && o != c.want {
			t.Errorf("%q a byte at a time: %v, want %v", c.opening, o, c.want)
		}
	}
}
