package phpname

import "testing"

// TestOfNamesAVariableAsPHPDoes: Of gives a request
// variable the name PHP's php_register_variable_ex gives it.
func TestOfNamesAVariableAsPHPDoes(t *testing.T) {
	for k, want := range map[string]string{
		"_method":      "_method",
		".method":      "_method",
		" _method":     "_method",
		"  .method":    "_method",
		"_me thod":     "_me_thod",
		"_method\x00x": "_method",
		"_method[]":    "_method[]", // an array
		"a.b[c.d]":     "a_b[c.d]",  // indexes kept
		"a.b[c.d":      "a_b_c_d",   // no ']': no indexes
		"a[b[c":        "a_b_c",     // so every '[' is '_'
		"[method":      "",          // dropped
		" [method]":    "",          // dropped
		"_METHOD":      "_METHOD",   // case kept
		"x]":           "x]",
	} {
		if got := Of(k).String(); got != want {
			t.Errorf("Of(%q).String() = %q, want %q", k, got, want)
		}
	}
}

// URLDecode decodes a name or value as PHP's php_url_decode does: escape
// by escape, '+' a space, and a '%' that two hexadecimal digits do not
// follow kept as it is, where url.QueryUnescape refuses the whole; it
// allocates nothing for a name without escapes.
func TestURLDecodeKeepsAnEscapeThatDoesNotDecode(t *testing.T) {
	for s, want := range map[string]string{
		"_method":           "_method",
		"_method%00%zz":     "_method\x00%zz",
		"%5fmethod%":        "_method%",
		"a+b%2":             "a b%2",
		"%4e%4E%g1%%41":     "NN%g1%A",
		"%":                 "%",
		"100%25+%ZZ+%e2%82": "100% %ZZ \xe2\x82",
	} {
		if got := URLDecode(s); got != want {
			t.Errorf("URLDecode(%q) = %q, want %q", s, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = URLDecode("_method") }); n != 0 {
		t.Errorf("URLDecode(_method): %v allocations, want 0", n)
	}
}
