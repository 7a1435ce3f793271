package migrate

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// awsStageThrottle is a stage's throttle of some of its methods: a token
// bucket per method (each resource path and HTTP method its own), shared
// by every client of the stage, whatever its API key.
type awsStageThrottle struct {
	// where names the setting in the report; stage is the stage's name.
	where, stage string
	// method is "<resource path>/<METHOD>", as a usage plan's method
	// throttles are keyed ("/*/*": every method).
	method   string
	throttle awsThrottle
	// burstSet: the setting gives a burst (else the account's).
	burstSet bool
}

// awsAccountBurst is the burst of a throttle whose setting gives none:
// the account's default in a Region.
const awsAccountBurst = 5000

// readTemplateStages reads the throttles of a template's stages: the
// MethodSettings of AWS::ApiGateway::Stage and AWS::Serverless::Api, and an
// AWS::ApiGateway::Deployment's StageDescription (its MethodSettings, and
// its ThrottlingRateLimit and ThrottlingBurstLimit for every method).
func readTemplateStages(src string) ([]awsStageThrottle, error) {
	res, c, err := templateResources(src)
	if err != nil {
		return nil, err
	}
	var out []awsStageThrottle
	for i := 0; i+1 < len(res.Content); i += 2 {
		id, r := res.Content[i].Value, res.Content[i+1]
		typ := mapValue(r, "Type")
		props := mapValue(r, "Properties")
		if typ == nil {
			continue
		}
		stage := c.text(mapValue(props, "StageName"))
		switch typ.Value {
		case "AWS::ApiGateway::Stage", "AWS::Serverless::Api":
		case "AWS::ApiGateway::Deployment":
			props = mapValue(props, "StageDescription")
			if props == nil {
				continue
			}
			if mapValue(props, "ThrottlingRateLimit") != nil {
				th, set, err := c.stageThrottle(props, "StageDescription")
				if err != nil {
					return nil, fmt.Errorf("resource %s: %w", id, err)
				}
				out = append(out, awsStageThrottle{where: fmt.Sprintf("stage %s (%s), every method", or(stage, id), id), stage: or(stage, id), method: "/*/*", throttle: th, burstSet: set})
			}
		default:
			continue
		}
		settings := c.value(mapValue(props, "MethodSettings"))
		if settings == nil {
			continue
		}
		if settings.Kind != yaml.SequenceNode {
			return nil, fmt.Errorf("resource %s: MethodSettings is not a list", id)
		}
		for j, m := range settings.Content {
			if mapValue(m, "ThrottlingRateLimit") == nil && mapValue(m, "ThrottlingBurstLimit") == nil {
				continue
			}
			at := fmt.Sprintf("MethodSettings[%d]", j)
			th, set, err := c.stageThrottle(m, at)
			if err != nil {
				return nil, fmt.Errorf("resource %s: %w", id, err)
			}
			path := awsResourcePath(or(c.text(mapValue(m, "ResourcePath")), "/*"))
			method := path + "/" + or(c.text(mapValue(m, "HttpMethod")), "*") // the root resource: "//GET"
			out = append(out, awsStageThrottle{where: fmt.Sprintf("stage %s (%s) %s, method %s", or(stage, id), id, at, method), stage: or(stage, id), method: method, throttle: th, burstSet: set})
		}
	}
	return out, nil
}

// awsResourcePath decodes a MethodSetting's ResourcePath: after its
// first slash, each slash of the path is written ~1 ("/~1pets~1{id}" is
// /pets/{id}); "/" is the root resource and "/*" every resource.
func awsResourcePath(p string) string {
	if p == "/" || p == "/*" {
		return p
	}
	return "/" + strings.TrimPrefix(strings.ReplaceAll(strings.TrimPrefix(p, "/"), "~1", "/"), "/")
}

// stageThrottle reads a setting's ThrottlingRateLimit and
// ThrottlingBurstLimit, set reporting whether the burst is given.
func (c cfn) stageThrottle(n *yaml.Node, at string) (awsThrottle, bool, error) {
	th := awsThrottle{RateLimit: "0"}
	if rate := c.value(mapValue(n, "ThrottlingRateLimit")); rate != nil {
		if rate.Kind != yaml.ScalarNode || intrinsic(rate) {
			return th, false, fmt.Errorf("%s.ThrottlingRateLimit: %s is not a number", at, c.text(rate))
		}
		th.RateLimit = json.Number(rate.Value)
	}
	burst := mapValue(n, "ThrottlingBurstLimit")
	var err error
	th.BurstLimit, err = c.int(burst, at+".ThrottlingBurstLimit")
	return th, burst != nil, err
}

// stageThrottles makes a rule of each stage throttle, one count for every
// client: API Gateway applies a stage's method throttle to all requests of
// the method together, besides each key's usage plan. A setting of every
// method ("/*/*") leaves out the methods that have settings of their own,
// which replace it there.
func (t *Translation) stageThrottles(stages []awsStageThrottle) error {
	for _, st := range stages {
		if !st.burstSet {
			st.throttle.BurstLimit = awsAccountBurst
			t.differs(st.where, "no ThrottlingBurstLimit: API Gateway uses the account's burst (%d by default in a Region), which the import takes; set the burst the account has if it differs.", awsAccountBurst)
		}
		path, method, err := awsMethod(st.method)
		if err != nil {
			return fmt.Errorf("%s: %w", st.where, err)
		}
		l, ok, err := t.awsBucket(st.throttle, "throttle", st.where, "for all clients together")
		if err != nil {
			return err
		}
		if !ok {
			continue // rateLimit 0: no throttle, reported
		}
		label := awsMethodLabel(path, method)
		r := Rule{Name: t.ruleName("stage-" + st.stage + strings.TrimRight(label, "-")), Key: []string{"rule"}, Limits: []Limit{l}}
		awsRuleMethod(&r, method)
		if path != "/*" {
			r.Paths = []string{path}
		} else {
			r.Except = stageOwnMethods(stages, st)
			t.differs(st.where, "API Gateway keeps this throttle per method, each resource and HTTP method of the stage a bucket of its own; sluice's rule keeps one for every method of the stage, so requests to different methods share it and are refused sooner. Write a rule per method (paths and methods, key: [rule]) with this throttle for the same buckets.")
		}
		t.SluiceRules = append(t.SluiceRules, r)
		t.same(st.where, "a stage's method throttle counts every client's requests together, besides each API key's usage plan: a rule of one count (key: [rule]); sluice applies both, as API Gateway does.")
		t.differs(st.where, "the throttle is the stage %s's; sluice's rule applies to every request it sees, of any stage: if sluice fronts several stages, add the stage's path prefix or host to the rule.", st.stage)
	}
	return nil
}

// stageOwnMethods returns the methods of st's stage that have a throttle
// of their own, as except: entries.
func stageOwnMethods(stages []awsStageThrottle, st awsStageThrottle) []RuleMatch {
	var out []RuleMatch
	for _, o := range stages {
		if o.stage != st.stage || o.method == st.method {
			continue
		}
		path, method, err := awsMethod(o.method)
		if err != nil {
			continue
		}
		var m RuleMatch
		if path != "/*" {
			m.Paths = []string{path}
		}
		if method != "*" {
			m.Methods = []string{method}
		}
		if (len(m.Paths) > 0 || len(m.Methods) > 0) && !slices.ContainsFunc(out, func(x RuleMatch) bool { return slices.Equal(x.Paths, m.Paths) && slices.Equal(x.Methods, m.Methods) }) {
			out = append(out, m)
		}
	}
	return out
}
