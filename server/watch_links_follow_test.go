package server

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// TestTheWatchSetFollowsEveryLinkOnTheWay: the watch set of a file reached
// through links watches the folder of every link on the way and counts an
// event on that link's name, not only the folder the path names and that
// of the final target. Two layouts: certbot's live/ links linked again
// from the configuration's folder (conf/tls.crt -> live/fullchain.pem ->
// ../../archive/fullchain1.pem: a renewal relinks live/fullchain.pem), and
// a release folder swapped through a link (current -> releases/v1, the
// configuration read as current/sluice.yaml: a deploy swaps current).
func TestTheWatchSetFollowsEveryLinkOnTheWay(t *testing.T) {
	root := t.TempDir()
	mk := func(dir string) string {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	archive, live, conf := mk(filepath.Join(root, "archive", "x")), mk(filepath.Join(root, "live", "x")), mk(filepath.Join(root, "conf"))
	if err := os.WriteFile(filepath.Join(archive, "fullchain1.pem"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../archive/x/fullchain1.pem", filepath.Join(live, "fullchain.pem")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(live, "fullchain.pem"), filepath.Join(conf, "tls.crt")); err != nil {
		t.Fatal(err)
	}
	v1 := mk(filepath.Join(root, "releases", "v1"))
	if err := os.WriteFile(filepath.Join(v1, "sluice.yaml"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("releases/v1", filepath.Join(root, "current")); err != nil {
		t.Fatal(err)
	}

	ws := watchSetOf(filepath.Join(root, "current", "sluice.yaml"), nil, []string{filepath.Join(conf, "tls.crt")})
	for _, c := range []struct{ what, dir, event string }{
		{"the link in the configuration's folder", conf, filepath.Join(conf, "tls.crt")},
		{"certbot relinks live/fullchain.pem", live, filepath.Join(live, "fullchain.pem")},
		{"certbot's archive file, the target", archive, filepath.Join(archive, "fullchain1.pem")},
		{"a deploy swaps the current link", root, filepath.Join(root, "current")},
		{"the configuration file in the release", v1, filepath.Join(v1, "sluice.yaml")},
	} {
		if !slices.Contains(ws.dirs, c.dir) || !ws.concerns(c.event) {
			t.Errorf("%s: folder %s watched %v, event on %s counts %v; want both (dirs watched: %v)",
				c.what, c.dir, slices.Contains(ws.dirs, c.dir), c.event, ws.concerns(c.event), ws.dirs)
		}
	}
}

// TestPathWaitsEndsAsTheSystemDoes: resolving a path through a loop of
// links, or through a chain of more links than the system follows (40 on
// Linux, ELOOP), ends, with at most maxPathLinks+1 links to watch; a path
// through a missing folder awaits that folder's name in its parent.
func TestPathWaitsEndsAsTheSystemDoes(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink("b", filepath.Join(dir, "a")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a", filepath.Join(dir, "b")); err != nil {
		t.Fatal(err)
	}
	if got := pathWaits(filepath.Join(dir, "a")); len(got) != maxPathLinks+1 || got[0] != (linkWait{dir, "a"}) || got[1] != (linkWait{dir, "b"}) {
		t.Errorf("a loop of two links: %d waits starting %v, want %d starting with a then b", len(got), got[:min(len(got), 2)], maxPathLinks+1)
	}
	name := func(i int) string { return fmt.Sprintf("l%02d", i) }
	for i := range 50 {
		if err := os.Symlink(filepath.Join(dir, "chain", name(i)), filepath.Join(dir, name(i))); err != nil {
			t.Fatal(err)
		}
	}
	if got := pathWaits(filepath.Join(dir, name(0))); len(got) != 2 || got[1] != (linkWait{dir, "chain"}) {
		t.Errorf("a link into a missing folder: %v, want the link and the folder's name in its parent", got)
	}
	if err := os.Mkdir(filepath.Join(dir, "chain"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 49 {
		if err := os.Symlink(filepath.Join(dir, name(i+1)), filepath.Join(dir, "chain", name(i))); err != nil {
			t.Fatal(err)
		}
	}
	if got := pathWaits(filepath.Join(dir, name(0))); len(got) != maxPathLinks+1 {
		t.Errorf("a chain of 99 links: %d waits, want %d", len(got), maxPathLinks+1)
	}
}

// TestConfigDigestIsOfWhatWasRead: sluice_config_info's digest names the
// bytes the configuration in force was read from, not what its file holds
// when the digest is taken: a change written after config.Load, not yet
// loaded, leaves it, and a load of the changed file changes it.
func TestConfigDigestIsOfWhatWasRead(t *testing.T) {
	file := filepath.Join(t.TempDir(), "sluice.yaml")
	write := func(docs string) {
		t.Helper()
		text := "docs_path: " + docs + "\nplans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("/docs-a")
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	read := configDigest(cfg)
	write("/docs-b")
	if got := configDigest(cfg); got != read {
		t.Errorf("the file changed after it was read: digest %s, want %s (what was read)", got, read)
	}
	changed, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if got := configDigest(changed); got == read {
		t.Errorf("the changed file loaded: digest %s, the same as before the change", got)
	}
}
