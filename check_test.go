package sluice

import (
	"testing"
	"time"
)

// Check.valid is Check.validate() == nil.
func TestCheckValidIsValidateNil(t *testing.T) {
	long := string(make([]byte, MaxKeyLen+1))
	for _, c := range []Check{
		{Key: "k", Limit: PerSecond(1), Cost: 1}, {Key: "", Limit: PerSecond(1)}, {Key: long, Limit: PerSecond(1)},
		{Key: long[:MaxKeyLen], Limit: PerSecond(1)}, {Key: "k", Limit: PerSecond(1), Cost: -1}, {Key: "k"},
		{Key: "k", Limit: PerSecond(0)}, {Key: "k", Limit: GCRA(999_983, 24*time.Hour).WithBurst(MaxQuantity)},
	} {
		if c.valid() != (c.validate() == nil) {
			t.Errorf("check of key length %d, limit %v, cost %d: valid %v, validate %v", len(c.Key), c.Limit, c.Cost, c.valid(), c.validate())
		}
	}
}
