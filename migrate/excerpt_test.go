package migrate_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// An error quotes at most the start of what it could not read: a file of
// 100,000 NUL bytes, or a line of 100,000 characters, given by mistake, is
// refused in a line a terminal shows, not a copy of the file.
func TestErrorsQuoteAnExcerpt(t *testing.T) {
	long := strings.Repeat("x", 100_000)
	for name, src := range map[string]struct{ from, text string }{
		"nginx NULs":          {"nginx", strings.Repeat("\x00", 100_000)},
		"nginx unterminated":  {"nginx", "server { " + long},
		"nginx zone argument": {"nginx", "limit_req_zone $binary_remote_addr " + long + ";\n"},
		"haproxy":             {"haproxy", long + " x\n"},
	} {
		_, err := migrate.Import(src.from, src.text, "f")
		if err == nil {
			t.Errorf("%s: imported", name)
			continue
		}
		if n := len(err.Error()); n > 300 {
			t.Errorf("%s: an error of %d bytes: %.120s…", name, n, err)
		}
	}
}
