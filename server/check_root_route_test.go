package server_test

import (
	"testing"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/server"
)

// "/{p...}" and "/" are one route (routes.Normal; ServeMux: "matches the
// same requests"), and config.Parse takes either as a plan's cost or a
// degradation class's route: the server takes them alike.
func TestCheckTakesTheRootWrittenAsARestWildcard(t *testing.T) {
	const plan = "plans:\n  free:\n    limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]\n"
	for _, root := range []string{`"/"`, `"/{p...}"`} {
		for name, y := range map[string]string{
			"plan cost":         plan + "    costs: {" + root + ": 2}\n",
			"degradation class": plan + "degradation: {classes: {expensive: [" + root + "]}}\n",
		} {
			cfg, err := config.Parse("t.yaml", []byte(y))
			if err != nil {
				t.Fatalf("%s %s: config.Parse: %v", name, root, err)
			}
			if err := server.Check(cfg); err != nil {
				t.Errorf("%s %s: server.Check: %v", name, root, err)
			}
		}
	}
}
