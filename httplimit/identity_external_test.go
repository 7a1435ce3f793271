package httplimit_test

import (
	"context"
	"testing"

	"github.com/sluice-dev/sluice/httplimit"
)

// A caller's own subject (Requester.Subject) is an identity of its own
// kind, KindExternal, named "ext:" and the subject.
func TestRequesterSubjectIsKindExternal(t *testing.T) {
	mw := counted(t)
	res, err := mw.DecideFor(context.Background(), httplimit.Requester{Subject: "batch-7"}, "GET", "/", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer mw.Discard(res)
	if res.Identity.Kind != httplimit.KindExternal || res.Identity.Subject != "ext:batch-7" {
		t.Errorf("Identity %q %q, want %q %q", res.Identity.Kind, res.Identity.Subject, httplimit.KindExternal, "ext:batch-7")
	}
}
