package server_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/server"
)

// docsCodeLanguages are the languages of /docs's code examples: the id of
// each one's block, and the program that runs it.
var docsCodeLanguages = []struct{ name, id, program, hint string }{
	{"curl", "code-curl", "bash", "Debian's bash"},
	{"go", "code-go", "go", "the Go toolchain"},
	{"js", "code-js", "node", "Debian's nodejs (make deps)"},
	{"python", "code-python", "python3", "Debian's python3-requests (make deps)"},
}

// TestBrowserDocsCodeBacksOff copies each code example from /docs as a
// reader sees it in Chromium (addressed to the API serving the page), and
// runs it with real curl, Go, Node.js and Python against that API, for a
// key whose quota was just spent: each is refused, waits as Retry-After
// says, and gets through with its one retry.
func TestBrowserDocsCodeBacksOff(t *testing.T) {
	// The example must ask before the spent unit comes back: python3
	// importing requests on a loaded machine took more than 5 s.
	const window = 15 * time.Second
	cfg := "plans:\n  clients:\n    limits:\n      - {name: per-15s, algorithm: gcra, quantity: 1, window: 15s, burst: 1}\n" +
		"default_plan: clients\nkeys:\n"
	for _, l := range docsCodeLanguages {
		sum := sha256.Sum256([]byte(l.name + "-key"))
		cfg += fmt.Sprintf("  - {name: %s, sha256: %s, plan: clients}\n", l.name, hex.EncodeToString(sum[:]))
	}
	d := newPageServer(t, cfg, nil, false)
	for _, l := range docsCodeLanguages {
		if _, err := exec.LookPath(l.program); err != nil {
			t.Fatalf("running the %s example needs %s: install %s", l.name, l.program, l.hint)
		}
	}
	if out, err := exec.Command("python3", "-c", "import requests").CombinedOutput(); err != nil {
		t.Fatalf("the Python example needs requests: install Debian's python3-requests (make deps): %v\n%s", err, out)
	}

	ctx := chromium.Tab(t)
	run(t, ctx, chromedp.Navigate(d.pub.URL+"/docs"))
	code := map[string]string{}
	for _, l := range docsCodeLanguages {
		code[l.name] = eval[string](t, ctx, `document.getElementById("`+l.id+`").innerText`)
	}
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("example.mjs", code["js"])
	write("example.py", code["python"])
	buildGoExample(t, code["go"], filepath.Join(dir, "example"))
	commands := map[string][]string{
		"curl":   {"bash", "-c", code["curl"]},
		"go":     {filepath.Join(dir, "example")},
		"js":     {"node", filepath.Join(dir, "example.mjs")},
		"python": {"python3", filepath.Join(dir, "example.py")},
	}

	for _, l := range docsCodeLanguages {
		t.Run(l.name, func(t *testing.T) {
			t.Parallel() // each on a key of its own
			key := l.name + "-key"
			// Spend the key's quota: its next unit comes in 15 s.
			if code, body := get(t, "GET", d.pub.URL+"/v1/items", "", map[string]string{"X-API-Key": key}); code != 200 {
				t.Fatalf("spending the quota: %d %s", code, body)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 4*window)
			defer cancel()
			args := commands[l.name]
			cmd := exec.CommandContext(ctx, args[0], args[1:]...)
			cmd.Env = append(os.Environ(), "API_KEY="+key)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			start := time.Now()
			out, err := cmd.Output()
			took := time.Since(start)
			if err != nil {
				t.Fatalf("the %s example failed after %v: %v\n%s%s", l.name, took, err, out, stderr.String())
			}
			refused := refusalsOf(t, d, l.name)
			if hits := d.upstreamHits(key); refused < 1 || hits != 2 || took < time.Second {
				t.Errorf("the %s example took %v, was refused %d times, reached the API %d times (with the spending request); want a refusal, a wait and one retry through\n%s",
					l.name, took, refused, hits, out)
			}
			// curl prints the body, the others the status.
			if want := map[bool]string{true: "ok", false: "200"}[l.name == "curl"]; !strings.HasPrefix(string(out), want) {
				t.Errorf("the %s example printed %q, want %s…", l.name, out, want)
			}
		})
	}
}

// refusalsOf returns the refusals of the key named name, as the dashboard
// counts them.
func refusalsOf(t *testing.T, d *pageServer, name string) int64 {
	t.Helper()
	_, body := get(t, "GET", d.admin.URL+"/dashboard/data", "", map[string]string{server.TokenHeader: testToken})
	var data struct {
		Top []struct {
			Client  string `json:"client"`
			Refused int64  `json:"refused"`
		} `json:"topLimited"`
	}
	if err := json.Unmarshal([]byte(body), &data); err != nil {
		t.Fatalf("/dashboard/data: %v\n%s", err, body)
	}
	for _, c := range data.Top {
		if c.Client == "api-key:"+name {
			return c.Refused
		}
	}
	return 0
}

// buildGoExample builds the Go program text as a main package of this
// module (an overlay file under server/testdata: nothing is written to the
// source tree) into the executable bin.
func buildGoExample(t *testing.T, text, bin string) {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	pkg := filepath.Join(root, "server", "testdata", "docsexample")
	overlay, _ := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(pkg, "main.go"): src}})
	if err := os.WriteFile(filepath.Join(dir, "overlay.json"), overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := realtest.GoBuild("-overlay", filepath.Join(dir, "overlay.json"), "-o", bin, "./server/testdata/docsexample")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the Go example: %v\n%s\n%s", err, out, text)
	}
}
