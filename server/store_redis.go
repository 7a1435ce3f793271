package server

import (
	"errors"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/memory"
)

// openRedis is wired when the Redis store lands.
func openRedis(cfg *config.Config, opts ...memory.Option) (*OpenedStore, error) {
	return nil, errors.New("server: the redis store is not wired into the server yet; use store.type: memory")
}
