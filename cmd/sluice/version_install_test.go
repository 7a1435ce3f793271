package main

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/internal/realtest"
)

// TestInstallFromModuleProxy does what README's first install line does,
// `go install github.com/sluice-dev/sluice/cmd/sluice@latest`, against a
// module proxy (a file:// one) that serves this work tree as the module's
// one version: the module zip holds what the go command would take from a
// repository (the files git tracks or would track, less nested modules),
// so a replace directive, a file outside the module or a missing go.sum
// line fails the install. The installed binary then reports the version and
// serves the embedded example configuration and its pages from / — nothing
// is read from a checkout.
func TestInstallFromModuleProxy(t *testing.T) {
	goMod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(goMod), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "replace") {
			t.Fatalf("go.mod has %q: go install module@version refuses a module with replace directives", line)
		}
	}
	tmp := t.TempDir()
	proxy := filepath.Join(tmp, "proxy")
	installVersion := writeModuleProxy(t, proxy, "../..", "github.com/sluice-dev/sluice", goMod)

	gobin := filepath.Join(tmp, "bin")
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	install := exec.CommandContext(ctx, "go", "install", "github.com/sluice-dev/sluice/cmd/sluice@latest")
	install.Dir = tmp
	// Built as realtest.GoBuild builds (-trimpath, CGO_ENABLED=0), so that
	// its dependencies are compiled once for every test that builds sluice;
	// sluice has no cgo, so nothing this test checks depends on either.
	install.Env = append(os.Environ(),
		"GOBIN="+gobin, "GOFLAGS=-trimpath", "CGO_ENABLED=0", "GOWORK=off",
		// Dependencies come from the module cache, or else the usual proxy.
		"GOPROXY=file://"+filepath.ToSlash(proxy)+","+goEnv(t, "GOPROXY"),
		"GONOSUMDB=github.com/sluice-dev/sluice", "GONOPROXY=", "GOPRIVATE=")
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("go install github.com/sluice-dev/sluice/cmd/sluice@latest: %v\n%s", err, out)
	}
	bin := filepath.Join(gobin, "sluice")

	version := exec.Command(bin, "version")
	version.Dir = "/"
	out, err := version.CombinedOutput()
	if err != nil {
		t.Fatalf("sluice version: %v\n%s", err, out)
	}
	if first, _, _ := strings.Cut(string(out), "\n"); first != "sluice "+installVersion {
		t.Errorf("sluice version, installed at %s, printed:\n%s", installVersion, out)
	}

	public, admin := realtest.FreeAddr(t), realtest.FreeAddr(t)
	// From /, where no file of the checkout is in reach.
	realtest.Start(t, "sluice serve", "/", nil, admin, bin, "serve", "-listen", public, "-admin-listen", admin)
	waitHealthy(t, "http://"+public+"/healthz")
	for _, url := range []string{
		"http://" + public + "/docs", "http://" + public + "/healthz",
		"http://" + admin + "/dashboard", "http://" + admin + "/designer", "http://" + admin + "/metrics",
	} {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || len(body) == 0 {
			t.Errorf("GET %s from the installed binary: %d, %d bytes", url, resp.StatusCode, len(body))
		}
	}
}

// writeModuleProxy lays out dir as a GOPROXY serving module mod at one
// version only, its zip made of the files git lists in root (tracked, or
// untracked and not ignored) outside nested modules, and returns that
// version: v0.1.0 with a pre-release named by a digest of those files, so
// that the module cache, which keeps a version once fetched, never serves
// an earlier run's tree as this one's.
func writeModuleProxy(t *testing.T, dir, root, mod string, goMod []byte) (version string) {
	t.Helper()
	ls := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	ls.Dir = root
	listed, err := ls.Output()
	if err != nil {
		t.Fatalf("git ls-files in %s: %v", root, err)
	}
	var files []string
	nested := map[string]bool{}
	for _, f := range strings.Split(strings.TrimRight(string(listed), "\x00"), "\x00") {
		if path.Base(f) == "go.mod" && f != "go.mod" {
			nested[path.Dir(f)] = true
		}
		files = append(files, f)
	}
	type file struct {
		name string
		data []byte
	}
	var kept []file
	digest := sha256.New()
	for _, f := range files {
		if inNested(f, nested) {
			continue
		}
		fi, err := os.Lstat(filepath.Join(root, f))
		if err != nil || !fi.Mode().IsRegular() { // deleted in the work tree, or a symlink (not in module zips)
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		kept = append(kept, file{f, data})
		fmt.Fprintf(digest, "%s %d\n", f, len(data))
		digest.Write(data)
	}
	version = fmt.Sprintf("v0.1.0-tree.h%x", digest.Sum(nil)[:6])
	var zipped bytes.Buffer
	zw := zip.NewWriter(&zipped)
	for _, f := range kept {
		w, err := zw.Create(mod + "@" + version + "/" + f.name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(f.data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	at := filepath.Join(dir, filepath.FromSlash(mod), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"list":            []byte(version + "\n"),
		version + ".info": []byte(`{"Version":"` + version + `","Time":"2026-01-01T00:00:00Z"}`),
		version + ".mod":  goMod,
		version + ".zip":  zipped.Bytes(),
	} {
		if err := os.WriteFile(filepath.Join(at, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return version
}

// inNested reports whether file f lies under one of the nested modules'
// directories.
func inNested(f string, nested map[string]bool) bool {
	for d := path.Dir(f); d != "."; d = path.Dir(d) {
		if nested[d] {
			return true
		}
	}
	return false
}

func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}

func waitHealthy(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: %v", url, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
