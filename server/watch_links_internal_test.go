package server

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The folders watched for the targets of links to nothing in a rules
// folder are at most maxAwaitedDirs, however many links there are; a link
// whose folders are watched already for another costs none, and a link
// past the bound is counted as unwatched.
func TestTheFoldersAwaitingLinkTargetsAreBounded(t *testing.T) {
	dir := t.TempDir()
	folder := filepath.Join(dir, "rules")
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	const extra = 5
	for i := range maxAwaitedDirs + extra {
		target := filepath.Join(dir, fmt.Sprint("t", i))
		if err := os.Mkdir(target, 0o755); err != nil {
			t.Fatal(err)
		}
		// Two links into each folder: the second is awaited in the
		// folder the first is.
		for _, name := range []string{"a.yaml", "b.yaml"} {
			if err := os.Symlink(filepath.Join(target, name), filepath.Join(folder, fmt.Sprint(i, name))); err != nil {
				t.Fatal(err)
			}
		}
	}
	ws := watchSetOf(filepath.Join(dir, "sluice.yaml"), []string{folder}, nil)
	if len(ws.awaited) != maxAwaitedDirs || ws.unwatchedLinks != 2*extra {
		t.Errorf("%d folders awaited and %d links unwatched, want %d and %d", len(ws.awaited), ws.unwatchedLinks, maxAwaitedDirs, 2*extra)
	}
	for d, names := range ws.awaited {
		if !slices.Equal(names, []string{"a.yaml", "b.yaml"}) {
			t.Errorf("%s awaits %v, want both links' targets", d, names)
		}
	}
	if len(ws.dirs) > maxAwaitedDirs+2 { // and the rules folder, and the configuration's
		t.Errorf("%d folders watched: %v", len(ws.dirs), ws.dirs)
	}
}
