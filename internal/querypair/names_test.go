package querypair

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/internal/phpname"
)

// phpname.Of gives the key PHP's php_register_variable_ex files a request
// variable under (main/php_variables.c), as SameName reads it: cut at a
// NUL, leading spaces dropped, '.' and ' ' as '_' before the first '[',
// an array's indexes kept, and a '[' that no ']' follows as '_' with each
// ' ', '.' and '[' after it; "" for a variable PHP drops. A name PHP
// renames nothing of is given as it is, without allocating.
func TestPHPNameAsPHPFilesAVariable(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"user_email", "user_email"},
		{"user.email", "user_email"},
		{"user email", "user_email"},
		{"  user.email", "user_email"},
		{"user_email\x00junk", "user_email"},
		{"user[email]", "user[email]"},
		{"user.x[e.mail]", "user_x[e.mail]"},
		{"user[email", "user_email"},
		{"a.b[c.d e[f", "a_b_c_d_e_f"},
		{"[email]", ""},
		{"", ""},
	} {
		if got := phpname.Of(c.in).String(); got != c.want {
			t.Errorf("phpname.Of(%q).String() = %q, want %q", c.in, got, c.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = phpname.Of("filter[status]").String() }); n != 0 {
		t.Errorf("phpname.Of(filter[status]).String(), which PHP renames nothing of: %v allocations, want 0", n)
	}
}

// phpname.Name reads a name as PHP names it without building that name:
// its String is the name phpNameModel builds, and two compare in any case
// as strings.EqualFold compares those names (Unicode folding, ſ as s and
// K (Kelvin) as k, bytes that are no UTF-8 alike), so that SameName is
// EqualFold(k, name) or, PHP keeping name, EqualFold of the PHP names.
// Every pair of names of up to 3 symbols that PHP renames, folds or cuts
// is compared.
func TestPHPNamesCompareAsTheBuiltNamesDo(t *testing.T) {
	symbols := []string{"S", "s", "\u017f", "k", "\u212a", ".", " ", "[", "]", "_", "\x00", "\xff"}
	names := []string{""}
	for start, n := 0, 0; n < 3; n++ {
		end := len(names)
		for _, p := range names[start:end] {
			for _, s := range symbols {
				names = append(names, p+s)
			}
		}
		start = end
	}
	built, vars := make([]string, len(names)), make([]phpname.Name, len(names))
	for i, k := range names {
		if built[i], vars[i] = phpNameModel(k), phpname.Of(k); vars[i].String() != built[i] {
			t.Fatalf("phpname.Of(%q).String() = %q, want %q", k, vars[i].String(), built[i])
		}
	}
	for i, k := range names {
		for j, name := range names {
			want := strings.EqualFold(built[i], built[j])
			if got := vars[i].EqualFold(vars[j]); got != want {
				t.Fatalf("phpname.Of(%q).EqualFold(phpname.Of(%q)) = %v; PHP's names %q and %q: %v", k, name, got, built[i], built[j], want)
			}
			want = strings.EqualFold(k, name) || built[j] != "" && want
			if got := SameName(k, name, vars[j]); got != want {
				t.Fatalf("SameName(%q, %q) = %v, want %v", k, name, got, want)
			}
		}
	}
}

// phpNameModel builds the name PHP gives a request variable sent as k (see
// phpname.Of) byte by byte, as php_register_variable_ex does.
func phpNameModel(k string) string {
	if i := strings.IndexByte(k, 0); i >= 0 {
		k = k[:i]
	}
	b := []byte(strings.TrimLeft(k, " "))
	for i, c := range b {
		switch c {
		case ' ', '.':
			b[i] = '_'
		case '[':
			if i == 0 {
				return ""
			}
			if strings.IndexByte(string(b[i+1:]), ']') >= 0 {
				return string(b)
			}
			for j := i; j < len(b); j++ {
				if b[j] == ' ' || b[j] == '.' || b[j] == '[' {
					b[j] = '_'
				}
			}
			return string(b)
		}
	}
	return string(b)
}
