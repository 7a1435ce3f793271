package server_test

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/testpki"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// reloadsMetric returns the sluice_config_reloads_total lines of the
// admin listener's metrics.
func reloadsMetric(t *testing.T, admin string) string {
	t.Helper()
	resp, err := http.Get("http://" + admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "sluice_config_reloads_total") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// within polls cond every 50 ms for up to d.
func within(d time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(d); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

// watcherRuns rewrites the configuration file with another
// docs_path and waits for the watcher to reload it: the watcher runs.
func watcherRuns(t *testing.T, srv *server.Server, file, text, docs string) {
	t.Helper()
	if err := os.WriteFile(file, []byte("docs_path: "+docs+"\n"+text), 0o600); err != nil {
		t.Fatal(err)
	}
	if !within(10*time.Second, func() bool { return srv.Config().DocsPath == docs }) {
		t.Fatalf("the watcher did not reload the configuration file written in place (docs_path %s)", srv.Config().DocsPath)
	}
}

// letWatcherSettle lets the watcher finish what follows a reload (the
// renewal of its watches, and its look for a change made meanwhile)
// before a test changes the files again: a change made within that
// window is caught by that look, not by an event, and would not show
// whether the event alone reloads. A generous second.
func letWatcherSettle() { time.Sleep(time.Second) }

// TestACertbotRenewalOfLinkedLiveFilesIsServed: the listener's certificate
// and key are links to certbot's live/ files (ln -s
// /etc/letsencrypt/live/example/fullchain.pem /etc/sluice/tls.crt), which
// are links into archive/. A renewal as certbot makes it (new
// archive/…2.pem files, the live/ links unlinked and made again to point
// at them) is served without a signal: the watcher watches the folder of
// every link on the way, live/ among them (docs/decisions.md, "certbot's
// relinked live/ files").
func TestACertbotRenewalOfLinkedLiveFilesIsServed(t *testing.T) {
	ca := testpki.New(t, "renewal CA")
	le := t.TempDir()
	archive, live := filepath.Join(le, "archive", "example"), filepath.Join(le, "live", "example")
	for _, d := range []string{archive, live} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	issue := func(version string) *x509.Certificate {
		t.Helper()
		c := ca.Server(t, "public")
		for from, to := range map[string]string{ca.File("public"): "fullchain" + version + ".pem", ca.KeyFile("public"): "privkey" + version + ".pem"} {
			b, err := os.ReadFile(from)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(archive, to), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		cert, err := x509.ParseCertificate(c.Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		return cert
	}
	relink := func(version string) { // certbot's storage._update_link_to: unlink, then symlink
		t.Helper()
		for _, kind := range []string{"fullchain", "privkey"} {
			link := filepath.Join(live, kind+".pem")
			os.Remove(link)
			if err := os.Symlink(filepath.Join("..", "..", "archive", "example", kind+version+".pem"), link); err != nil {
				t.Fatal(err)
			}
		}
	}
	first := issue("1")
	relink("1")
	conf := t.TempDir()
	for name, target := range map[string]string{"tls.crt": "fullchain.pem", "tls.key": "privkey.pem"} {
		if err := os.Symlink(filepath.Join(live, target), filepath.Join(conf, name)); err != nil {
			t.Fatal(err)
		}
	}
	text := "tls: {cert_file: " + filepath.Join(conf, "tls.crt") + ", key_file: " + filepath.Join(conf, "tls.key") + "}\n" +
		"plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	srv, file := loadServer(t, conf, text, true)
	addrs := serveOn(t, srv)
	served := func() *x509.Certificate {
		conn, err := tls.Dial("tcp", addrs.public, &tls.Config{RootCAs: ca.Pool, MinVersion: tls.VersionTLS12})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0]
	}
	if !served().Equal(first) {
		t.Fatal("the listener does not serve the linked certificate")
	}
	watcherRuns(t, srv, file, text, "/docs-watched")
	letWatcherSettle()

	second := issue("2")
	relink("2") // the renewal
	if !within(10*time.Second, func() bool { return served().Equal(second) }) {
		t.Fatalf("10 s after certbot renewed the certificate (live/ relinked to archive/…2.pem), the listener still serves serial %v, want %v; reloads: %q",
			served().SerialNumber, second.SerialNumber, reloadsMetric(t, addrs.admin))
	}
}

// TestAConfigFolderRemovedAndMadeAgainIsReloaded: the folder of the
// configuration file removed (the reload that follows is refused: the
// file is gone), then made again with a valid file, as a deployment that
// replaces a folder (rm -rf, then copy) does, is reloaded without a
// signal: the watcher awaits a missing folder in the nearest parent that
// exists, and watches it again once it is made.
func TestAConfigFolderRemovedAndMadeAgainIsReloaded(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "conf")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	text := "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	srv, file := loadServer(t, dir, text, true)
	addrs := serveOn(t, srv)
	watcherRuns(t, srv, file, text, "/docs-watched")

	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if !within(10*time.Second, func() bool {
		return strings.Contains(reloadsMetric(t, addrs.admin), `sluice_config_reloads_total{result="refused"} 1`)
	}) {
		t.Fatalf("no refused reload after the folder was removed: %q", reloadsMetric(t, addrs.admin))
	}
	letWatcherSettle()
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("docs_path: /docs-again\n"+text), 0o600); err != nil {
		t.Fatal(err)
	}
	if !within(10*time.Second, func() bool { return srv.Config().DocsPath == "/docs-again" }) {
		t.Fatalf("10 s after the configuration's folder was made again with a valid file, docs_path %s, want /docs-again; reloads: %q",
			srv.Config().DocsPath, reloadsMetric(t, addrs.admin))
	}
}

// TestAChangeBetweenLoadAndNewIsReloaded: a change of the file written
// after config.Load read it and before server.New (sluice serve opens the
// store between the two; a ConfigMap updated while the pod starts) is
// reloaded once the watcher starts: what the configuration in force was
// read from is the digest of the bytes Load read (config.Config.Read),
// not of the files as New finds them.
func TestAChangeBetweenLoadAndNewIsReloaded(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "sluice.yaml")
	text := "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	if err := os.WriteFile(file, []byte("docs_path: /docs-a\n"+text), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	// The file changes after it was read, before the server is built.
	if err := os.WriteFile(file, []byte("docs_path: /docs-b\n"+text), 0o600); err != nil {
		t.Fatal(err)
	}
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	srv, err := server.New(server.Options{Config: cfg, Store: store, Memory: store, WatchFile: file,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Load: func() (*config.Config, error) { return config.Load(file) }})
	if err != nil {
		t.Fatal(err)
	}
	addrs := serveOn(t, srv)
	if !within(5*time.Second, func() bool { return srv.Config().DocsPath == "/docs-b" }) {
		t.Fatalf("5 s after serving, docs_path %s, want /docs-b (the file's content since before New); reloads: %q",
			srv.Config().DocsPath, reloadsMetric(t, addrs.admin))
	}
}

