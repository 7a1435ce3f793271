package config_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// Two listeners on one port could not both open: the configuration that
// says so is refused at the address read from it, rather than passing
// sluice check (and a reload, which only warns that listeners change at
// the next start) and failing the next start.
func TestListenersTakeAPortEach(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	for _, c := range []struct{ yaml, want string }{
		{"listen: \"127.0.0.1:9090\"\n", `l.yaml:3:9: listen: "127.0.0.1:9090" takes the port of admin.listen ("127.0.0.1:9090")`},
		{"listen: \":9090\"\n", `l.yaml:3:9: listen: ":9090" takes the port of admin.listen ("127.0.0.1:9090")`},
		{"admin: {listen: \"0.0.0.0:8080\"}\n", `l.yaml:3:17: admin.listen: "0.0.0.0:8080" takes the port of listen (":8080")`},
		{"envoy: {rules: [r.yaml], listen: \"127.0.0.1:9090\"}\n", `l.yaml:3:34: envoy.listen: "127.0.0.1:9090" takes the port of admin.listen ("127.0.0.1:9090")`},
		{"listen: \"localhost:9090\"\n", `l.yaml:3:9: listen: "localhost:9090" takes the port of admin.listen ("127.0.0.1:9090")`},
		{"listen: \"0.0.0.0:8080\"\nadmin: {listen: \"LocalHost:8080\"}\n", `l.yaml:4:17: admin.listen: "LocalHost:8080" takes the port of listen ("0.0.0.0:8080")`},
	} {
		_, err := config.Parse("l.yaml", []byte(plans+c.yaml))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: %v, want %s", c.yaml, err, c.want)
		}
	}
	for _, ok := range []string{
		"listen: \"127.0.0.2:9090\"\n",
		"listen: \"[::1]:9090\"\n",
		"listen: \"127.0.0.1:0\"\nadmin: {listen: \"127.0.0.1:0\"}\n",
		"envoy: {rules: [r.yaml]}\n",
	} {
		if _, err := config.Parse("l.yaml", []byte(plans+ok)); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}

// A timeout under a millisecond ends everything it bounds (every request,
// every simulation, every Redis call): refused at its line.
func TestTimeoutsHaveAFloor(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	for _, c := range []struct{ section, want string }{
		{"connections: {read_header_timeout: 1ns}", `t.yaml:3:36: connections.read_header_timeout: 1ns: a timeout under 1ms ends everything it bounds; give at least 1ms`},
		{"connections: {idle_timeout: 500us}", `t.yaml:3:29: connections.idle_timeout: 500µs: a timeout under 1ms ends everything it bounds; give at least 1ms`},
		{"designer: {timeout: 10ns}", `t.yaml:3:21: designer.timeout: 10ns: a timeout under 1ms ends everything it bounds; give at least 1ms`},
		{"store: {type: redis, redis: {addresses: [\"r:6379\"], timeout: 1us}}", `t.yaml:3:62: store.redis.timeout: 1µs: a timeout under 1ms ends everything it bounds; give at least 1ms`},
	} {
		_, err := config.Parse("t.yaml", []byte(plans+c.section+"\n"))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n%v\nwant exactly:\n%s", c.section, err, c.want)
		}
	}
	if _, err := config.Parse("t.yaml", []byte(plans+"connections: {read_header_timeout: 1ms, write_timeout: 30s}\n")); err != nil {
		t.Errorf("timeouts of 1ms and 30s: %v", err)
	}
}
