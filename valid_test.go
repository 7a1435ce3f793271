package sluice

import (
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// valid, the Limiter's inlined check, agrees with validate on every check.
func TestPropertyValidIsValidate(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		limits := []Limit{GCRA(10, time.Second), FixedWindow(0, time.Second), {}, TokenBucket(1, time.Nanosecond), SlidingLog(5, time.Minute)}
		c := Check{
			Key:   strings.Repeat("k", rapid.OneOf(rapid.IntRange(0, 3), rapid.IntRange(MaxKeyLen-1, MaxKeyLen+1)).Draw(t, "key length")),
			Limit: limits[rapid.IntRange(0, len(limits)-1).Draw(t, "limit")],
			Cost:  rapid.Int64Range(-2, 2).Draw(t, "cost"),
		}
		if err := c.validate(); c.valid() != (err == nil) {
			t.Fatalf("%+v: valid %v, validate %v", c, c.valid(), err)
		}
	})
}
