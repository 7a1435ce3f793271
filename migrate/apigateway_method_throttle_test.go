package migrate_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// API Gateway's method throttle "/pets/GET" is the GET method's bucket:
// HEAD is a method of its own there, so a key's HEAD /pets never spends
// it. The imported rule of GET leaves HEAD out.
func TestAPIGatewayMethodThrottleOfGETLeavesHEADAlone(t *testing.T) {
	tr, err := migrate.Import(migrate.FormatAPIGateway, `{"id": "b", "name": "Basic", "throttle": {"burstLimit": 10, "rateLimit": 0.01},
		"apiStages": [{"apiId": "x", "stage": "prod", "throttle": {"/pets/GET": {"burstLimit": 1, "rateLimit": 0.01}}}]}`, "plans.json")
	if err != nil {
		t.Fatal(err)
	}
	h := serveImported(t, tr)
	send := func(method string) int {
		r := httptest.NewRequest(method, "/pets", nil)
		r.Header.Set("X-Api-Key", "k1")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	head, get, again := send("HEAD"), send("GET"), send("GET")
	if head != 200 || get != 200 || again != 429 {
		t.Errorf("HEAD, GET, GET /pets under a GET throttle of burst 1: %d %d %d, want 200 200 429 (API Gateway's GET bucket is GET's alone)", head, get, again)
	}
}

// The same for a stage's MethodSettings of GET, one bucket for every
// client: a load balancer's HEAD /pets does not spend everyone's GET
// bucket.
func TestAPIGatewayStageThrottleOfGETLeavesHEADAlone(t *testing.T) {
	src := `AWSTemplateFormatVersion: "2010-09-09"
Resources:
  Api:
    Type: AWS::ApiGateway::RestApi
    Properties: {Name: pets}
  Prod:
    Type: AWS::ApiGateway::Stage
    Properties:
      RestApiId: !Ref Api
      StageName: prod
      MethodSettings:
        - ResourcePath: "/~1pets"
          HttpMethod: GET
          ThrottlingRateLimit: 0.01
          ThrottlingBurstLimit: 1
  Basic:
    Type: AWS::ApiGateway::UsagePlan
    Properties:
      UsagePlanName: basic
      Throttle: {RateLimit: 100, BurstLimit: 200}
      ApiStages:
        - ApiId: !Ref Api
          Stage: prod
`
	tr, err := migrate.Import("aws-apigateway", src, "template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := serveImported(t, tr)
	send := func(method, key string) int {
		r := httptest.NewRequest(method, "/pets", nil)
		r.RemoteAddr = "192.0.2.1:1234"
		r.Header.Set("X-Api-Key", key)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	head, get := send("HEAD", "lb"), send("GET", "key-one")
	if head != 200 || get != 200 {
		t.Errorf("HEAD /pets then GET /pets under a stage GET throttle of burst 1: %d %d, want 200 200 (API Gateway's GET bucket is GET's alone)", head, get)
	}
}

// Method throttles of two stages of one plan on one method are each
// their stage's in API Gateway; sluice's rules know no stage, so each
// applies to both stages' requests, and the report must say so at each,
// naming the other stage.
func TestAPIGatewayMethodThrottlesOfTwoStagesAreReported(t *testing.T) {
	tr, err := migrate.Import(migrate.FormatAPIGateway, `{"id": "b", "name": "Basic", "throttle": {"burstLimit": 10, "rateLimit": 100},
		"apiStages": [{"apiId": "x", "stage": "prod", "throttle": {"/pets/GET": {"burstLimit": 100, "rateLimit": 100}}},
		{"apiId": "x", "stage": "dev", "throttle": {"/pets/GET": {"burstLimit": 1, "rateLimit": 0.01}}}]}`, "plans.json")
	if err != nil {
		t.Fatal(err)
	}
	for stage, other := range map[string]string{"dev": "stage prod of API x", "prod": "stage dev of API x"} {
		if !hasDifference(tr, false, "stage "+stage+" of API x, method /pets/GET: the throttle is stage "+stage+"'s, and "+other+" throttles the same method too") {
			t.Errorf("stage %s's throttle of GET /pets applies to %s's requests too, unreported:\n%s", stage, other, strings.Join(differsLines(tr, ""), "\n"))
		}
	}
}
