package httplimit_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// Several keys may share a name (one client's keys, one being rotated):
// "name:" then names no one key, and Subject says so, listing the keys'
// subjects to choose from, instead of answering for the first of them.
func TestSubjectRefusesANameSeveralKeysShare(t *testing.T) {
	plan := &httplimit.Plan{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(5, time.Minute)}}
	old, current, other := sha256.Sum256([]byte("old")), sha256.Sum256([]byte("new")), sha256.Sum256([]byte("other"))
	mw, _ := clockedMiddleware(t, httplimit.Options{
		Plans: []*httplimit.Plan{plan},
		Keys:  []httplimit.Key{{Name: "acme", SHA256: old}, {Name: "acme", SHA256: current}, {Name: "globex", SHA256: other}},
	})
	got, err := mw.Subject("name:acme")
	if err == nil {
		t.Fatalf("Subject(name:acme) = %q, nil; want an error: two keys are named acme", got)
	}
	for _, sum := range [][32]byte{old, current} {
		if !strings.Contains(err.Error(), "key:"+hex.EncodeToString(sum[:])) {
			t.Errorf("error %q does not list key:%x", err, sum)
		}
	}
	if got, err := mw.Subject("name:globex"); err != nil || got != "key:"+hex.EncodeToString(other[:]) {
		t.Errorf("Subject(name:globex) = %q, %v; want its key's subject", got, err)
	}
}
