package httplimit

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// TestSubjectNamesARuleKeyByTheValuesARequestSent: an operator names a
// rule's key by the values its requests sent — a query value with the
// whitespace around it, a host in capitals with a port, a body's field, a
// path — or by the store key's own forms (a hashed value, the value an
// absent one is kept as under fallback ip or shared, an address's
// group); Subject returns the key those requests were kept under, so that
// inspecting and resetting it reach their state, not one never spent.
func TestSubjectNamesARuleKeyByTheValuesARequestSent(t *testing.T) {
	m := ruleValuesMiddleware(t)
	hashOf := func(v string) string {
		sum := sha256.Sum256([]byte(v))
		return "#" + hex.EncodeToString(sum[:16])
	}
	for _, c := range []struct {
		name  string
		req   *http.Request
		named []string
	}{
		{"a query value kept hashed", httptest.NewRequest("GET", "/q?team=%20Data%20Eng%09", nil),
			[]string{"rule:q/Data Eng", "rule:q/ Data Eng\u200b", "rule:q/" + strings.ToUpper(hashOf("Data Eng"))}},
		{"a query value kept as it is", httptest.NewRequest("GET", "/q?team=ops", nil), []string{"rule:q/ops", "rule:q/ ops "}},
		{"a header's value", withHeader(httptest.NewRequest("GET", "/h", nil), "X-Team", "Ops Team"), []string{"rule:h/Ops Team", "rule:h/\tOps Team"}},
		{"a host, in lower case", withHost(httptest.NewRequest("GET", "/host", nil), "API.Example.com:8443"),
			[]string{"rule:host/api.example.com", "rule:host/API.Example.COM.", "rule:host/api.example.com:8443"}},
		{"a form's field, in lower case", formRequest("/form", "email=Alice%40Example.com"), []string{"rule:form/Alice@Example.com", "rule:form/alice@example.com"}},
		{"a path wildcard kept hashed", httptest.NewRequest("GET", "/files/a%2Fb", nil), []string{"rule:files/a/b", "rule:files/" + hashOf("a/b")}},
		{"a URL path, in lower case", httptest.NewRequest("GET", "/docs/Intro/", nil), []string{"rule:url//docs/Intro/", "rule:url//DOCS/intro"}},
		{"values joined by |, an address by its group", httptest.NewRequest("GET", "/m?a=x%20y", nil),
			[]string{"rule:m/x y|ip:192.0.2.9|*", "rule:m/x y|192.0.2.0/24|*", "rule:m/" + hashOf("x y") + "|ip:192.0.2.0/24|*"}},
		{"a client, by its subject", httptest.NewRequest("GET", "/c", nil), []string{"rule:c/ip:192.0.2.77|*", "rule:c/ip:192.0.2.0/24|*"}},
		{"an absent value under fallback ip: the client's group", httptest.NewRequest("GET", "/q", nil), []string{"rule:q/ip:192.0.2.9", "rule:q/ip:192.0.2.0/24"}},
		{"an absent value under fallback shared", httptest.NewRequest("GET", "/s", nil), []string{"rule:s/-"}},
		{"a value upstreams read differently", httptest.NewRequest("GET", "/s?team=a&team=b", nil), []string{"rule:s/~"}},
		{"a value in a subject's form that names no client", httptest.NewRequest("GET", "/q?team=ip:lab", nil), []string{"rule:q/ip:lab"}},
		{"a value that is the shared one's, sent", httptest.NewRequest("GET", "/s?team=-", nil), []string{"rule:s/" + hashOf("-")}},
	} {
		res, err := m.Decide(c.req)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.ruleKeys) != 1 {
			t.Fatalf("%s: rule keys %q, want one", c.name, res.ruleKeys)
		}
		want := strings.TrimPrefix(res.ruleKeys[0], m.id.prefix)
		m.Discard(res)
		for _, named := range c.named {
			if got, err := m.Subject(named); err != nil || got != want {
				t.Errorf("%s: Subject(%q) = %q, %v; want %q, the key its request was kept under", c.name, named, got, err, want)
			}
		}
	}
}

// TestSubjectRefusesARuleKeyNoRequestIsKeptUnder: a rule's key of more or
// fewer values than its key's attributes, an empty value (or one that is
// whitespace alone, which a request's value is not kept as), an address
// that is none, or a client's value that is no subject, names no state a request
// spent: Subject refuses it rather than show a full quota.
func TestSubjectRefusesARuleKeyNoRequestIsKeptUnder(t *testing.T) {
	m := ruleValuesMiddleware(t)
	for _, s := range []string{
		"rule:m/x y|ip:192.0.2.9", "rule:m/x y|ip:192.0.2.9|*|z", "rule:m/x y||*", "rule:m/x y|not-an-address|*",
		"rule:m/x y|192.0.2.0/16|*", "rule:q/ \t", "rule:c/alice|*", "rule:c/usr:alice|*", "rule:c/ip:lab|*", "rule:m/x|unknown|*",
	} {
		if got, err := m.Subject(s); err == nil {
			t.Errorf("Subject(%q) = %q, nil; want an error", s, got)
		}
	}
	_, err := m.Subject("rule:m/x")
	if err == nil || !strings.Contains(err.Error(), "3 values joined by |") {
		t.Errorf(`Subject("rule:m/x"): %v; want it to say the rule's key is 3 values joined by |`, err)
	}
}

// ruleValuesMiddleware returns a Middleware whose rules are keyed by each
// kind of value, every client on one plan, a client's address grouped by
// /24.
func ruleValuesMiddleware(t *testing.T) *Middleware {
	t.Helper()
	limits := []sluice.Limit{sluice.FixedWindow(5, time.Minute)}
	keyed := func(name, path, fallback string, key ...string) Rule {
		return Rule{Name: name, Paths: []string{path}, Key: key, Fallback: fallback, HeaderFrom: HeaderFromAny, Limits: limits}
	}
	m, err := New(sluice.NewLimiter(memory.New()), Options{
		Plans:         []*Plan{{Name: "free", Limits: limits}},
		AnonymousPlan: "free",
		IPv4Prefix:    24,
		Rules: []Rule{
			keyed("q", "/q", "", KeyQuery+"team"),
			keyed("s", "/s", FallbackShared, KeyQuery+"team"),
			keyed("h", "/h", "", KeyHeader+"X-Team"),
			keyed("host", "/host", "", KeyHost),
			keyed("form", "/form", "", KeyForm+"email"),
			keyed("files", "/files/{name}", "", KeyPath+"name"),
			keyed("url", "/docs/", "", KeyURLPath),
			keyed("m", "/m", "", KeyQuery+"a", KeyIP, KeyRule),
			keyed("c", "/c", "", KeyClient, KeyRule),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func withHeader(r *http.Request, name, value string) *http.Request {
	r.Header.Set(name, value)
	return r
}

func withHost(r *http.Request, host string) *http.Request {
	r.Host = host
	return r
}

func formRequest(path, body string) *http.Request {
	r := httptest.NewRequest("POST", path, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return r
}
