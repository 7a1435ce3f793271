package envoy_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/envoy"
)

// chainFile returns a rules file of one chain of depth descriptors, each
// with a rule and no name, written in flow style.
func chainFile(depth int) string {
	return "domain: api\ndescriptors: " +
		strings.Repeat("[{key: k, rate_limit: {unit: second, requests_per_unit: 5}, descriptors: ", depth) +
		"[]" + strings.Repeat("}]", depth) + "\n"
}

// loadAlloc loads file, which must hold limits rules, and returns the
// bytes the load allocated.
func loadAlloc(t *testing.T, file string, limits int) uint64 {
	t.Helper()
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	r, err := envoy.LoadRules("rules.yaml", []byte(file))
	runtime.ReadMemStats(&m1)
	if err != nil {
		t.Fatalf("a %d-byte file: %v", len(file), err)
	}
	if n := len(r.Limits()); n != limits {
		t.Fatalf("%d limits, want %d", n, limits)
	}
	return m1.TotalAlloc - m0.TotalAlloc
}

// docs/envoy.md: loading a file takes time growing with its size. A chain
// of descriptors 4 times as deep (a file 4 times as large) costs about 4
// times as much to load, not 16, as it would if the alias expansion and
// the decoder wrote out the field path of every node (~15 bytes a level)
// rather than only that of a problem.
func TestLoadRulesDeepChainAllocatesLinearlyInItsDepth(t *testing.T) {
	small := loadAlloc(t, chainFile(400), 400)
	large := loadAlloc(t, chainFile(1600), 1600)
	if large > 8*small {
		t.Errorf("a chain 4 times as deep allocated %.1f times as much (%d MB, against %d MB): want about 4 times",
			float64(large)/float64(small), large>>20, small>>20)
	}
}

// A problem deep in a chain is still named by its full field path.
func TestLoadRulesDeepChainErrorNamesItsPath(t *testing.T) {
	file := strings.Replace(chainFile(3), "[]", "[{key: k, rate_limit: {unit: fortnight, requests_per_unit: 5}}]", 1)
	_, err := envoy.LoadRules("rules.yaml", []byte(file))
	want := `rules.yaml:2:` // the chain is written on line 2
	path := "descriptors[0].descriptors[0].descriptors[0].descriptors[0].rate_limit.unit: \"fortnight\" is not one of"
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), path) {
		t.Errorf("got %v, want an error at %s… naming %s", err, want, path)
	}
}
