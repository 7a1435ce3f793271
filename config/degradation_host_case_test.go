package config_test

import (
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// A route is in one degradation class, however its host is spelled: the
// server's class muxes match hosts in any case and without the root dot,
// so API.example.com/pay and api.example.com./pay are api.example.com/pay,
// and listing it as expensive and as critical is refused at the second
// listing (else the critical one would decide, and the route the file
// calls expensive would never be shed).
func TestARouteInTwoClassesByItsHostsSpellingIsRefused(t *testing.T) {
	for _, host := range []string{"API.example.com", "api.example.com."} {
		y := onePlan + "degradation:\n  classes:\n    expensive: [\"POST " + host + "/pay\"]\n    critical: [\"POST api.example.com/pay\"]\n"
		c, err := config.Parse("d.yaml", []byte(y))
		if err == nil {
			t.Errorf("expensive %q and critical %q load (expensive %v, critical %v); want the second refused at d.yaml:7",
				"POST "+host+"/pay", "POST api.example.com/pay", c.Degradation.Expensive, c.Degradation.Critical)
			continue
		}
		if es := config.Errors(err); len(es) != 1 || es[0].Line != 7 || es[0].Path != "degradation.classes.critical[0]" {
			t.Errorf("%s: %v, want one error at degradation.classes.critical[0], line 7", host, err)
		}
	}
}

// Within one class, two patterns whose hosts differ only in spelling are
// judged as the server's mux holds them, hosts in lower case: one route
// twice, or two wildcards of one route, is refused as a conflict.
func TestAClassHoldsOneRouteOnceWhateverItsHostsSpelling(t *testing.T) {
	y := onePlan + "degradation:\n  classes:\n    expensive: [\"GET API.example.com/a/{x}\", \"GET api.example.com/a/{y}\"]\n"
	_, err := config.Parse("d.yaml", []byte(y))
	if es := config.Errors(err); len(es) != 1 || es[0].Path != "degradation.classes.expensive[1]" {
		t.Errorf("%v, want one error at degradation.classes.expensive[1]", err)
	}
}
