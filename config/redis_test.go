package config_test

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
)

// The store's Redis section reaches its fields, the durability option and
// a limit's id included.
func TestRedisSectionAndLimitID(t *testing.T) {
	c, err := config.Parse("t.yaml", []byte(`
store:
  type: redis
  redis: {addresses: ["127.0.0.1:6379"], on_store_error: deny, instances: 2, replicas: 1, replica_wait: 20ms}
plans:
  free: {limits: [{name: hourly, id: per-hour, algorithm: gcra, quantity: 10, window: 1h}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	r := c.Store.Redis
	if r.OnStoreError != "deny" || r.Instances != 2 || r.Replicas != 1 || r.ReplicaWait != 20*time.Millisecond {
		t.Errorf("redis section: %+v", r)
	}
	if l := c.Policy.Plans[0].Limits[0]; l.Name() != "hourly" || l.ID() != "per-hour" {
		t.Errorf("limit: name %q id %q, want hourly and per-hour", l.Name(), l.ID())
	}
	_, err = config.Parse("t.yaml", []byte(`
plans:
  free:
    limits:
      - {name: a, algorithm: gcra, quantity: 10, window: 1h}
      - {name: b, id: a, algorithm: gcra, quantity: 10, window: 1m}
`))
	if err == nil {
		t.Error("a limit whose id is another limit's name was accepted")
	}
}
