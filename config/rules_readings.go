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

// leftOutReading reports whether a reading of flags f is left out by
// the readings hit, bit g for a reading of flags g that an exception
// matched (see altRoutes.excepts): one of them has flags that include
// f, a reading that respells it.
func leftOutReading(hit uint8, f uint8) bool {
	for g := range uint8(8) {
		if hit&(1<<g) != 0 && g&f == f {
			return true
		}
	}
	return false
}
