package migrate

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// cfnUsagePlan is the CloudFormation resource type of a usage plan.
const cfnUsagePlan = "AWS::ApiGateway::UsagePlan"

// isCloudFormation reports whether src is a CloudFormation (or SAM)
// template rather than the AWS CLI's JSON.
func isCloudFormation(src string) bool {
	return strings.Contains(src, cfnUsagePlan) || strings.Contains(src, "AWS::Serverless::")
}

// readTemplatePlans reads the AWS::ApiGateway::UsagePlan resources of a
// CloudFormation template, in YAML (with its short-form tags: !Ref, !Sub,
// …) or JSON, as the usage plans the CLI would print once it is deployed:
// the resource's logical ID is the plan's ID, UsagePlanName its name (the
// logical ID when it is not a string). A !Ref to a parameter reads the
// parameter's Default; another expression where a number is needed is an
// error that names it.
func readTemplatePlans(src string) ([]awsUsagePlan, error) {
	res, c, err := templateResources(src)
	if err != nil {
		return nil, err
	}
	var plans []awsUsagePlan
	for i := 0; i+1 < len(res.Content); i += 2 {
		id, r := res.Content[i].Value, res.Content[i+1]
		if t := mapValue(r, "Type"); t == nil || t.Value != cfnUsagePlan {
			continue
		}
		p, err := c.usagePlan(id, mapValue(r, "Properties"))
		if err != nil {
			return nil, fmt.Errorf("resource %s: %w", id, err)
		}
		plans = append(plans, p)
	}
	if len(plans) == 0 {
		return nil, fmt.Errorf("no %s resource (a SAM Auth.UsagePlan is read once deployed: give aws apigateway get-usage-plans' output)", cfnUsagePlan)
	}
	return plans, nil
}

// templateResources returns the Resources mapping of a CloudFormation
// template and the reader of its values.
func templateResources(src string) (*yaml.Node, cfn, error) {
	c := cfn{params: map[string]*yaml.Node{}}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		return nil, c, fmt.Errorf("not a CloudFormation template: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, c, errors.New("not a CloudFormation template: no top-level mapping")
	}
	root := doc.Content[0]
	if ps := mapValue(root, "Parameters"); ps != nil && ps.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(ps.Content); i += 2 {
			if d := mapValue(ps.Content[i+1], "Default"); d != nil {
				c.params[ps.Content[i].Value] = d
			}
		}
	}
	res := mapValue(root, "Resources")
	if res == nil || res.Kind != yaml.MappingNode {
		return nil, c, errors.New("a CloudFormation template without Resources")
	}
	return res, c, nil
}

// cfn reads a template's values: params are its parameters' defaults.
type cfn struct{ params map[string]*yaml.Node }

func (c cfn) usagePlan(id string, props *yaml.Node) (awsUsagePlan, error) {
	p := awsUsagePlan{ID: id, Name: id}
	if n := c.value(mapValue(props, "UsagePlanName")); n != nil && n.Kind == yaml.ScalarNode && !intrinsic(n) {
		p.Name = n.Value
	}
	var err error
	if th := mapValue(props, "Throttle"); th != nil {
		t, e := c.throttle(th, "Throttle")
		p.Throttle, err = &t, e
		if err != nil {
			return p, err
		}
	}
	if q := mapValue(props, "Quota"); q != nil {
		p.Quota = &awsQuota{Period: c.text(mapValue(q, "Period"))}
		if p.Quota.Limit, err = c.int(mapValue(q, "Limit"), "Quota.Limit"); err != nil {
			return p, err
		}
		if p.Quota.Offset, err = c.int(mapValue(q, "Offset"), "Quota.Offset"); err != nil {
			return p, err
		}
	}
	stages := c.value(mapValue(props, "ApiStages"))
	if stages == nil {
		return p, nil
	}
	if stages.Kind != yaml.SequenceNode {
		return p, errors.New("ApiStages is not a list")
	}
	for i, s := range stages.Content {
		st := awsStage{APIID: c.text(mapValue(s, "ApiId")), Stage: c.text(mapValue(s, "Stage")), Throttle: map[string]awsThrottle{}}
		if ths := c.value(mapValue(s, "Throttle")); ths != nil && ths.Kind == yaml.MappingNode {
			for j := 0; j+1 < len(ths.Content); j += 2 {
				key := ths.Content[j].Value
				t, err := c.throttle(ths.Content[j+1], fmt.Sprintf("ApiStages[%d].Throttle[%q]", i, key))
				if err != nil {
					return p, err
				}
				st.Throttle[key] = t
			}
		}
		p.APIStages = append(p.APIStages, st)
	}
	return p, nil
}

func (c cfn) throttle(n *yaml.Node, at string) (awsThrottle, error) {
	var t awsThrottle
	rate := c.value(mapValue(n, "RateLimit"))
	if rate != nil {
		if rate.Kind != yaml.ScalarNode || intrinsic(rate) {
			return t, fmt.Errorf("%s.RateLimit: %s is not a number", at, c.text(rate))
		}
		t.RateLimit = json.Number(rate.Value)
	} else {
		t.RateLimit = "0"
	}
	var err error
	t.BurstLimit, err = c.int(mapValue(n, "BurstLimit"), at+".BurstLimit")
	return t, err
}

// value returns n, or the default of the parameter a !Ref (or {Ref: …})
// names.
func (c cfn) value(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	name := ""
	switch {
	case n.Kind == yaml.ScalarNode && n.Tag == "!Ref":
		name = n.Value
	case n.Kind == yaml.MappingNode && len(n.Content) == 2 && n.Content[0].Value == "Ref":
		name = n.Content[1].Value
	default:
		return n
	}
	if d, ok := c.params[name]; ok {
		return d
	}
	return n
}

// text returns the value of n as text: a scalar's value, a !Ref's name as
// "!Ref X", another expression as its tag or key.
func (c cfn) text(n *yaml.Node) string {
	n = c.value(n)
	switch {
	case n == nil:
		return ""
	case n.Kind == yaml.ScalarNode && intrinsic(n):
		return n.Tag + " " + n.Value
	case n.Kind == yaml.ScalarNode:
		return n.Value
	case n.Kind == yaml.MappingNode && len(n.Content) == 2:
		return n.Content[0].Value + " " + c.text(n.Content[1])
	default:
		return "(an expression)"
	}
}

// int reads a whole number (0 when n is absent).
func (c cfn) int(n *yaml.Node, at string) (int64, error) {
	n = c.value(n)
	if n == nil {
		return 0, nil
	}
	v, err := strconv.ParseInt(n.Value, 10, 64)
	if n.Kind != yaml.ScalarNode || intrinsic(n) || err != nil {
		return 0, fmt.Errorf("%s: %s is not a whole number", at, c.text(n))
	}
	return v, nil
}

// intrinsic reports whether n is a short-form intrinsic function (!Ref,
// !Sub, !GetAtt, …): a tag of one "!", not YAML's own "!!".
func intrinsic(n *yaml.Node) bool {
	return strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!")
}
