package server

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

// TestChangedSinceSeesAWriteTheWatchMissed: a rules file of a folder or of
// a subfolder, a rules file named alone and the configuration file
// written after t count as changes; dotfiles, which are not rules, and
// writes before t, do not.
func TestChangedSinceSeesAWriteTheWatchMissed(t *testing.T) {
	dir := t.TempDir()
	folder := filepath.Join(dir, "rules")
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	paths := map[string]string{
		"config": filepath.Join(dir, "sluice.yaml"), "single": filepath.Join(dir, "single.yaml"),
		"in folder": filepath.Join(folder, "a.yaml"), "notes": filepath.Join(folder, ".notes.txt"),
		"in subfolder": filepath.Join(folder, "sub", "b"),
	}
	if err := os.Mkdir(filepath.Join(folder, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	for _, p := range paths {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{folder, filepath.Join(folder, "sub"), dir} {
		if err := os.Chtimes(d, old, old); err != nil {
			t.Fatal(err)
		}
	}
	ws := watchSetOf(paths["config"], []string{folder, paths["single"]}, nil)
	since := time.Now().Add(-time.Minute)
	if ws.changedSince(since) {
		t.Fatal("nothing was written after t, yet a change is seen")
	}
	for _, name := range []string{"notes", "config", "single", "in folder", "in subfolder"} {
		now := time.Now()
		if err := os.Chtimes(paths[name], now, now); err != nil {
			t.Fatal(err)
		}
		if got, want := ws.changedSince(since), name != "notes"; got != want {
			t.Errorf("%s written after t: changedSince %v, want %v", name, got, want)
		}
		if err := os.Chtimes(paths[name], old, old); err != nil {
			t.Fatal(err)
		}
	}
}

// TestConcernsTLSFiles: in a directory of TLS files, an event on one of
// them, on a ".." entry (a Kubernetes volume's swapped link) or on where
// a link of theirs points counts; any other file there does not.
func TestConcernsTLSFiles(t *testing.T) {
	dir, target := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(target, "real.pem"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(target, "real.pem"), filepath.Join(dir, "tls.crt")); err != nil {
		t.Fatal(err)
	}
	ws := watchSetOf(filepath.Join(t.TempDir(), "sluice.yaml"), nil, []string{filepath.Join(dir, "tls.crt"), ""})
	for path, want := range map[string]bool{
		filepath.Join(dir, "tls.crt"):         true,
		filepath.Join(dir, "..data"):          true,
		filepath.Join(dir, "..2026_12_02"):    true,
		filepath.Join(target, "real.pem"):     true,
		filepath.Join(dir, "notes.txt"):       false,
		filepath.Join(target, "other.pem"):    false,
		filepath.Join(t.TempDir(), "tls.crt"): false,
	} {
		if got := ws.concerns(path); got != want {
			t.Errorf("concerns(%s) = %v, want %v", path, got, want)
		}
	}
}

// TestAFolderMadeWhileTheWatchesAreRenewedIsNotMissed: a folder made on
// the way to a skipped link's target after the watch set was read, before
// the watcher watched its parent (the event of its making lost), is
// watched by the time renewWatches returns, or renewWatches reports the
// change: the target then written in it is not missed.
func TestAFolderMadeWhileTheWatchesAreRenewedIsNotMissed(t *testing.T) {
	dir := t.TempDir()
	folder, shared := filepath.Join(dir, "rules"), filepath.Join(dir, "shared")
	for _, d := range []string{folder, shared} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	target := filepath.Join(shared, "later", "new.yaml")
	if err := os.Symlink(target, filepath.Join(folder, "new.yaml")); err != nil {
		t.Fatal(err)
	}
	cfgFile := filepath.Join(dir, "sluice.yaml")
	reads := 0
	current := func() watchSet {
		reads++
		ws := watchSetOf(cfgFile, []string{folder}, nil)
		if reads == 1 {
			if err := os.Mkdir(filepath.Dir(target), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		return ws
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ws, changed := renewWatches(w, watchSet{}, current, slog.New(slog.DiscardHandler))
	if changed {
		return
	}
	if err := os.WriteFile(target, []byte("domain: new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev := <-w.Events:
			if ws.concerns(ev.Name) {
				return
			}
		case err := <-w.Errors:
			t.Fatal(err)
		case <-deadline:
			t.Fatalf("the target written in a folder made while the watches were renewed raised no event concerning %v, and renewWatches reported no change", ws.dirs)
		}
	}
}

// TestChangedSinceSeesALinkedTargetRemoved: the target of a rules file's
// link, in a folder outside the rules folder, removed after t counts as a
// change (the event of its removal is lost when it falls between the
// watch of its folder being dropped and added again); a removal before t
// does not.
func TestChangedSinceSeesALinkedTargetRemoved(t *testing.T) {
	dir := t.TempDir()
	folder, shared := filepath.Join(dir, "rules"), filepath.Join(dir, "shared")
	for _, d := range []string{folder, shared} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	target := filepath.Join(shared, "linked.yaml")
	if err := os.WriteFile(target, []byte("domain: linked\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(folder, "linked.yaml")); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{target, folder, shared, dir} {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	ws := watchSetOf(filepath.Join(dir, "sluice.yaml"), []string{folder}, nil)
	since := time.Now().Add(-time.Minute)
	if ws.changedSince(since) {
		t.Fatal("nothing was written after t, yet a change is seen")
	}
	if err := os.Remove(target); err != nil {
		t.Fatal(err)
	}
	if !ws.changedSince(since) {
		t.Error("the linked target removed after t: changedSince false, want true")
	}
	if ws.changedSince(time.Now().Add(time.Minute)) {
		t.Error("the linked target removed before t: changedSince true, want false")
	}
}
