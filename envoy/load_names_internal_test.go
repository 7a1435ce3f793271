package envoy

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice"
)

// joinedName is the derived name as it is defined on the path written
// out whole (see place.name): the names of rules kept in metrics and
// headers must not change from one version to the next.
func joinedName(trail []string) string {
	full := strings.Join(trail, ".")
	b := make([]byte, 0, len(full))
	for i := 0; i < len(full); i++ {
		c := full[i]
		if !sluice.ValidName(string(c)) {
			c = '_'
		}
		if c == '_' && (len(b) == 0 || b[len(b)-1] == '.' || b[len(b)-1] == '_') {
			continue
		}
		b = append(b, c)
	}
	if len(b) == 0 {
		b = append(b, "descriptor"...)
	}
	if len(b) > 64 {
		sum := sha256.Sum256([]byte(full))
		b = append(b[:55], '-')
		b = append(b, hex.EncodeToString(sum[:4])...)
	}
	return string(b)
}

// A rule's derived name is its path's, cleaned and cut as joinedName
// does it, whatever the keys and values (any bytes, '_', '.' and '-'
// among them, empty once cleaned, or longer than a name), however deep;
// and a rate_limit.name that is not a limit name is made one as a path of
// one segment, whatever its length.
func TestDerivedNamesAreThoseOfThePathJoined(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "ab_._-/:* é\x00"
	word := func() string {
		n := rng.IntN(12)
		if rng.IntN(8) == 0 {
			n = 30 + rng.IntN(maxHashedText-30)
		}
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	scalar := func(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: s} }
	for range 5_000 {
		var bytes int64
		at := newPlace(&bytes)
		var trail []string
		for range 1 + rng.IntN(6) {
			key, value := word(), ""
			if key == "" {
				key = "k"
			}
			if rng.IntN(2) == 0 {
				value = word()
			}
			var vt *text
			seg := key
			if value != "" {
				vt, seg = at.text(scalar(value), value), key+"_"+value
			}
			at = at.child(at.text(scalar(key), key), vt)
			trail = append(trail, seg)
		}
		if got, want := at.name(), joinedName(trail); got != want {
			t.Fatalf("path %q: named %q, want %q", trail, got, want)
		}
		name := word()
		if rng.IntN(4) == 0 {
			name += strings.Repeat("x/", maxHashedText)
		}
		var c cleaned
		tx := at.text(scalar(name), name)
		c.add(tx)
		if got, want := c.name(func() []byte { return tx.sum[:] }), joinedName([]string{name}); got != want {
			t.Fatalf("name %q: made %q, want %q", name, got, want)
		}
	}
}
