package main

import (
	"os"
	"path/filepath"
	"testing"
)

// The file a command writes beside one it replaces (writeBeside, renamed
// over it once written) is never readable by more than the replaced file
// while it is written: the text of a 0600 sluice.yaml is not left open to
// other users, who could keep a descriptor to it, until the chmod after
// the write. It is created with the permissions besidePerm gives, which
// are the replaced file's (less the umask), and ends with exactly them.
func TestAFileWrittenBesideIsNeverWiderThanTheFileItReplaces(t *testing.T) {
	for _, mode := range []os.FileMode{0o600, 0o640, 0o644, 0o400} {
		t.Run(mode.String(), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "sluice.yaml")
			if err := os.WriteFile(path, []byte("old\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, mode); err != nil {
				t.Fatal(err)
			}
			perm, replaced := besidePerm(path)
			if !replaced {
				t.Fatalf("besidePerm(%s) says no file is replaced", path)
			}
			f, err := createBeside(dir, "sluice.yaml", perm)
			if err != nil {
				t.Fatal(err)
			}
			defer os.Remove(f.Name())
			defer f.Close()
			st, err := f.Stat()
			if err != nil {
				t.Fatal(err)
			}
			if wider := st.Mode().Perm() &^ mode; wider != 0 {
				t.Errorf("the file being written beside a %v file is %v: %v more than the file it replaces", mode, st.Mode().Perm(), wider)
			}
			tmp, err := writeBeside(path, "new\n")
			if err != nil {
				t.Fatal(err)
			}
			defer os.Remove(tmp)
			if st, err := os.Stat(tmp); err != nil {
				t.Fatal(err)
			} else if st.Mode().Perm() != mode {
				t.Errorf("the file written beside a %v file ends %v, want its mode", mode, st.Mode().Perm())
			}
		})
	}
}
