//go:build !race

package failover_test

// raceEnabled: the race detector is on; sync.Pool then drops items at
// random, so allocation counts say nothing.
const raceEnabled = false
