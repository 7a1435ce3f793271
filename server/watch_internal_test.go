package server

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestChangedSinceSeesAWriteTheWatchMissed: a rules file of a folder, a
// rules file named alone and the configuration file written after t count
// as changes; files that are not rules, and writes before t, do not.
func TestChangedSinceSeesAWriteTheWatchMissed(t *testing.T) {
	dir := t.TempDir()
	folder := filepath.Join(dir, "rules")
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	paths := map[string]string{
		"config": filepath.Join(dir, "sluice.yaml"), "single": filepath.Join(dir, "single.yaml"),
		"in folder": filepath.Join(folder, "a.yaml"), "notes": filepath.Join(folder, "notes.txt"),
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
	if err := os.Chtimes(folder, old, old); err != nil {
		t.Fatal(err)
	}
	ws := watchSetOf(paths["config"], []string{folder, paths["single"]}, nil)
	since := time.Now().Add(-time.Minute)
	if ws.changedSince(since) {
		t.Fatal("nothing was written after t, yet a change is seen")
	}
	for _, name := range []string{"notes", "config", "single", "in folder"} {
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
