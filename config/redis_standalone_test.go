package config_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// store.redis in standalone mode (the default) is one Redis server: the
// store connects to the first address alone, so a second (a replica, or a
// server meant for failover) would never be used. A list of more than one
// is refused at its second address, naming the modes of several.
func TestStandaloneWithSeveralAddressesIsRefused(t *testing.T) {
	for _, mode := range []string{"", "    mode: standalone\n"} {
		y := "store:\n  type: redis\n  redis:\n" + mode + "    addresses: [\"redis-a:6379\", \"redis-b:6379\"]\n" + onePlan
		c, err := config.Parse("s.yaml", []byte(y))
		if err == nil {
			t.Errorf("mode %q: loads with addresses %v, of which a standalone store dials the first alone; want the list refused",
				c.Store.Redis.Mode, c.Store.Redis.Addresses)
			continue
		}
		es := config.Errors(err)
		if len(es) != 1 || es[0].Path != "store.redis.addresses[1]" || !strings.Contains(es[0].Msg, "mode: sentinel") {
			t.Errorf("%v, want one error at store.redis.addresses[1]", err)
		}
	}
	for _, mode := range []string{"mode: cluster", "mode: sentinel, master_name: m"} {
		y := "store: {type: redis, redis: {" + mode + ", addresses: [\"redis-a:6379\", \"redis-b:6379\"]}}\n" + onePlan
		if _, err := config.Parse("s.yaml", []byte(y)); err != nil {
			t.Errorf("%s with two addresses: %v", mode, err)
		}
	}
}
