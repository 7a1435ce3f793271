package migrate_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// kongTieReported reports whether a difference (not the same) of tr names
// routes a and b and says which one the import gives their requests to.
func kongTieReported(tr *migrate.Translation, a, b, to string) bool {
	for _, d := range tr.Differences {
		if !d.Same && strings.Contains(d.Text, "route "+a+" ") && strings.Contains(d.Text, "route "+b+" ") && strings.Contains(d.Text, "gives them to route "+to+",") {
			return true
		}
	}
	return false
}

// TestImportedKongRoutesOfTheSameRequests: Kong's router gives a request
// to one route, the one of the most priority points (hosts, methods,
// headers), whatever the order of the file; of routes of the same path,
// hosts and methods, its documentation leaves undefined which one takes
// it (and for a regular expression, the highest regex_priority first).
// The import gives such a request to the route listed last in the file,
// and says so naming both routes, so that one plugin counts it, not both.
// a.example/orders, which Kong gives route rb of that host whatever the
// order, the rule of route ra of any host leaves out on that host alone.
func TestImportedKongRoutesOfTheSameRequests(t *testing.T) {
	for _, c := range []struct {
		name, file string
		host       string
		want       int // of 8 requests to host/orders
		tie        [3]string
		// say, when set, is said of what the rules cannot do as Kong does.
		say string
	}{
		{"a route of a host before one of any host", `routes:
- {name: rb, hosts: [a.example], paths: [/orders], plugins: [{name: rate-limiting, config: {minute: 5, limit_by: ip}}]}
- {name: ra, paths: [/orders], plugins: [{name: rate-limiting, config: {minute: 3, limit_by: ip}}]}
`, "a.example", 5, [3]string{}, ""},
		{"another host goes to the route of any host", `routes:
- {name: rb, hosts: [a.example], paths: [/orders], plugins: [{name: rate-limiting, config: {minute: 5, limit_by: ip}}]}
- {name: ra, paths: [/orders], plugins: [{name: rate-limiting, config: {minute: 3, limit_by: ip}}]}
`, "b.example", 3, [3]string{}, ""},
		{"a route of a host before a service's of any host", `services:
- name: a
  routes: [{name: ra, hosts: [a.example], paths: [/orders], plugins: [{name: rate-limiting, config: {minute: 3, limit_by: ip}}]}]
- name: b
  plugins: [{name: rate-limiting, config: {minute: 5, limit_by: ip}}]
  routes: [{name: rb, paths: [/orders]}, {name: rx, paths: [/x]}]
`, "a.example", 3, [3]string{}, ""},
		{"two plugins", `routes:
- {name: ra, paths: [/orders], plugins: [{name: rate-limiting, config: {minute: 3, limit_by: ip}}]}
- {name: rb, paths: [/orders], plugins: [{name: rate-limiting, config: {minute: 5, limit_by: ip}}]}
`, "a.example", 5, [3]string{"ra", "rb", "rb"}, ""},
		{"two services' plugins, the later first", `services:
- name: b
  routes: [{name: rb, hosts: [a.example], paths: [/orders], plugins: [{name: rate-limiting, config: {minute: 5, limit_by: ip}}]}]
- name: a
  plugins: [{name: rate-limiting, config: {minute: 3, limit_by: ip}}]
  routes: [{name: ra, hosts: [a.example], paths: [/orders]}, {name: rx, paths: [/x]}]
`, "a.example", 3, [3]string{"rb", "ra", "ra"}, ""},
		{"a plugin's route, then one without", `routes:
- {name: ra, paths: [/orders], plugins: [{name: rate-limiting, config: {minute: 3, limit_by: ip}}]}
- {name: rb, paths: [/orders]}
- {name: rc, paths: [/c], plugins: [{name: rate-limiting, config: {minute: 1, limit_by: ip}}]}
`, "a.example", 8, [3]string{"ra", "rb", "rb"}, ""},
		{"a route without a plugin, then a plugin's", `routes:
- {name: rb, paths: [/orders]}
- {name: ra, paths: [/orders], plugins: [{name: rate-limiting, config: {minute: 3, limit_by: ip}}]}
`, "a.example", 3, [3]string{"rb", "ra", "ra"}, ""},
		{"a global plugin on the later route", `plugins: [{name: rate-limiting, config: {minute: 3, limit_by: ip}}]
routes:
- {name: rb, paths: [/orders], plugins: [{name: rate-limiting, config: {minute: 5, limit_by: ip}}]}
- {name: ra, paths: [/orders]}
- {name: rc, paths: [/c]}
`, "a.example", 3, [3]string{"rb", "ra", "ra"}, ""},
		{"a regex_priority decides", `routes:
- {name: ra, paths: ["~/orders$"], regex_priority: 2, plugins: [{name: rate-limiting, config: {minute: 3, limit_by: ip}}]}
- {name: rb, paths: ["~/orders$"], plugins: [{name: rate-limiting, config: {minute: 5, limit_by: ip}}]}
`, "a.example", 3, [3]string{}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr, err := migrate.Import("kong", "_format_version: \"3.0\"\n"+c.file, "kong.yaml")
			if err != nil {
				t.Fatal(err)
			}
			load(t, tr, true)
			if n := admitted(serveImported(t, tr), c.host, "/orders", "", "192.0.2.1", 8); n != c.want {
				t.Errorf("%s/orders: %d of 8 admitted, want %d", c.host, n, c.want)
			}
			if c.say != "" && !slices.ContainsFunc(tr.Differences, func(d migrate.Difference) bool { return !d.Same && strings.Contains(d.Text, c.say) }) {
				t.Errorf("no difference says %q: %+v", c.say, tr.Differences)
			}
			if c.tie[0] != "" && !kongTieReported(tr, c.tie[0], c.tie[1], c.tie[2]) {
				t.Errorf("no difference names routes %s and %s and gives their requests to %s: %+v", c.tie[0], c.tie[1], c.tie[2], tr.Differences)
			}
		})
	}
}
