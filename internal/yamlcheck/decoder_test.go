package yamlcheck_test

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

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

// Bool takes the booleans YAML 1.2 (and yaml.v3) resolve, in each of their
// spellings; YAML 1.1's yes and no are strings, refused with a message
// that says why.
func TestBool(t *testing.T) {
	for _, c := range []struct {
		value string
		want  bool
		err   string
	}{
		{value: "true", want: true},
		{value: "True", want: true},
		{value: "TRUE", want: true},
		{value: "false", want: false},
		{value: "False", want: false},
		{value: "FALSE", want: false},
		{value: "yes", err: `f.yaml:1:4: b: want true or false, got "yes" (a string in YAML 1.2, not a boolean)`},
		{value: "Off", err: `f.yaml:1:4: b: want true or false, got "Off" (a string in YAML 1.2, not a boolean)`},
		{value: `"true"`, err: `f.yaml:1:4: b: want true or false, got "true"`},
		{value: "1", err: `f.yaml:1:4: b: want true or false, got "1"`},
		{value: "[true]", err: `f.yaml:1:4: b: want true or false, got a list`},
	} {
		t.Run(c.value, func(t *testing.T) {
			n, err := yamlcheck.Parse("f.yaml", []byte("b: "+c.value+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			d := &yamlcheck.Decoder{File: "f.yaml"}
			got := d.Bool(n.Content[1], "b")
			if c.err == "" {
				if err := d.Err(); err != nil || got != c.want {
					t.Errorf("%v, %v; want %v", got, err, c.want)
				}
				return
			}
			if err := d.Err(); err == nil || err.Error() != c.err {
				t.Errorf("error %v, want %s", err, c.err)
			}
		})
	}
}

// ParseDuration reads days as 24 hours; a duration longer than a
// time.Duration holds is an error, never a value wrapped around.
func TestParseDurationDays(t *testing.T) {
	for _, c := range []struct {
		s    string
		want time.Duration
		err  bool
	}{
		{s: "7d", want: 7 * 24 * time.Hour},
		{s: "1d12h", want: 36 * time.Hour},
		{s: "1h30m", want: 90 * time.Minute},
		{s: "106751d", want: 106751 * 24 * time.Hour},
		{s: "106751d23h", want: (106751*24 + 23) * time.Hour},
		{s: "106751d24h", err: true},
		{s: "106752d", err: true},
		{s: "250000d", err: true},
		{s: "2000000000d", err: true},
		{s: "-1d", err: true},
		{s: "60", err: true},
		{s: "1d-1h", err: true}, // a sign inside a duration: time.ParseDuration refuses 1h-30m
		{s: "1d+1h", err: true},
		{s: "1d-", err: true},
	} {
		got, err := yamlcheck.ParseDuration(c.s)
		if c.err {
			if err == nil {
				t.Errorf("ParseDuration(%q) = %v, want an error", c.s, got)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", c.s, got, err, c.want)
		}
	}
}

// A tab in a line's indentation is a syntax error at the tab, which says
// that YAML indents with spaces.
func TestParseTabsAreLocated(t *testing.T) {
	_, err := yamlcheck.Parse("f.yaml", []byte("plans:\n  free:\n  \tlimits: []\n"))
	want := "f.yaml:3:3: YAML syntax: found character that cannot start any token (a tab: indent YAML with spaces)"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
	_, err = yamlcheck.Parse("f.yaml", []byte("plans:\n  free: [\n"))
	if err == nil || strings.Contains(err.Error(), "tab") {
		t.Errorf("a syntax error without a tab: %v", err)
	}
}

// An integer is decimal digits: a leading zero, octal in YAML 1.1 (017 is
// 15 there), is refused rather than read as either number.
func TestIntRefusesALeadingZero(t *testing.T) {
	for _, c := range []struct {
		value string
		want  int64
		err   string
	}{
		{value: "17", want: 17},
		{value: "0", want: 0},
		{value: "1_000", want: 1000},
		{value: "017", err: `f.yaml:1:4: n: "017" has a leading zero (octal in YAML 1.1): write 17`},
		{value: "00", err: `f.yaml:1:4: n: "00" has a leading zero (octal in YAML 1.1): write 0`},
		{value: "0x1F", err: `f.yaml:1:4: n: "0x1F" is not an integer`},
	} {
		t.Run(c.value, func(t *testing.T) {
			n, err := yamlcheck.Parse("f.yaml", []byte("n: "+c.value+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			d := &yamlcheck.Decoder{File: "f.yaml"}
			got := d.Int(n.Content[1], "n", 0, 1<<40)
			if c.err == "" {
				if err := d.Err(); err != nil || got != c.want {
					t.Errorf("%v, %v; want %v", got, err, c.want)
				}
				return
			}
			if err := d.Err(); err == nil || err.Error() != c.err {
				t.Errorf("error %v, want %s", err, c.err)
			}
		})
	}
}

// Float takes numbers in [lo, hi]; not-a-number and infinities, which YAML
// can spell (.nan, !!float nan, .inf), are no numbers in any range.
func TestFloatRefusesWhatIsNoNumber(t *testing.T) {
	for _, c := range []struct {
		value string
		want  float64
		err   bool
	}{
		{value: "0.5", want: 0.5},
		{value: "1", want: 1},
		{value: ".nan", err: true},
		{value: "!!float nan", err: true},
		{value: "!!float NaN", err: true},
		{value: ".inf", err: true},
		{value: "!!float -inf", err: true},
		{value: "2", err: true},
	} {
		t.Run(c.value, func(t *testing.T) {
			n, err := yamlcheck.Parse("f.yaml", []byte("f: "+c.value+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			d := &yamlcheck.Decoder{File: "f.yaml"}
			got := d.Float(n.Content[1], "f", 0.001, 1)
			if err := d.Err(); (err != nil) != c.err || !c.err && got != c.want {
				t.Errorf("%v, %v; want %v (error: %v)", got, err, c.want, c.err)
			}
		})
	}
}

// Every syntax error is located at file:line:col, also those yaml.v3
// reports with no line: a character YAML does not allow, bytes that are
// not UTF-8, an alias of no anchor, and any error of the first line.
func TestSyntaxErrorsAreAlwaysLocated(t *testing.T) {
	deep := strings.Repeat("[", 10_001) + strings.Repeat("]", 10_001)
	for _, c := range []struct{ name, yaml, want string }{
		{"a control character", "a: 1\nbb: x\x01\n",
			`f.yaml:2:6: YAML syntax: control characters are not allowed (U+0001; in a double-quoted string write it as \x01)`},
		{"a delete character after a multi-byte one", "a: 1\nb: \"é\x7f\"\n",
			`f.yaml:2:6: YAML syntax: control characters are not allowed (U+007F; in a double-quoted string write it as \x7f)`},
		{"a byte that starts no UTF-8 character", "a: 1\nb: 2\nc: \xff\n",
			"f.yaml:3:4: YAML syntax: invalid leading UTF-8 octet (byte 0xff: save the file as UTF-8)"},
		{"a UTF-8 character cut short", "a: 1\nb: é\xc3",
			"f.yaml:2:5: YAML syntax: incomplete UTF-8 octet sequence (byte 0xc3: save the file as UTF-8)"},
		{"an alias of no anchor", "a: \"*nope\" # *nope\nb: [x *nope, y]\nc: |\n  *nope\nd: [1, *nope]\ne: *nope\n",
			"f.yaml:5:8: YAML syntax: unknown anchor 'nope' referenced"},
		{"an alias of no anchor as a key", "a: 1\n*nope : 2\n",
			"f.yaml:2:1: YAML syntax: unknown anchor 'nope' referenced"},
		{"an alias of an anchor defined after it", "a: *x\nb: &x 1\n",
			"f.yaml:1:4: YAML syntax: unknown anchor 'x' referenced"},
		{"too deep on the first line", "a: " + deep + "\n", "f.yaml:1:1: YAML syntax: exceeded max depth of 10000"},
		{"an error of the first line", "a: b: c\n", "f.yaml:1:1: YAML syntax: mapping values are not allowed in this context"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := yamlcheck.Parse("f.yaml", []byte(c.yaml))
			if err == nil || err.Error() != c.want {
				t.Errorf("error %v\nwant %s", err, c.want)
			}
		})
	}
}

// A Decoder lists at most MaxErrors problems, and says how many more it
// found rather than dropping them without a word.
func TestProblemsPastTheMostAreCounted(t *testing.T) {
	d := &yamlcheck.Decoder{File: "f.yaml"}
	for i := range yamlcheck.MaxErrors + 12 {
		d.Errorf(nil, "x", "problem %d", i)
	}
	errs := yamlcheck.Errors(d.Err())
	if len(errs) != yamlcheck.MaxErrors+1 {
		t.Fatalf("%d errors, want %d and a count of the rest", len(errs), yamlcheck.MaxErrors+1)
	}
	want := "f.yaml: and 12 more problems, not listed (only the first 50 are)"
	if got := errs[len(errs)-1].Error(); got != want {
		t.Errorf("last error %q, want %q", got, want)
	}
	full := &yamlcheck.Decoder{File: "f.yaml"}
	for i := range yamlcheck.MaxErrors {
		full.Errorf(nil, "x", "problem %d", i)
	}
	if n := len(yamlcheck.Errors(full.Err())); n != yamlcheck.MaxErrors {
		t.Errorf("%d errors of exactly %d problems", n, yamlcheck.MaxErrors)
	}
}

// yaml.v3 names the line before the one of a parser's error (its marks
// count from 0 there, not in its scanner's), and the line after the last
// for an error at the end of the file: each is read at its own line.
func TestSyntaxErrorsAreAtTheirLine(t *testing.T) {
	for _, c := range []struct{ name, yaml, want string }{
		{"an entry of a list in a mapping", "a: 1\n- b\n", "f.yaml:2:1: YAML syntax: did not find expected key"},
		{"a key indented less than its mapping", "x: 1\nb:\n  c: 1\n d: 2\n", "f.yaml:4:1: YAML syntax: did not find expected key"},
		{"a flow list left open, at its start", "a: 1\nb: [1, 2\nc: 3\n", "f.yaml:2:1: YAML syntax: did not find expected ',' or ']'"},
		{"a quoted string left open, at the last line", "a: \"x\ny\n", "f.yaml:2:1: YAML syntax: found unexpected end of stream"},
		{"a flow list left open at the end", "a: 1\nb: [\n", "f.yaml:2:1: YAML syntax: did not find expected node content"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := yamlcheck.Parse("f.yaml", []byte(c.yaml))
			if err == nil || err.Error() != c.want {
				t.Errorf("error %v\nwant %s", err, c.want)
			}
		})
	}
}
