package deploy_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/internal/realtest"
)

// exampleToken is the Prometheus caller's token whose hash the shipped
// configurations hold.
const exampleToken = "sluice_example-prometheus-token-replace-me"

// served is a sluice serve process started by a test: its public and admin
// listeners' addresses.
type served struct {
	public, admin string
	proc          *realtest.Process
}

// serveWith starts the command args (whose listeners are on public and
// admin) and returns once both listeners answer /healthz.
func serveWith(t *testing.T, public, admin string, args ...string) *served {
	t.Helper()
	return serveWithEnv(t, nil, public, admin, args...)
}

// serveWithEnv is serveWith with the variables env ("NAME=value") added
// to the command's environment.
func serveWithEnv(t *testing.T, env []string, public, admin string, args ...string) *served {
	t.Helper()
	p := realtest.Start(t, "sluice", "", env, admin, args...)
	s := &served{public: public, admin: admin, proc: p}
	for _, addr := range []string{admin, public} {
		deadline := time.Now().Add(15 * time.Second)
		for {
			code, _, _ := get(t, "http://"+addr+"/healthz", "")
			if code == http.StatusOK {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("sluice serve: %s/healthz answered %d; its output:\n%s", addr, code, p.Output())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return s
}

// writeFile writes text to a new file name in a temporary directory and
// returns its path.
func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// readFile returns the contents of a file of the repository.
func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// get sends GET url, with token as a bearer token unless it is "", and
// returns the status (0 when the request failed), body and headers.
func get(t *testing.T, url, token string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err.Error(), nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}
