package sim

import (
	"context"
	"strings"
	"testing"
)

// Every value a requirements file gets wrong is reported as the
// configuration's errors are: file:line:col, the field's path, and what
// is wrong with it, whether the reader refuses it (a wrong type, an
// unknown field) or the design does (a value out of range, requirements
// that contradict each other or cannot be met).
func TestRequirementsFileErrorsNameLineColumnAndField(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"a precision of none of the three", "rate: 100/1m\nprecision: bogus\n",
			`r.yaml:2:12: precision: "bogus": use strict, approximate or loose`},
		{"keys that are no number", "rate: 100/1m\nkeys: lots\n",
			`r.yaml:2:7: keys: "lots" is not an integer`},
		{"keys beyond 2^40", "rate: 100/1m\nkeys: 2000000000000\n",
			`r.yaml:2:7: keys: 2000000000000 must be in [1, 2^40]`},
		{"a negative burst", "rate: 100/1m\nburst: -1\n",
			`r.yaml:2:8: burst: -1 must be ≥ 0`},
		{"a burst on a calendar quota", "rate: 10000/month\nburst: 20\n",
			`r.yaml:2:8: burst: 20: a quota per calendar month has no burst of its own`},
		{"a zone on a rate per minute", "rate: 100/1m\nzone: \"+09:00\"\n",
			`r.yaml:2:7: zone: applies only to a calendar quota`},
		{"a zone that is no zone", "rate: 1000/month\nzone: Mars\n",
			`r.yaml:2:7: zone: `},
		{"a window that is no window", "precision: strict\nrate: 100/1x\n",
			`r.yaml:2:7: rate: `},
		{"an empty Redis address", "rate: 100/1m\nstore: redis\nredis_addresses: [\"a:1\", \"\"]\n",
			`r.yaml:3:26: redis_addresses[1]: "" is not host:port`},
		{"a name the configuration refuses", "rate: 100/1m\nname: per minute\n",
			`r.yaml:2:7: name: `},
		{"a quota too small to divide between instances in memory", "rate: 10/1m\nstore: memory\ninstances: 50\n",
			`r.yaml:3:12: instances: 10 per 1m cannot be divided between 50 instances`},
		{"an instance count out of range", "rate: 10/1m\ninstances: 0x10\n",
			`r.yaml:2:12: instances: `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := ReadRequirements(strings.NewReader(tc.yaml), "r.yaml")
			if err == nil {
				req.MaxArrivals = testBudget
				_, err = Design(context.Background(), req)
			}
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error %v\nwant it to start %q", err, tc.want)
			}
		})
	}
}

