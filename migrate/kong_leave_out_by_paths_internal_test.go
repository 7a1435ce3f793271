package migrate

import (
	"slices"
	"testing"
)

// TestKongLeaveOutByPathsDropsOnlyThePluginsOwnRequests: where
// except_paths cannot leave a plugin's route ("/") out of a rule that
// covers a route below it ("/health"), the rule keeps its other patterns
// alone — but only where the plugin's routes take every request of the
// patterns it drops (their matches cover the rule's hosts and methods)
// and none of those it keeps (each match above a kept pattern leaves it
// out, as Kong's router gives it another route). Otherwise the rule is
// left as it was and the leaving out is refused.
func TestKongLeaveOutByPathsDropsOnlyThePluginsOwnRequests(t *testing.T) {
	wide := []string{"/health", "/health/", "/"}
	health := []string{"/health", "/health/"}
	cases := []struct {
		name      string
		ours      []RuleMatch
		ok        bool
		wantPaths []string
	}{
		{"the plugin's route leaving the other route out is dropped", []RuleMatch{{Paths: []string{"/"}, ExceptPaths: health}}, true, health},
		{"a route below that the plugin's route takes keeps the rule whole", []RuleMatch{{Paths: []string{"/"}}}, false, wide},
		{"a plugin's route of one host keeps the rule's other hosts", []RuleMatch{{Paths: []string{"/"}, Hosts: []string{"a.example"}, ExceptPaths: health}}, false, wide},
		{"a plugin's route of one method keeps the rule's other methods", []RuleMatch{{Paths: []string{"/"}, Methods: []string{"GET"}, ExceptPaths: health}}, false, wide},
		{"a plugin's route of a header keeps the rule's other requests", []RuleMatch{{Paths: []string{"/"}, Headers: []HeaderMatch{{Name: "X-Tenant"}}, ExceptPaths: health}}, false, wide},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := Rule{Paths: slices.Clone(wide)}
			if ok := kongLeaveOutByPaths(&r, []string{"/"}, c.ours); ok != c.ok || !slices.Equal(r.Paths, c.wantPaths) || len(r.ExceptPaths) > 0 {
				t.Errorf("kongLeaveOutByPaths: %t, paths %q except %q; want %t, paths %q", ok, r.Paths, r.ExceptPaths, c.ok, c.wantPaths)
			}
		})
	}
}
