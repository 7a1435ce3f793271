package redis

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/internal/redistest"
)

// The store groups checks by the slot Redis Cluster itself computes,
// hash tags included.
func TestSlotIsRedisClusterKeyslot(t *testing.T) {
	t.Parallel()
	c := redistest.Cluster(t)
	keys := []string{"", "a", "foo", "123456789", Key("user-42", "per-minute"), Key("user-42", "per-day"),
		Key("a{b}c", "x"), Key("}odd", "x"), Key("", "x"), "{}", "{{a}}", "x{}y{z}", "ümlaut{ö}"}
	for i := range 200 {
		keys = append(keys, Key(fmt.Sprintf("subject-%d", i*7919), "l"))
	}
	for _, k := range keys {
		v, err := c.Masters[0].Do("CLUSTER", "KEYSLOT", k)
		if err != nil {
			t.Fatal(err)
		}
		if want := v.(int64); int64(slot(k)) != want {
			t.Errorf("slot(%q) = %d, Redis says %d", k, slot(k), want)
		}
	}
}

// keySubjects returns subjects of every kind Key meets: plain ones, the
// empty one, ones of braces and percent signs anywhere, binary bytes, and
// the longest a Check may carry; n of them drawn at random besides.
func keySubjects(n int) []string {
	subjects := []string{"user-42", "a", "%", "%7D", "", "{", "}", "{}", "}{", "}lead", "trail}", "a{b}c",
		"{x}:per-minute", "tenant:{a}:user:{b}", "%7B}", "\x00", "\x00}\xff{", "ümlaut{ö}",
		strings.Repeat("}", 1024), strings.Repeat("{%}", 341), strings.Repeat("x", 1024)}
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("{}%:ab7BD\x00\xff")
	for range n {
		b := make([]byte, r.IntN(24))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		subjects = append(subjects, string(b))
	}
	return subjects
}

// keysOf returns every key the store writes for subject: two limits'
// states, a reset key and a charge id's key.
func keysOf(subject string) []string {
	return []string{Key(subject, "per-minute"), Key(subject, "per-day"),
		resetKey(Key(subject, "per-minute")), chargeIDKey(Key(subject, "per-day"), "id-}{")}
}

// Every key of a subject has a hash tag that Redis Cluster uses — not
// empty: CLUSTER KEYSLOT of the key is that of its tag alone — and lies in
// the one slot the store computes for the subject (subjectSlot, which
// Node and the slot groups go by), whatever the subject holds.
func TestEveryKeyOfASubjectIsInItsSlotAsRedisSays(t *testing.T) {
	t.Parallel()
	c := redistest.Cluster(t)
	keyslot := func(k string) int64 {
		t.Helper()
		v, err := c.Masters[0].Do("CLUSTER", "KEYSLOT", k)
		if err != nil {
			t.Fatal(err)
		}
		return v.(int64)
	}
	for _, s := range keySubjects(300) {
		want := int64(subjectSlot(s))
		for _, k := range keysOf(s) {
			tag, ok := hashTag(k)
			if !ok {
				t.Errorf("subject %q: key %q has no hash tag", s, k)
				continue
			}
			if got, ofTag := keyslot(k), keyslot(tag); got != want || ofTag != want {
				t.Errorf("subject %q: Redis puts key %q in slot %d and its tag %q in %d; the store says %d", s, k, got, tag, ofTag, want)
			}
		}
	}
}

// hashTag returns the hash tag of key as Redis Cluster reads it: the text
// between the first "{" and the first "}" after it, when not empty.
func hashTag(key string) (string, bool) {
	_, rest, ok := strings.Cut(key, "{")
	if !ok {
		return "", false
	}
	tag, _, ok := strings.Cut(rest, "}")
	return tag, ok && tag != ""
}

// parseKey reads a state's key back into its subject and limit name, by
// the layout Key documents: "sluice:{" subject "}:" limit for a plain
// subject, "sluice:%{" encoded subject "}:" limit for any other. ok is
// false for any text Key never returns.
func parseKey(key string) (subject, limit string, ok bool) {
	rest, odd := strings.CutPrefix(key, "sluice:%{")
	if !odd {
		if rest, ok = strings.CutPrefix(key, "sluice:{"); !ok {
			return "", "", false
		}
	}
	end := strings.IndexByte(rest, '}')
	if end < 0 || !strings.HasPrefix(rest[end:], "}:") {
		return "", "", false
	}
	tag, limit := rest[:end], rest[end+2:]
	if !odd {
		return tag, limit, tag != "" && !strings.Contains(tag, "{")
	}
	if tag == "%" {
		return "", limit, true
	}
	var b strings.Builder
	for i := 0; i < len(tag); i++ {
		if tag[i] != '%' {
			b.WriteByte(tag[i])
			continue
		}
		switch tag[min(i+1, len(tag)):min(i+3, len(tag))] {
		case "25":
			b.WriteByte('%')
		case "7B":
			b.WriteByte('{')
		case "7D":
			b.WriteByte('}')
		default:
			return "", "", false
		}
		i += 2
	}
	subject = b.String()
	return subject, limit, subject == "" || strings.ContainsAny(subject, "{}")
}

// Key is injective — parseKey undoes it — and slot-stable: every key of a
// subject has a hash tag that is not empty and lies in subjectSlot's
// slot. A plain subject's key is "sluice:{" subject "}:" limit, byte for
// byte, as it always was.
func FuzzKeyIsInjectiveAndSlotStable(f *testing.F) {
	for _, s := range keySubjects(50) {
		f.Add(s, "}"+s)
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		for _, s := range []string{a, b} {
			k := Key(s, "per-minute")
			if subject, limit, ok := parseKey(k); !ok || subject != s || limit != "per-minute" {
				t.Fatalf("Key(%q, per-minute) = %q, which reads back as %q, %q (%v)", s, k, subject, limit, ok)
			}
			if s != "" && !strings.ContainsAny(s, "{}") && k != "sluice:{"+s+"}:per-minute" {
				t.Fatalf("Key(%q, per-minute) = %q: a plain subject's key changed", s, k)
			}
			for _, key := range keysOf(s) {
				if _, ok := hashTag(key); !ok {
					t.Fatalf("subject %q: key %q has no hash tag", s, key)
				}
				if slot(key) != subjectSlot(s) {
					t.Fatalf("subject %q: key %q in slot %d, the subject's is %d", s, key, slot(key), subjectSlot(s))
				}
			}
		}
		if a != b && Key(a, "l") == Key(b, "l") {
			t.Fatalf("subjects %q and %q share the key %q", a, b, Key(a, "l"))
		}
	})
}
