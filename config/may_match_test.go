package config

import "testing"

// mayMatch only spares exemptCovers pairs it would refuse: of every two
// patterns of methods, hosts and paths that ServeMux tells apart by
// escapes, wildcards, {$}, trailing slashes and the redirect to one, no
// exempt route that covers a cost is filtered out.
func TestMayMatchKeepsEveryExemptRouteThatCovers(t *testing.T) {
	var patterns []string
	for _, method := range []string{"", "GET ", "HEAD ", "POST "} {
		for _, host := range []string{"", "a.example"} {
			for _, path := range []string{"/", "/a", "/a/", "/a/{$}", "/{x}", "/{x}/", "/{x...}", "/a/b", "/a/{y}",
				"/%61", "/%61/b", "/a%2Fb", "/a/b%2Fc", "/b", "/a/b/", "/{x}/b", "/a/{y...}", "/{$}"} {
				patterns = append(patterns, method+host+path)
			}
		}
	}
	covered := 0
	for _, exempt := range patterns {
		for _, cost := range patterns {
			if !exemptCovers(exempt, cost) {
				continue
			}
			covered++
			if !mayMatch(partsOf(exempt), partsOf(cost)) {
				t.Errorf("exempt %q covers cost %q, and mayMatch says it cannot match", exempt, cost)
			}
		}
	}
	if covered == 0 {
		t.Fatal("no exempt route covers a cost: the patterns test nothing")
	}
}
