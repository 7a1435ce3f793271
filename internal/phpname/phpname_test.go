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
		"a[b]x":        "a[b]", // what follows the indexes is cut
		"a[b]]":        "a[b]",
		"a[b][c]x[d]":  "a[b][c]",
		"a[b][c":       "a[b]",    // as is an index no ']' closes
		"a[b[c]d":      "a[b[c]",  // an index ends at the first ']'
		"a.b[ c]x":     "a_b[ c]", // whitespace kept in an index
		"a[ ]":         "a[]",     // but for an index of one byte of it
		"a[x][\v]":     "a[x][]",
		"a[  ]":        "a[  ]",
		"a[[ ]":        "a[[ ]",
	} {
		if got := Of(k).String(); got != want {
			t.Errorf("Of(%q).String() = %q, want %q", k, got, want)
		}
	}
}

// Of names a sent variable as PHP does whatever follows its indexes, and
// EqualFold matches it to a name without allocating.
func TestOfCutsWhatFollowsTheIndexes(t *testing.T) {
	for k, name := range map[string]string{
		"user[email]x":   "user[email]",
		"USER[Email]]":   "user[email]",
		"user[email][":   "user[email]",
		"user.x[email]y": "user_x[email]",
		"user[ ]x":       "user[]",
		"user[\t][ ]":    "user[][]",
	} {
		if !Of(k).EqualFold(Of(name)) || !Of(name).EqualFold(Of(k)) {
			t.Errorf("Of(%q) and Of(%q) are not one name", k, name)
		}
	}
	for k, name := range map[string]string{
		"user[email]x":  "user[emailx]",
		"user[ email]":  "user[email]",
		"user[email]":   "user",
		"user[  ]":      "user[]",
		"_method[x]":    "_method",
		"_method[x]y":   "_method",
		"user[email":    "user[email]",
		"user[[ ]":      "user[[]",
		"user[email][]": "user[email]",
	} {
		if Of(k).EqualFold(Of(name)) {
			t.Errorf("Of(%q) and Of(%q) are one name", k, name)
		}
	}
	v, w := Of("user[ ]x"), Of("USER[]")
	if n := testing.AllocsPerRun(100, func() { _ = v.EqualFold(w) }); n != 0 {
		t.Errorf("EqualFold: %v allocations, want 0", n)
	}
}

// PartName reads a multipart field's name as PHP's
// normalize_protected_variable does before PHP names it: the whitespace
// opening each index dropped, what follows the last cut.
func TestPartNameDropsTheWhitespaceOpeningAnIndex(t *testing.T) {
	for k, want := range map[string]string{
		"user[email]":         "user[email]",
		"user[ email]":        "user[email]",
		"user[\t\r\n email ]": "user[email ]",
		"user[email]x":        "user[email]",
		"user[ a][ b]x[c]":    "user[a][b]",
		"user[\va]":           "user[\va]",
		"user[ email":         "user[email",
		"user[a][ b":          "user[a][b",
		"user[ a\x00b]":       "user[a",
		" user. x[ y]":        " user. x[y]",
		"user":                "user",
	} {
		if got := PartName(k); got != want {
			t.Errorf("PartName(%q) = %q, want %q", k, got, want)
		}
	}
	for k, want := range map[string]string{
		"user[ email]": "user[email]",
		"user[ email":  "user_email",
		"user[a][ b":   "user[a]",
		"user[ ]":      "user[]",
		"user[\v]":     "user[]",
	} {
		if got := Of(PartName(k)).String(); got != want {
			t.Errorf("Of(PartName(%q)) = %q, want %q", k, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = PartName("user[email]x") }); n != 0 {
		t.Errorf("PartName(user[email]x): %v allocations, want 0", n)
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
