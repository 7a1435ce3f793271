package migrate_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/migrate"
)

// A route of many paths, hosts and methods is imported in about the time
// its file takes to read: what its rule matches is its paths, hosts and
// methods matched apart, found without joining each path with each host
// and method (601 paths and 601 hosts of 9 methods, a file of 12 KB, are
// 3,250,809 such joins).
func TestKongImportBoundsARouteOfManyPathsAndHosts(t *testing.T) {
	const n = 600
	var b strings.Builder
	b.WriteString("_format_version: \"3.0\"\nroutes:\n- name: r\n  plugins: [{name: rate-limiting, config: {minute: 3, limit_by: ip}}]\n  paths: [")
	for i := range n {
		fmt.Fprintf(&b, "/p%d, ", i)
	}
	b.WriteString("/z]\n  hosts: [")
	for i := range n {
		fmt.Fprintf(&b, "h%d.example, ", i)
	}
	b.WriteString("z.example]\n  methods: [GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS, TRACE, CONNECT]\n")
	src := b.String()
	// Measured beside a plain YAML decode of the file, on the same machine
	// at the same moment, the bound holds however loaded the machine is.
	start := time.Now()
	var doc any
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	read := time.Since(start)
	start = time.Now()
	tr, err := migrate.Import("kong", src, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 40*read+time.Second {
		t.Errorf("importing a route of %d paths and %d hosts (%d bytes) took %v, where decoding the file's YAML took %v", n+1, n+1, len(src), d, read)
	}
	if len(tr.SluiceRules) != 1 || len(tr.SluiceRules[0].Any) != 0 || len(tr.SluiceRules[0].Hosts) != n+1 || len(tr.SluiceRules[0].Methods) != 9 {
		t.Errorf("want one rule of the route's hosts and methods, no alternatives: %d rules", len(tr.SluiceRules))
	}
}
