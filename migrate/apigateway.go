package migrate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-dev/sluice"
)

// awsUsagePlan is the part of an Amazon API Gateway usage plan the import
// reads, as `aws apigateway get-usage-plan(s)` prints it.
type awsUsagePlan struct {
	ID        string       `json:"id"`
	Name      string       `json:"name"`
	Throttle  *awsThrottle `json:"throttle"`
	Quota     *awsQuota    `json:"quota"`
	APIStages []awsStage   `json:"apiStages"`
}

// awsStage is an API stage of a usage plan and its method throttles, by
// "<resource path>/<METHOD>".
type awsStage struct {
	APIID    string                 `json:"apiId"`
	Stage    string                 `json:"stage"`
	Throttle map[string]awsThrottle `json:"throttle"`
}

// awsThrottle is a token bucket: rateLimit requests a second, burstLimit
// at once.
type awsThrottle struct {
	RateLimit  json.Number `json:"rateLimit"`
	BurstLimit int64       `json:"burstLimit"`
}

// awsQuota is a count per calendar day, week or month, from offset days
// into it.
type awsQuota struct {
	Limit  int64  `json:"limit"`
	Offset int64  `json:"offset"`
	Period string `json:"period"`
}

// APIGateway translates Amazon API Gateway usage plans, as `aws apigateway
// get-usage-plans` (an object of items) or `get-usage-plan` (one plan)
// print them in JSON, or the AWS::ApiGateway::UsagePlan resources of a
// CloudFormation template (see readTemplatePlans); source names the file.
// A usage plan's throttle is a token bucket per API key (rateLimit a
// second, burstLimit at once), its quota a count per key per UTC day, week
// or month, and the throttles of its API stages' methods (resource path
// and method) replace the plan's for those methods. The first plan becomes the imported plan (every API
// key's, until its keys are listed), the others plans of their own names;
// API keys are not in these files, and the report says how to list them.
func APIGateway(src, source string) (*Translation, error) {
	read, template := readUsagePlans, isCloudFormation(src)
	if template {
		read = readTemplatePlans
	}
	plans, err := read(src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	if len(plans) > MaxPlaces {
		return nil, fmt.Errorf("%s: %w", source, tooManyPlaces(len(plans), "usage plans"))
	}
	methods := 0 // each a rule
	for _, p := range plans {
		for _, st := range p.APIStages {
			methods += len(st.Throttle)
		}
	}
	if methods > MaxPlaces {
		return nil, fmt.Errorf("%s: %w", source, tooManyPlaces(methods, "method throttles"))
	}
	t := &Translation{Format: FormatAPIGateway, Source: source, APIKeyHeaders: []string{"X-Api-Key"}}
	var listing []string
	for i, p := range plans {
		where := fmt.Sprintf("usage plan %s (%s)", p.Name, p.ID)
		limits, err := t.usagePlanLimits(p, where)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", source, where, err)
		}
		plan := PlanName
		if i == 0 {
			t.Limits = limits
		} else {
			plan = uniqueName(p.Name, 56, func(n string) bool {
				return n == PlanName || slices.ContainsFunc(t.Plans, func(q Plan) bool { return q.Name == n })
			})
			if len(limits) == 0 {
				// A plan needs a limit: one that never refuses.
				limits = []Limit{{Name: "unlimited", Algorithm: "fixed-window", Quantity: sluice.MaxQuantity, Window: time.Second,
					Shadow: true, Source: where + ": no throttle, no quota"}}
				t.differs(where, "no throttle and no quota: plan %s has one limit, in shadow mode, that never refuses.", plan)
			}
			t.Plans = append(t.Plans, Plan{Name: plan, Limits: limits})
		}
		if err := t.methodThrottles(p, plan, where, len(plans) > 1); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", source, where, err)
		}
		id := shellWord(p.ID)
		if template { // the deployed plan's ID, from its stack
			id = "\"$(aws cloudformation describe-stack-resources --stack-name STACK --logical-resource-id " + shellWord(p.ID) +
				" --query 'StackResources[0].PhysicalResourceId' --output text)\""
		}
		listing = append(listing, fmt.Sprintf("aws apigateway get-usage-plan-keys --usage-plan-id %s --query 'items[].[name,value]' --output text | "+
			"while read -r name value; do printf '  - {name: %%s, sha256: %%s, plan: %s}\\n' \"$name\" \"$(printf %%s \"$value\" | sha256sum | cut -c1-64)\"; done",
			id, plan))
	}
	if template {
		stages, err := readTemplateStages(src)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		if len(stages) > MaxPlaces {
			return nil, fmt.Errorf("%s: %w", source, tooManyPlaces(len(stages), "stage method settings"))
		}
		if err := t.stageThrottles(stages); err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
	}
	if len(t.Limits) == 0 && len(t.Plans) == 0 && len(t.SluiceRules) == 0 {
		return nil, fmt.Errorf("%s: no usage plan with a throttle, a quota or a method throttle", source)
	}
	stack := ""
	if template {
		stack = " (STACK: the name of the stack the template deployed)"
	}
	t.differs("API keys", "the usage plans' files hold no API keys: until they are listed, every key is a client of its own on plan %s (usage plan %s's limits), and a key of no plan is admitted (API Gateway refuses it with 403). List each plan's keys by SHA-256 (never in clear) under keys: with its plan%s:\n\n```sh\n%s\n```", PlanName, plans[0].Name, stack, strings.Join(listing, "\n"))
	t.differs("status", "API Gateway refuses with 429 and {\"message\":\"Too Many Requests\"} (\"Limit Exceeded\" for a quota); sluice answers 429 with Retry-After and a problem+json body naming the limit.")
	t.differs("headers", "API Gateway sends no rate-limit headers; sluice sends RateLimit-Policy and RateLimit (IETF draft) on every response.")
	t.differs("accuracy", "API Gateway applies throttles and quotas on a best-effort basis across its fleet; sluice on one store (memory, or Redis for several instances) admits exactly what each limit allows.")
	t.differs("paths", "a method throttle names an API resource path: the rules match it as sluice sees the request's path. Clients of the default execute-api endpoint call /<stage>/<path>: add the stage to the rules' paths if sluice sees that prefix.")
	return t, nil
}

