package config

import (
	"time"

	"github.com/sluice-dev/sluice/internal/yamlcheck"
)

// Error is one problem in a configuration file, located at the line and
// column of the offending node and named by its field path:
//
//	examples/sluice.yaml:14:17: plans.free.limits[1].window: "1 fortnight" is not a duration (use e.g. 30s, 1m, 24h, 7d)
type Error = yamlcheck.Error

// Errors returns every *Error in err (as Load returns them, joined), in
// file order.
func Errors(err error) []*Error { return yamlcheck.Errors(err) }

// ParseDuration is time.ParseDuration plus a day unit: "7d", "1d12h".
func ParseDuration(s string) (time.Duration, error) { return yamlcheck.ParseDuration(s) }
