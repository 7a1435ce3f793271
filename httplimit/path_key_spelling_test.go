package httplimit_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// A rule keyed by the whole path counts each resource once, however a
// client spells its path to an upstream that ignores case (Express,
// ASP.NET Core), a trailing slash (Express, Rails, Laravel) or path
// parameters (Tomcat, Spring): /files/a, /files/A, /files/a/ and
// /files/a;x are one count, not four fresh ones.
func TestAPathKeyIsOneCountHoweverThePathIsSpelled(t *testing.T) {
	mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "files", Paths: []string{"/files/"}, Key: []string{httplimit.KeyURLPath},
		Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}})
	var rs []req
	for i, p := range []string{"/files/a", "/files/A", "/files/a/", "/files/a;x", "/FILES/a//", "/files/b"} {
		rs = append(rs, req{path: p, remote: fmt.Sprintf("192.0.2.%d:1", i+1)})
	}
	if got, want := statuses(mw, rs...), []int{200, 429, 429, 429, 429, 200}; !slices.Equal(got, want) {
		t.Errorf("/files/a, /files/A, /files/a/, /files/a;x, /FILES/a//, /files/b: %v, want %v", got, want)
	}
}
