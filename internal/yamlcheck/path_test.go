package yamlcheck

import (
	"fmt"
	"strings"
	"testing"
)

// A Path writes out what Join and a list's "[i]" write, step by step.
func TestPathStringIsJoinsPath(t *testing.T) {
	long := strings.Repeat("k", 200)
	for _, c := range []struct {
		p    *Path
		want string
	}{
		{nil, ""},
		{PathOf(""), ""},
		{(*Path)(nil).Key("domain"), Join("", "domain")},
		{(*Path)(nil).Index(2).Key("key"), Join("[2]", "key")},
		{PathOf("plans.free").Key("limits").Index(1).Key("window"), Join(fmt.Sprintf("%s[%d]", Join("plans.free", "limits"), 1), "window")},
		{(*Path)(nil).Key("").Key("a"), Join(Join("", ""), "a")},
		{(*Path)(nil).Key(long).Key("*" + long), Join(Join("", long), "*"+long)},
	} {
		if got := c.p.String(); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}