// readUsagePlans reads get-usage-plans' {"items": [...]} or one plan.
func readUsagePlans(src string) ([]awsUsagePlan, error) {
	dec := json.NewDecoder(strings.NewReader(src))
	dec.UseNumber()
	var doc struct {
		Items []awsUsagePlan `json:"items"`
		awsUsagePlan
	}
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("line %d: not the JSON of aws apigateway get-usage-plans: %w", jsonErrorLine(src, err, dec.InputOffset()), err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("more than one JSON value: give one get-usage-plans output")
	}
	if doc.Items != nil {
		return doc.Items, nil
	}
	if doc.ID == "" && doc.Name == "" {
		return nil, errors.New("neither the items of get-usage-plans nor a usage plan")
	}
	return []awsUsagePlan{doc.awsUsagePlan}, nil
}

// jsonErrorLine returns the line of src at which decoding failed with err:
// where a syntax or type error says, else at offset (where the decoder
// stopped: the end, for a value cut short).
func jsonErrorLine(src string, err error, offset int64) int {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		offset = syntax.Offset
	case errors.As(err, &typ):
		offset = typ.Offset
	case errors.Is(err, io.ErrUnexpectedEOF):
		offset = int64(len(src))
	}
	offset = min(max(offset, 0), int64(len(src)))
	return 1 + strings.Count(src[:offset], "\n")
}

