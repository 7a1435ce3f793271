package config_test

import (
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// A route is in one degradation class: a pattern that matches the same
// requests as one of another class, written otherwise (other wildcard
// names, other spacing, an escaped letter, a subtree as {name...}: "GET
// /x/" and "GET /x/{rest...}"), is refused at its line as the
// same pattern is; patterns that only overlap are kept, each class being
// a ServeMux of its own.
func TestDegradationClassesRefuseOneRouteWrittenTwoWays(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	for _, c := range []struct{ classes, want string }{
		{`{expensive: ["POST /jobs/{id}/run"], critical: ["POST /jobs/{job}/run"]}`,
			`d.yaml:3:72: degradation.classes.critical[0]: "POST /jobs/{job}/run" is in expensive already (as "POST /jobs/{id}/run"): a route is in one class`},
		{`{critical: ["POST  /pay"], expensive: ["POST /pay"]}`,
			`d.yaml:3:63: degradation.classes.expensive[0]: "POST /pay" is in critical already (as "POST  /pay"): a route is in one class`},
		{`{health: ["GET /files/{p...}"], expensive: ["GET /fil%65s/{rest...}"]}`,
			`d.yaml:3:68: degradation.classes.expensive[0]: "GET /fil%65s/{rest...}" is in health already (as "GET /files/{p...}"): a route is in one class`},
		{`{expensive: ["GET /x/"], critical: ["GET /x/{rest...}"]}`,
			`d.yaml:3:60: degradation.classes.critical[0]: "GET /x/{rest...}" is in expensive already (as "GET /x/"): a route is in one class`},
	} {
		_, err := config.Parse("d.yaml", []byte(plans+"degradation: {classes: "+c.classes+"}\n"))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n%v\nwant exactly:\n%s", c.classes, err, c.want)
		}
	}
	for _, classes := range []string{
		`{expensive: ["POST /jobs/{id}/run"], critical: ["POST /jobs/{id}/run/{$}", "/jobs/{id}/run", "POST /jobs/{id}/run/"]}`,
		`{health: ["GET /h"], expensive: ["HEAD /h", "GET example.com/h"]}`,
	} {
		if _, err := config.Parse("d.yaml", []byte(plans+"degradation: {classes: "+classes+"}\n")); err != nil {
			t.Errorf("%s: %v", classes, err)
		}
	}
}

// A degradation class's pattern written as a glob ("POST /reports/*") is
// refused at its line: ServeMux reads "*" as itself, so the class would
// hold only that literal path, and the endpoints meant would never be shed
// or spared.
func TestDegradationClassesRefuseAGlob(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	_, err := config.Parse("d.yaml", []byte(plans+`degradation: {classes: {expensive: ["POST /reports/*"]}}`+"\n"))
	const want = `d.yaml:3:37: degradation.classes.expensive[0]: "POST /reports/*": segment "*" is no wildcard: ` +
		`ServeMux matches it as it is written, so it matches only the path with that segment (the subtree is "/reports/", one segment {name}, the rest {name...})`
	if err == nil || err.Error() != want {
		t.Errorf("%v\nwant exactly:\n%s", err, want)
	}
}
