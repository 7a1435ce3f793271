package redis

import (
	"fmt"
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
