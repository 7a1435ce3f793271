package migrate_test

import (
	"net/http/httptest"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// A CloudFormation template whose stage throttles every method to 1 request
// a second, burst 1, for all clients together (AWS::ApiGateway::Stage
// MethodSettings, "/*" and "*"), beside a usage plan of 100 a second per
// key. API Gateway refuses the second of two simultaneous requests, whoever
// sends them: the import writes the stage's throttle as a rule of one
// count for every client (key: [rule]), beside the usage plan's limits, and
// reports that API Gateway keeps it per method. A method's own setting
// (POST /pets) replaces the stage-wide one there: the stage-wide rule
// leaves it out (except:).
func TestImportedAPIGatewayStageThrottleCountsEveryClient(t *testing.T) {
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
        - ResourcePath: "/*"
          HttpMethod: "*"
          ThrottlingRateLimit: 1
          ThrottlingBurstLimit: 1
        - ResourcePath: "/~1pets"
          HttpMethod: POST
          ThrottlingRateLimit: 1
          ThrottlingBurstLimit: 2
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
	send := func(key string) int {
		r := httptest.NewRequest("GET", "/pets", nil)
		r.RemoteAddr = "192.0.2.1:1234"
		r.Header.Set("X-Api-Key", key)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	if first, second := send("key-one"), send("key-two"); first != 200 || second != 429 {
		t.Errorf("two keys' simultaneous requests: %d %d, want 200 429 (the stage's throttle of 1 a second for every client)", first, second)
	}
	post := func() int {
		r := httptest.NewRequest("POST", "/pets", nil)
		r.RemoteAddr = "192.0.2.1:1234"
		r.Header.Set("X-Api-Key", "key-three")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	if a, b, c := post(), post(), post(); a != 200 || b != 200 || c != 429 {
		t.Errorf("POST /pets three times: %d %d %d, want 200 200 429 (its own setting, burst 2, in place of the stage's)", a, b, c)
	}
	if got := differsLines(tr, "keeps this throttle per method"); len(got) != 1 {
		t.Errorf("the report does not say API Gateway keeps the stage throttle per method: %q", got)
	}
}
