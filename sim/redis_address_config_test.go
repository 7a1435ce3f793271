package sim

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// The designer writes a ready configuration (docs/designer.md), so it
// takes a Redis address exactly when sluice check would: a host holding
// a URL's user information, query or path, or a port of 0, is refused as
// the configuration refuses it, with the refused address's password never
// shown; so is an environment variable ("${REDIS_HOST}:6379", which the
// configuration never expands), and a control character (U+007F), which
// no host holds and a YAML file cannot hold as written; a bracketed IPv6
// host, a service's name as the port and several addresses are written
// and load.
func TestTheDesignerTakesTheRedisAddressesTheConfigurationTakes(t *testing.T) {
	type addresses struct {
		addrs []string
		ok    bool
	}
	cases := []addresses{
		{[]string{"secret@r.example:6379"}, false},
		{[]string{"redis://sluice:secret@r.example:6379"}, false},
		{[]string{"r.example/0:6379"}, false},
		{[]string{"r.example?password=secret:6379"}, false},
		{[]string{"r.example:0"}, false},
		{[]string{"r.example:65536"}, false},
		{[]string{"${REDIS_HOST}:6379"}, false},
		{[]string{"r\x7fx:6379"}, false},
		{[]string{"[::1]:6379"}, true},
		{[]string{"r.example:http"}, true}, // a service net.LookupPort knows everywhere
		{[]string{"10.0.0.1:6379", "10.0.0.2:6379", "[::1]:6380"}, true},
	}
	if _, err := net.LookupPort("tcp", "redis"); err == nil { // named where /etc/services names it
		cases = append(cases, addresses{[]string{"r.example:redis"}, true})
	}
	for _, tc := range cases {
		req := Requirements{Rate: "100/1m", Instances: 3, Store: "redis", RedisMode: "cluster", RedisAddresses: tc.addrs, MaxArrivals: testBudget}
		a, err := Design(context.Background(), req)
		if !tc.ok {
			if err == nil {
				t.Errorf("%q: designed, want refused as the configuration refuses it", tc.addrs)
			} else if !strings.Contains(err.Error(), "redis_addresses[0]") || strings.Contains(err.Error(), "secret") {
				t.Errorf("%q: %v, want refused at redis_addresses[0] without the secret", tc.addrs, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.addrs, err)
			continue
		}
		if _, err := config.Parse("design.yaml", []byte(a.Config)); err != nil {
			t.Errorf("%q: the configuration written does not load: %v", tc.addrs, err)
		}
	}
}
