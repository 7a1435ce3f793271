package dialaddr

import (
	"strings"
	"testing"
)

// Check takes what a client dials and refuses the rest with a reason that
// never quotes the address, which may hold a password.
func TestCheckTakesAddressesToDialAndNeverQuotesOneItRefuses(t *testing.T) {
	for _, s := range []string{"redis.internal:6379", "[::1]:6379", "10.0.0.1:65535", "r.example:http"} {
		if err := Check(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	for _, s := range []string{"", "secret", ":6379", "secret@r.example:6379", "r.example/secret:6379",
		"r.example?secret:6379", "r.example#secret:6379", "r.example:0", "r.example:65536", "r.example:secret",
		"redis://u:secret@r.example:6379", "[secret:6379",
		"r.example\x7fsecret:6379", "r.example\x00secret:6379", "r.example\u0085secret:6379", "r.example\xffsecret:6379"} {
		if err := Check(s); err == nil || strings.Contains(err.Error(), "secret") {
			t.Errorf("%q: %v, want refused without quoting it", s, err)
		}
	}
}
