package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// unitsConfig is testConfig with the free plan's limit a sliding log, whose
// state counts its array's room toward store.max_keys, and a store of 4,096.
var unitsConfig = strings.Replace(testConfig,
	"{name: per-minute, algorithm: fixed-window, quantity: 3, window: 1m}",
	"{name: per-minute, algorithm: sliding-log, quantity: 3, window: 1m}", 1) + `
store:
  type: memory
  max_keys: 4096
`

// TestMemoryMetricsShowUnitsAgainstTheBound: /metrics exports what the
// in-process store holds toward store.max_keys (a sliding log's state
// counts 1, and 1 more per 8 entries of its array's room) and the bound
// itself, so that a dashboard can draw how full the store is.
func TestMemoryMetricsShowUnitsAgainstTheBound(t *testing.T) {
	var mem *memory.Store
	f := newFixtureWith(t, unitsConfig, func(o *server.Options) {
		mem = memory.New(memory.WithMaxKeys(o.Config.Store.MaxKeys), memory.WithSweepInterval(0))
		o.Store, o.Memory = mem, mem
	})
	for range 5 {
		f.do(t, "GET", "/api/x", "", map[string]string{"X-API-Key": "demo-free-key"})
	}
	// One client, one log of 3 entries in an array of room 8: 2 units, 1 state.
	if st := mem.Stats(); st.Keys != 1 || st.Units != 2 {
		t.Fatalf("the store holds %d states, %d units; want 1 state of 2 units", st.Keys, st.Units)
	}
	body := readAll(t, f.do(t, "GET", "/metrics", "", nil))
	for _, want := range []string{
		"sluice_memory_keys 1\n",
		"sluice_memory_units 2\n",
		"sluice_memory_max_units 4096\n",
		"# HELP sluice_memory_units ",
		"# TYPE sluice_memory_units gauge\n",
		"# TYPE sluice_memory_max_units gauge\n",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if help := helpOf(body, "sluice_memory_no_room_total"); !strings.Contains(help, "grow") {
		t.Errorf("sluice_memory_no_room_total's help %q does not say a log that must grow is refused too", help)
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", memoryLines(body))
	}
}

// helpOf returns the HELP text of metric name in an exposition body.
func helpOf(body, name string) string {
	for _, line := range strings.Split(body, "\n") {
		if h, ok := strings.CutPrefix(line, "# HELP "+name+" "); ok {
			return h
		}
	}
	return ""
}

// memoryLines returns the lines of body about sluice_memory_ metrics.
func memoryLines(body string) string {
	var b strings.Builder
	for _, line := range strings.Split(body, "\n") {
		if strings.Contains(line, "sluice_memory_") {
			fmt.Fprintln(&b, line)
		}
	}
	return b.String()
}