// TestAKeysFileARefusedConfigurationNamesReloadsOnceWritten: a
// configuration changed to name a keys file that is not there yet
// (deployed before the job that writes it ran) is refused, and the
// previous one keeps serving; writing the keys file then reloads without
// a signal ("Fix the file: the next change reloads it",
// docs/operations.md): after a refused reload the watcher also watches
// the files the refused configuration names.
func TestAKeysFileARefusedConfigurationNamesReloadsOnceWritten(t *testing.T) {
	dir := t.TempDir()
	keyLine := func(name string) string {
		return fmt.Sprintf("- {name: %s, sha256: %x, plan: free}\n", name, sha256.Sum256([]byte(name+"-secret")))
	}
	if err := os.WriteFile(filepath.Join(dir, "keys.yaml"), []byte(keyLine("acme")), 0o600); err != nil {
		t.Fatal(err)
	}
	text := "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	srv, file := loadServer(t, dir, "keys_file: keys.yaml\n"+text, true)
	addrs := serveOn(t, srv)
	watcherRuns(t, srv, file, "keys_file: keys.yaml\n"+text, "/docs-watched")

	if err := os.WriteFile(file, []byte("docs_path: /docs-new\nkeys_file: keys-new.yaml\n"+text), 0o600); err != nil {
		t.Fatal(err)
	}
	if !within(10*time.Second, func() bool {
		return strings.Contains(reloadsMetric(t, addrs.admin), `sluice_config_reloads_total{result="refused"} 1`)
	}) {
		t.Fatalf("no refused reload for a missing keys file: %q", reloadsMetric(t, addrs.admin))
	}
	letWatcherSettle()
	if err := os.WriteFile(filepath.Join(dir, "keys-new.yaml"), []byte(keyLine("acme")+keyLine("globex")), 0o600); err != nil {
		t.Fatal(err)
	}
	if !within(10*time.Second, func() bool { return srv.Config().DocsPath == "/docs-new" }) {
		t.Fatalf("10 s after the keys file the configuration names was written, docs_path %s, want /docs-new; reloads: %q",
			srv.Config().DocsPath, reloadsMetric(t, addrs.admin))
	}
}

// TestAReleaseFolderSwappedThroughALinkIsReloaded: a configuration read
// through a folder that is a link (current -> releases/<n>, as Capistrano
// and many deploy tools lay a release out) is reloaded without a signal
// when a deploy swaps that link (ln -s releases/v2 current.tmp && mv -T
// current.tmp current): the folder holding the link is watched, and the
// link's name counts.
func TestAReleaseFolderSwappedThroughALinkIsReloaded(t *testing.T) {
	root := t.TempDir()
	text := "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	release := func(name, docs string) {
		t.Helper()
		dir := filepath.Join(root, "releases", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "sluice.yaml"), []byte("docs_path: "+docs+"\n"+text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	swap := func(name string) {
		t.Helper()
		tmp := filepath.Join(root, "current.tmp")
		if err := os.Symlink(filepath.Join("releases", name), tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(root, "current")); err != nil {
			t.Fatal(err)
		}
	}
	release("v1", "/docs-v1")
	swap("v1")
	file := filepath.Join(root, "current", "sluice.yaml")
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	srv, err := server.New(server.Options{Config: cfg, Store: store, Memory: store, WatchFile: file,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Load: func() (*config.Config, error) { return config.Load(file) }})
	if err != nil {
		t.Fatal(err)
	}
	addrs := serveOn(t, srv)
	// The watcher runs: a write of the file in place reloads.
	watcherRuns(t, srv, filepath.Join(root, "releases", "v1", "sluice.yaml"), text, "/docs-v1-edited")
	letWatcherSettle()

	release("v2", "/docs-v2")
	swap("v2") // the deploy
	if !within(10*time.Second, func() bool { return srv.Config().DocsPath == "/docs-v2" }) {
		t.Fatalf("10 s after current was swapped to releases/v2, docs_path %s, want /docs-v2; reloads: %q",
			srv.Config().DocsPath, reloadsMetric(t, addrs.admin))
	}
}
