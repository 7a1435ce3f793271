package migrate_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportKongConsumerPlanWhereAuthIsNotGlobal: Kong names a request's
// consumer only where an authentication plugin runs, so a consumer's
// rate-limiting plugin applies on those routes only; a sluice plan
// applies to a listed key on every path. When key-auth covers some
// services or routes only, the report names the routes where the
// consumer's plan applies in sluice and not in Kong.
func TestImportKongConsumerPlanWhereAuthIsNotGlobal(t *testing.T) {
	const consumers = `
plugins:
  - name: rate-limiting
    config: {minute: 100}
consumers:
  - username: alice
    keyauth_credentials: [{key: alice-key}]
    plugins:
      - name: rate-limiting
        config: {minute: 5}
`
	scoped, err := migrate.Import("kong", `_format_version: "3.0"
services:
  - name: api
    url: http://api
    plugins: [{name: key-auth}]
    routes: [{name: api, paths: [/api]}]
  - name: web
    url: http://web
    routes: [{name: web, paths: [/web]}]
`+consumers, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, d := range scoped.Differences {
		if !d.Same && strings.Contains(d.Text, "route web") && strings.Contains(d.Text, "consumer-alice") {
			found = true
		}
	}
	if !found {
		t.Errorf("no difference says that plan consumer-alice applies on route web, where Kong names no consumer: %+v", scoped.Differences)
	}

	global, err := migrate.Import("kong", `_format_version: "3.0"
services:
  - name: api
    url: http://api
    routes: [{name: api, paths: [/api]}]
  - name: web
    url: http://web
    routes: [{name: web, paths: [/web]}]
`+strings.Replace(consumers, "plugins:\n", "plugins:\n  - name: key-auth\n", 1), "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range global.Differences {
		if strings.Contains(d.Text, "route web") {
			t.Errorf("key-auth runs everywhere, yet the report says %q", d.Text)
		}
	}
}
