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
