package migrate_test

import (
	"slices"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportedKongCatchAllWhateverTheOrder: a catch-all service's plugin
// (route web on /, 2 a minute by address) does not count the requests of
// route orders (/orders), which Kong's router gives to orders, the more
// specific route, whatever the order of the two services in the file;
// orders's service has a plugin of its own (5 a minute), which alone
// counts /orders: web's rule leaves out /orders and /orders/
// (except_paths).
func TestImportedKongCatchAllWhateverTheOrder(t *testing.T) {
	web := `- name: web
  plugins: [{name: rate-limiting, config: {minute: 2, limit_by: ip}}]
  routes: [{name: web, paths: [/]}]
`
	shop := `- name: shop
  plugins: [{name: rate-limiting, config: {minute: 5, limit_by: ip}}]
  routes: [{name: orders, paths: [/orders]}]
`
	for _, order := range []struct{ name, services string }{{"web first", web + shop}, {"web last", shop + web}} {
		t.Run(order.name, func(t *testing.T) {
			tr, err := migrate.Import("kong", "_format_version: \"3.0\"\nservices:\n"+order.services, "kong.yaml")
			if err != nil {
				t.Fatal(err)
			}
			load(t, tr, true)
			expectRequests(t, serveImported(t, tr), []request{
				{"GET", "a.example", "/orders", "192.0.2.1", 200},
				{"GET", "a.example", "/orders/1", "192.0.2.1", 200},
				{"GET", "a.example", "/orders", "192.0.2.1", 200},
				{"GET", "a.example", "/", "192.0.2.1", 200},
				{"GET", "a.example", "/billing", "192.0.2.1", 200},
				{"GET", "a.example", "/", "192.0.2.1", 429}, // 2 a minute on web
			})
			var webRule *migrate.Rule
			for k := range tr.SluiceRules {
				if tr.SluiceRules[k].Name == "web" {
					webRule = &tr.SluiceRules[k]
				}
			}
			if webRule == nil || !slices.Equal(webRule.ExceptPaths, []string{"/orders", "/orders/"}) {
				t.Errorf("web's rule does not leave out /orders and /orders/: %+v", tr.SluiceRules)
			}
		})
	}
}
