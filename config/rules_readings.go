package config

import (
	"cmp"
	"strings"

	"github.com/sluice-dev/sluice/internal/routes"
)

// witnessReading is a reading of a witness's path, as httplimit reads a
// request's: flags say how it is made from the path (see httplimit's
// readingFlags): without its trailing slash, then without its format
// suffix, in lower case.
type witnessReading struct {
	path  string
	flags uint8
	from  string // of a reading without a format suffix, the path with it
}

// Flags of a witnessReading.
const (
	unslashedWitness uint8 = 1 << iota
	unformattedWitness
	loweredWitness
)

// witnessReadings returns the readings of the clean path p: as it is,
// without a trailing slash, then without a format suffix; then those in
// lower case.
func witnessReadings(p string) []witnessReading {
	var out []witnessReading
	for _, lowered := range []bool{false, true} {
		var f uint8
		if lowered {
			p, f = strings.ToLower(p), loweredWitness
		}
		out = append(out, witnessReading{path: p, flags: f})
		u, _ := routes.Unslashed(p)
		if u != "" {
			out = append(out, witnessReading{path: u, flags: f | unslashedWitness})
		}
		b := cmp.Or(u, p)
		if uf, ok := routes.Unformatted(b); ok {
			out = append(out, witnessReading{path: uf, flags: f | unslashedWitness | unformattedWitness, from: b})
		}
	}
	return out
}

// leftOutReading reports whether the i-th of rs is left out: an
// exception matches it (hit) or a reading that respells it, whose flags
// include its own, unslashedWitness aside (httplimit's respelled: the
// witness /v1/admin/ that except /v1/admin/ matches is left out whole,
// not read as /v1/admin below /v1/).
func leftOutReading(rs []witnessReading, hit []bool, i int) bool {
	for j := range rs {
		if hit[j] && (rs[j].flags|unslashedWitness)&rs[i].flags == rs[i].flags {
			return true
		}
	}
	return false
}
