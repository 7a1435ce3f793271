package config_test

import (
	"os"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// FuzzParse: any input either loads or fails with located errors; never a
// panic.
func FuzzParse(f *testing.F) {
	if b, err := os.ReadFile("../examples/sluice.yaml"); err == nil {
		f.Add(b)
	}
	f.Add([]byte("plans: {free: {limits: [{name: a, algorithm: gcra, quantity: 1, window: 1s}]}}"))
	f.Add([]byte("plans: [1, 2]\nkeys: {a: b}\n&x y: *x\n"))
	f.Add([]byte("proxy_protocol: [10.0.0.0/8, ::1]\nupstream: https://api\nupstream_tls: {server_name: api}\n" +
		"store: {type: redis, redis: {addresses: [\"r:1\"], tls: true, password_file: /dev/null}}\n" +
		"plans: {free: {limits: [{name: a, algorithm: gcra, quantity: 1, window: 1s}]}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := config.Parse("fuzz.yaml", data)
		if err != nil {
			for _, e := range config.Errors(err) {
				if e.File != "fuzz.yaml" || e.Line < 0 {
					t.Fatalf("bad error location: %+v", e)
				}
			}
			return
		}
		if c.Policy == nil || len(c.Policy.Plans) == 0 {
			t.Fatal("loaded without plans")
		}
		if err := c.HTTPLimitOptions().Validate(); err != nil {
			t.Fatalf("loaded options the middleware refuses: %v", err)
		}
	})
}
