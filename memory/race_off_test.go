//go:build !race

package memory_test

// raceEnabled: the race detector is on; it slows each decision tenfold,
// so the heap measurement runs without it (scripts/test).
const raceEnabled = false
