package docs_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/leasehold"
)

// keyQueryParams returns, for each key admin handler of server/keys.go,
// the query parameters its keyQuery call takes.
func keyQueryParams(t *testing.T) map[string][]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "../server/keys.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if id, ok := call.Fun.(*ast.Ident); !ok || id.Name != "keyQuery" {
				return true
			}
			for _, a := range call.Args[2:] {
				if lit, ok := a.(*ast.BasicLit); ok {
					s, _ := strconv.Unquote(lit.Value)
					out[fn.Name.Name] = append(out[fn.Name.Name], s)
				}
			}
			return false
		})
	}
	return out
}

// TestTheKeyAdminTableNamesEveryParameterTaken: rules.md's key admin
// table says "Each request takes only the parameters its row names … any
// other … is a 400", so each row names every parameter server/keys.go
// takes for it (the DELETE row named only ?limit=L while the server takes
// plan too, as api.md says).
func TestTheKeyAdminTableNamesEveryParameterTaken(t *testing.T) {
	params := keyQueryParams(t)
	rows := map[string]string{ // handler -> the request cell's prefix
		"handleKeysTop":     "`GET /v1/keys?",
		"handleKeyInspect":  "`GET /v1/keys/{subject}",
		"handleKeyReset":    "`DELETE /v1/keys/{subject}",
		"handleKeyPenalize": "`POST /v1/keys/{subject}",
	}
	doc, err := os.ReadFile("rules.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "Each request takes only the parameters its row names") {
		t.Fatal("rules.md no longer says each request takes only its row's parameters: say which the server refuses")
	}
	for handler, prefix := range rows {
		took := params[handler]
		if len(took) == 0 {
			t.Fatalf("server/keys.go: %s calls keyQuery with no parameters found", handler)
		}
		var row string
		for _, line := range strings.Split(string(doc), "\n") {
			if strings.HasPrefix(line, "| "+prefix) {
				row = line
				break
			}
		}
		if row == "" {
			t.Fatalf("rules.md: no key admin table row for %s", prefix)
		}
		cell := strings.SplitN(strings.TrimPrefix(row, "| "), " | ", 2)[0]
		for _, p := range took {
			if !regexp.MustCompile(`[?&]` + p + `=`).MatchString(cell) {
				t.Errorf("rules.md: the row %s names no %q, which server/keys.go's %s takes (keyQuery: %s); the page says any parameter its row does not name is a 400",
					cell, p, handler, strings.Join(took, ", "))
			}
		}
	}
}

// TestRulesNamesEveryHeaderForwardAuthReadsAPathFrom: rules.md's path
// reading names every header forward-auth reads a path from, those its
// refusal of a request describing no URI names (server/forwardauth.go),
// ingress-nginx's X-Original-URL among them.
func TestRulesNamesEveryHeaderForwardAuthReadsAPathFrom(t *testing.T) {
	src, err := os.ReadFile("../server/forwardauth.go")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`"no (X-[^":]+?): the front proxy describes no request`).FindSubmatch(src)
	if m == nil {
		t.Fatal("server/forwardauth.go: the refusal of a request that describes no URI was not found")
	}
	headers := regexp.MustCompile(`X-[A-Za-z-]+`).FindAllString(string(m[1]), -1)
	doc, err := os.ReadFile("rules.md")
	if err != nil {
		t.Fatal(err)
	}
	claim := regexp.MustCompile(`(?s)forward-auth \(its (.*?)\[forward-auth\]`).FindSubmatch(doc)
	if claim == nil {
		t.Fatal("rules.md: the sentence naming forward-auth's path headers was not found")
	}
	said := strings.Join(strings.Fields(string(claim[1])), " ")
	for _, h := range headers {
		if !strings.Contains(said, "`"+h+"`") {
			t.Errorf("rules.md says forward-auth reads its path from %q; it reads %s too (server/forwardauth.go: %s)", said, h, m[1])
		}
	}
}

// TestTheDocsTellSluiceKeysTheHostLayoutsAdminListener: the host layout's
// admin listener (deploy/sluice.yaml, the systemd unit's) is off sluice's
// default 9090, where a Prometheus on that host listens, while sluice keys
// asks 127.0.0.1:9090 unless told: the docs tell the operator
// `-admin http://<listener>` (rules.md's and operations.md's sluice keys
// lines sent the admin token to Prometheus).
func TestTheDocsTellSluiceKeysTheHostLayoutsAdminListener(t *testing.T) {
	layout, err := os.ReadFile("../deploy/sluice.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^admin:\n(?:[ \t]+#.*\n)*[ \t]+listen: "([^"]+)"`).FindSubmatch(layout)
	if m == nil {
		t.Fatal("deploy/sluice.yaml: admin.listen not found")
	}
	listen := string(m[1])
	src, err := os.ReadFile("../cmd/sluice/keys.go")
	if err != nil {
		t.Fatal(err)
	}
	d := regexp.MustCompile(`defaultAdminURL = "http://([^"]+)"`).FindSubmatch(src)
	if d == nil {
		t.Fatal(`cmd/sluice/keys.go: defaultAdminURL was not found`)
	}
	if string(d[1]) == listen {
		return // sluice keys reaches the host layout's listener by default
	}
	var said bool
	for _, page := range []string{"rules.md", "operations.md", "../README.md"} {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		said = said || strings.Contains(string(b), "-admin http://"+listen)
	}
	if !said {
		t.Errorf("sluice keys calls http://%s by default, deploy/sluice.yaml's admin listener is %s, and no page tells the operator `-admin http://%s`",
			d[1], listen, listen)
	}
}

// TestTheLeaseHoldBackIsAsQuotasSays: quotas.md says a leased bucket
// holds back "a quarter of its burst, at least one unit" (it said at most
// a quarter, while a bucket of burst 2 holds back half: internal/leasehold
// holds back max(b/4, 1) units' refill).
func TestTheLeaseHoldBackIsAsQuotasSays(t *testing.T) {
	doc, err := os.ReadFile("quotas.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(strings.Fields(string(doc)), " "), "what it holds back (a quarter of its burst, at least one unit)") {
		t.Fatal("quotas.md no longer says what a leased bucket holds back as this test reads it")
	}
	for _, burst := range []int64{2, 3, 4, 8, 10, 100} {
		l := sluice.GCRA(5, time.Second).WithBurst(burst)
		shared, _, ok := leasehold.Of(l, leasehold.DefaultMaxAge)
		if !ok {
			continue // not leased: nothing held back
		}
		if hold := burst - shared.Burst(); hold > max(burst/4, 1) {
			t.Errorf("a leased GCRA of 5/s, burst %d, holds back %d of its burst (quotas.md: a quarter, at least one unit)", burst, hold)
		}
	}
}