// A whole API's requirements locate their errors the same way, down to a
// limit of a plan, an endpoint's own limit and an internal caller.
func TestAPIRequirementsFileErrorsNameLineColumnAndField(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"a burst above the limit's quantity",
			"plans:\n  - name: free\n    limits: [{rate: 5/1s}, {rate: 100/1m, burst: 500}]\n",
			`api.yaml:3:50: plans[0].limits[1].burst: 500 must be in [0, 100]`},
		{"a limit's window that is no window",
			"plans:\n  - name: free\n    limits:\n      - rate: 5/1s\n      - rate: 5/fortnight\n",
			`api.yaml:5:15: plans[0].limits[1].rate: `},
		{"a cost out of range",
			"plans: [{name: free, limits: [{rate: 5/1s}]}]\nendpoints:\n  - route: POST /x\n    cost: 2000000\n",
			`api.yaml:4:11: endpoints[0].cost: 2000000 must be in [0, 1000000]`},
		{"a cost no limit of the plan ever admits",
			"plans: [{name: free, limits: [{rate: 5/1s}]}]\nendpoints: [{route: POST /x, cost: 10}]\n",
			`api.yaml:1:38: plans[0].limits[0].rate: a request may cost 10 (POST /x), more than 5/1s ever admits`},
		{"an error rate above 1",
			"plans: [{name: free, limits: [{rate: 5/1s}]}]\noverload: {error_rate: 2}\n",
			`api.yaml:2:24: overload.error_rate: 2 must be in [0, 1]`},
		{"a trusted proxy that is no CIDR",
			"identity:\n  trusted_proxies: [10.0.0.0/8, nowhere]\nplans: [{name: free, limits: [{rate: 5/1s}]}]\n",
			`api.yaml:2:33: identity.trusted_proxies[1]: "nowhere" is not a CIDR`},
		{"a second default plan",
			"plans:\n  - {name: a, default: true, limits: [{rate: 5/1s}]}\n  - {name: b, default: true, limits: [{rate: 5/1s}]}\n",
			`api.yaml:3:24: plans[1].default: a second plan says default: true`},
		{"an endpoint's limit that is no rate",
			"plans: [{name: free, limits: [{rate: 5/1s}]}]\nendpoints: [{route: GET /x, limit: often}]\n",
			`api.yaml:2:36: endpoints[0].limit: `},
		{"a plan's own limit of an endpoint that is no rate, the plan's name holding a dot",
			"plans: [{name: pro.v2, limits: [{rate: 5/1s}]}]\nendpoints: [{route: GET /x, limits: {pro.v2: often}}]\n",
			`api.yaml:2:46: endpoints[0].limits.pro.v2: `},
		{"an internal caller's rate that is no rate",
			"plans: [{name: free, limits: [{rate: 5/1s}]}]\ninternal:\n  - name: batch\n    rate: 50\n",
			`api.yaml:4:11: internal[0].rate: `},
		{"clients that are no number",
			"plans:\n  - name: free\n    clients: many\n    limits: [{rate: 5/1s}]\n",
			`api.yaml:3:14: plans[0].clients: "many" is not an integer`},
		{"a peak below the usual traffic",
			"plans:\n  - name: free\n    traffic: {rate: 1/1s, peak: 0.5}\n    limits: [{rate: 5/1s}]\n",
			`api.yaml:3:33: plans[0].traffic.peak: 0.5 must be in [1, 1000]`},
		{"a peak that is no number",
			"plans:\n  - name: free\n    traffic: {rate: 1/1s, peak: high}\n    limits: [{rate: 5/1s}]\n",
			`api.yaml:3:33: plans[0].traffic.peak: "high" is not a number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := ReadAPIRequirements(strings.NewReader(tc.yaml), "api.yaml")
			if err == nil {
				req.MaxArrivals = testArrivals
				_, err = DesignAPI(context.Background(), req)
			}
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error %v\nwant it to start %q", err, tc.want)
			}
		})
	}
}

// A value a caller set after reading the file (a flag of sluice design)
// is not reported at the line of the value it replaced.
func TestRequirementsErrorsBlameTheFileOnlyForItsOwnValues(t *testing.T) {
	req, err := ReadRequirements(strings.NewReader("rate: 100/1m\nprecision: strict\n"), "r.yaml")
	if err != nil {
		t.Fatal(err)
	}
	req.Precision = "bogus"
	err = req.Validate()
	if err == nil || strings.Contains(err.Error(), "r.yaml") || !strings.Contains(err.Error(), `precision: "bogus"`) {
		t.Errorf("error %v: want the precision refused, not at the file's line", err)
	}
}

// A whole API's file with a mistake of its own (a key set twice) is still
// a whole API's file, and its mistake is reported as one, not as a plans:
// field unknown to a single limit's requirements.
func TestAPIRequirementsWithAKeySetTwiceAreAWholeAPIs(t *testing.T) {
	data := "name: a\nname: b\nplans: [{name: free, limits: [{rate: 5/1s}]}]\n"
	if !IsAPIRequirements([]byte(data)) {
		t.Fatal("not taken as a whole API's requirements")
	}
	_, err := ReadAPIRequirements(strings.NewReader(data), "api.yaml")
	if err == nil || err.Error() != "api.yaml:2:1: name: set twice" {
		t.Errorf("error %v, want api.yaml:2:1: name: set twice", err)
	}
}
