package memory_test

import (
	"testing"

	"github.com/sluice-dev/sluice/memory"
)

// Stats.MaxUnits is the bound the store keeps: at most WithMaxKeys' n and
// at least 15/16 of it, whatever the shards it divides n among.
func TestStatsStateTheBound(t *testing.T) {
	for _, n := range []int{1 << 20, 1_000_000, 4096, 1000, 17, 16} {
		s := memory.New(memory.WithMaxKeys(n))
		got := s.Stats().MaxUnits
		s.Close()
		if got > n || got < n-n/16 {
			t.Errorf("WithMaxKeys(%d): MaxUnits %d, want within [%d, %d]", n, got, n-n/16, n)
		}
	}
}