// usagePlanLimits translates a plan's throttle and quota.
func (t *Translation) usagePlanLimits(p awsUsagePlan, where string) ([]Limit, error) {
	var out []Limit
	if p.Throttle != nil {
		l, ok, err := t.awsBucket(*p.Throttle, "throttle", where+" throttle", "per API key")
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, l)
		}
	}
	if q := p.Quota; q != nil {
		l, err := t.awsQuota(*q, where+" quota")
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

// awsBucket translates a throttle: a token bucket of rateLimit a second
// and burstLimit at once, ok false when rateLimit is 0 (no throttle);
// whose says whose requests it counts ("per API key").
func (t *Translation) awsBucket(th awsThrottle, name, where, whose string) (Limit, bool, error) {
	rate, ok := new(big.Rat).SetString(th.RateLimit.String())
	switch {
	case !ok || rate.Sign() < 0:
		return Limit{}, false, fmt.Errorf("%s: rateLimit %q is not a rate", where, th.RateLimit)
	case rate.Sign() == 0:
		t.differs(where, "rateLimit 0 sets no throttle: not imported.")
		return Limit{}, false, nil
	}
	// rate = n/d requests a second, exactly: n per d seconds.
	n, d := rate.Num(), rate.Denom()
	if !n.IsInt64() || n.Int64() > sluice.MaxQuantity || !d.IsInt64() || d.Int64() > 1_000_000 {
		return Limit{}, false, fmt.Errorf("%s: rateLimit %s is not a rate sluice holds (at most %d a second, to a millionth)", where, th.RateLimit, sluice.MaxQuantity)
	}
	burst := th.BurstLimit
	if burst < 1 {
		t.differs(where, "burstLimit %d admits nothing in API Gateway; sluice's bucket holds at least one request: burst 1.", burst)
		burst = 1
	}
	if burst > sluice.MaxQuantity {
		return Limit{}, false, fmt.Errorf("%s: burstLimit %d is above sluice's %d", where, burst, sluice.MaxQuantity)
	}
	t.same(where, "a token bucket %s of %s requests a second, %d at once: sluice's token-bucket decides the same requests.", whose, th.RateLimit, burst)
	return Limit{Name: name, Algorithm: "token-bucket", Quantity: n.Int64(), Window: time.Duration(d.Int64()) * time.Second,
		Burst: burst, Source: fmt.Sprintf("%s: rateLimit %s, burstLimit %d", where, th.RateLimit, th.BurstLimit)}, true, nil
}

// awsWeekdays are the weekdays a WEEK quota's offset names (0: Sunday), as
// the configuration's starts writes them.
var awsWeekdays = [...]string{"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"}

// awsQuota translates a quota: a fixed window of a UTC day, or a calendar
// week or month of UTC from the day offset names (a week's weekday, 0 for
// Sunday; a month's day offset+1, from 1 to 28).
//
// An offset outside those ranges is imported as offset 0 (weeks from
// Sunday, months from the 1st) and reported, not refused: the file holds
// the plans API Gateway accepted, the quota's quantity and period translate
// whatever the offset says, and a refusal would leave every plan of the
// file unimported over one quota's reset day, which starts: in sluice.yaml
// sets once the user knows it. (Not every month has a 29th, 30th or 31st,
// so no calendar month starts on one.)
func (t *Translation) awsQuota(q awsQuota, where string) (Limit, error) {
	if q.Limit < 1 || q.Limit > sluice.MaxQuantity {
		return Limit{}, fmt.Errorf("%s: limit %d is not a quantity in [1, %d]", where, q.Limit, sluice.MaxQuantity)
	}
	l := Limit{Algorithm: "fixed-window", Quantity: q.Limit, Source: fmt.Sprintf("%s: limit %d per %s, offset %d", where, q.Limit, q.Period, q.Offset)}
	switch q.Period {
	case "DAY":
		l.Name, l.Window = "quota-per-day", 24*time.Hour
		t.same(where, "a count per API key per UTC day: sluice's fixed windows of 24h start at midnight UTC too.")
		if q.Offset != 0 {
			t.differs(where, "offset %d does not move a day's start in API Gateway either; it is ignored.", q.Offset)
		}
	case "WEEK":
		l.Name, l.Period = "quota-per-week", "week"
		if q.Offset < 0 || q.Offset >= int64(len(awsWeekdays)) {
			l.Starts = awsWeekdays[0]
			t.differs(where, "offset %d names no weekday (0: Sunday … 6: Saturday): imported as calendar weeks of UTC from Sunday, offset 0's; if the quota resets on another day, set that weekday as the limit's starts: in sluice.yaml.", q.Offset)
			break
		}
		l.Starts = awsWeekdays[q.Offset]
		t.same(where, "a count per API key per calendar week of UTC from %s at midnight UTC (offset %d): sluice's window: week with starts: %s.", startsText(l.Starts), q.Offset, l.Starts)
	case "MONTH":
		l.Name, l.Period = "quota-per-month", "month"
		if q.Offset < 0 || q.Offset > 27 {
			t.differs(where, "offset %d names no day from the 1st to the 28th (offset 0 to 27), the days every month has and a calendar month of sluice can start on: imported as calendar months of UTC from the 1st, offset 0's; if the quota resets on one of those days, set it as the limit's starts: in sluice.yaml.", q.Offset)
			break
		}
		config := "window: month"
		if q.Offset > 0 {
			l.Starts = strconv.FormatInt(q.Offset+1, 10)
			config += " with starts: " + l.Starts
		}
		t.same(where, "a count per API key per calendar month of UTC from %s of each at midnight UTC: sluice's %s, the same months whatever their length.", startsText(strconv.FormatInt(q.Offset+1, 10)), config)
	default:
		return Limit{}, fmt.Errorf("%s: period %q is not DAY, WEEK or MONTH", where, q.Period)
	}
	if q.Offset != 0 && q.Period != "DAY" {
		t.differs(where, "offset %d is read as the day the period starts, as API Gateway's earlier reference defines it; its current reference calls it the number of requests subtracted from the first period's limit. If that is what your plan means, set the limit's starts: to the day its quota resets.", q.Offset)
	}
	return l, nil
}

// methodThrottles makes a rule of each method throttle of p's API stages,
// keyed by the client. scoped: other plans exist, so the rules apply to
// the clients of plan only.
func (t *Translation) methodThrottles(p awsUsagePlan, plan, where string, scoped bool) error {
	for _, st := range p.APIStages {
		keys := make([]string, 0, len(st.Throttle))
		for k := range st.Throttle {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			at := fmt.Sprintf("%s, stage %s of API %s, method %s", where, st.Stage, st.APIID, k)
			path, method, err := awsMethod(k)
			if err != nil {
				return fmt.Errorf("stage %s: %w", st.Stage, err)
			}
			l, ok, err := t.awsBucket(st.Throttle[k], "throttle", at, "per API key")
			if err != nil {
				return err
			}
			if !ok {
				continue // rateLimit 0: no throttle, reported
			}
			label := awsMethodLabel(path, method)
			r := Rule{Name: t.ruleName(plan + strings.TrimRight(label, "-")), Key: []string{"client"}, Limits: []Limit{l}}
			awsRuleMethod(&r, method)
			if path != "/*" {
				r.Paths = []string{path}
			}
			if scoped {
				r.Plans = []string{plan}
			}
			t.SluiceRules = append(t.SluiceRules, r)
			t.differs(at, "API Gateway applies this throttle to the method instead of the plan's; sluice applies both, so the stricter decides.")
			t.awsStageOfThrottle(p, st, k, at)
			if strings.HasSuffix(strings.ToUpper(k), "/ANY") {
				t.differs(at, "an ANY method takes the requests of the methods its resource does not define apart; the rule matches every method of %s, so a method defined apart is counted by this throttle too.", path)
			}
		}
	}
	return nil
}

// awsRuleMethod makes r match method ("*": every method). A rule's GET
// matches HEAD too, which API Gateway's GET method does not (HEAD is a
// method of its own there): the rule leaves HEAD out.
func awsRuleMethod(r *Rule, method string) {
	if method == "*" {
		return
	}
	r.Methods = []string{method}
	if method == http.MethodGet {
		r.Except = append(r.Except, RuleMatch{Methods: []string{http.MethodHead}})
	}
}

// awsStageOfThrottle reports that the rule of method throttle key of API
// stage st, of plan p, applies to every stage's requests: sluice's rules
// do not know the stage. Where another stage of the plan throttles the
// same method, each stage's rule decides the other's requests too.
func (t *Translation) awsStageOfThrottle(p awsUsagePlan, st awsStage, key, at string) {
	var others []string
	for _, o := range p.APIStages {
		if _, ok := o.Throttle[key]; ok && (o.Stage != st.Stage || o.APIID != st.APIID) {
			others = append(others, "stage "+o.Stage+" of API "+o.APIID)
		}
	}
	if len(others) == 0 {
		t.differs(at, "the throttle is stage %s's; sluice's rule applies to every request it sees, of any stage: if sluice fronts several stages, add the stage's path prefix or host to the rule.", st.Stage)
		return
	}
	t.differs(at, "the throttle is stage %s's, and %s throttles the same method too; sluice's rules know no stage, so each applies to every stage's requests: the stricter decides for all of them. Add each stage's path prefix or host to its rule, or run a sluice per stage.", st.Stage, strings.Join(others, ", "))
}

// awsMethod splits a method throttle's key, "<resource path>/<METHOD>"
// ("/pets/{petId}/GET", "//GET" for the root resource, "/*/*" for all),
// into a ServeMux path pattern and a method ("*" for any: "*", or the ANY
// method a resource defines).
func awsMethod(key string) (path, method string, err error) {
	i := strings.LastIndexByte(key, '/')
	if i <= 0 || !strings.HasPrefix(key, "/") {
		return "", "", fmt.Errorf("method throttle %q is not <resource path>/<method>", key)
	}
	path, method = key[:i], strings.ToUpper(key[i+1:])
	if method == "ANY" {
		method = "*"
	}
	if method != "*" && !slices.Contains([]string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}, method) {
		return "", "", fmt.Errorf("method throttle %q: %q is not an HTTP method", key, method)
	}
	switch path {
	case "/*":
		return path, method, nil
	case "/":
		return exactPattern(path), method, nil // the root resource alone
	}
	segs := strings.Split(path[1:], "/")
	seen := map[string]bool{}
	for i, s := range segs {
		name, greedy := "", false
		switch {
		case strings.HasPrefix(s, "{") && strings.HasSuffix(s, "+}") && i == len(segs)-1:
			name, greedy = s[1:len(s)-2], true // a greedy path variable: the rest of the path
		case strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}"):
			name = s[1 : len(s)-1]
		case s == "" || strings.ContainsAny(s, "{}* ") || !printable(s):
			return "", "", fmt.Errorf("method throttle %q: resource path segment %q is not one sluice matches", key, s)
		default:
			continue
		}
		if !wildcardRe.MatchString(name) || seen[name] {
			return "", "", fmt.Errorf("method throttle %q: path variable %q is not one a sluice path pattern can name", key, name)
		}
		seen[name] = true
		if greedy {
			segs[i] = "{" + name + "...}"
		}
	}
	return "/" + strings.Join(segs, "/"), method, nil
}

// wildcardRe is a path variable's name that a ServeMux wildcard can take.
var wildcardRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// shellWord quotes s for a POSIX shell.
func shellWord(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// awsMethodLabel names a method throttle's rule after its method and path
// ("-post-orders-id" for POST /orders/{id}; "-orders" for every method),
// its leading dash the separator after the plan's or stage's name.
func awsMethodLabel(path, method string) string {
	label := strings.NewReplacer("{", "", "}", "", "...", "", "$", "", "*", "", "/", "-").Replace(path)
	if method != "*" {
		label = "-" + strings.ToLower(method) + label
	}
	return label
}
