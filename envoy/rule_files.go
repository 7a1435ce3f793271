package envoy

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// MaxRuleDepth is how many folders deep below a rules folder RuleFiles
// descends: a file deeper than that is an error, not left out.
const MaxRuleDepth = 8

// MaxRuleEntries bounds the entries of the folders that RuleFiles reads
// for one call, all folders together: files, subfolders and the names
// starting with "." that it skips alike. A tree with more is an error, so
// that a folder holding a huge tree cannot stall a load or a reload.
const MaxRuleEntries = 1000

// RuleFiles returns the files that LoadRuleFiles reads for paths, in the
// order it reads them, and the folders it finds them in. A path that is a
// file (or a link to one) is read as it is, whatever its name. A path
// that is a folder (or a link to one) contributes every file under it,
// whatever its name, subfolders included, in name order, as
// envoyproxy/ratelimit reads its runtime folder with
// RUNTIME_IGNOREDOTFILES set: a file or folder whose name starts with "."
// is skipped. So is a Kubernetes volume's "..data" and the timestamped
// folder it points to, whose files a ConfigMap's links name already. Links
// are followed, to files and folders alike; folders are listed as reached,
// through their links (the path and each subfolder below it, from the
// path). A link to nothing (whose target does not exist) under a folder
// is left out, as envoyproxy/ratelimit's loader leaves it out with a
// warning (LoadRuleFiles keeps its path for Rules.Skipped). A file or
// folder reached twice by the same path (a subfolder named beside its
// folder) is read once. A folder more than MaxRuleDepth deep, more than
// MaxRuleEntries entries in all, or a link to a folder that holds it, is
// an error; so is a path of paths that does not exist (a link to nothing
// included). With an error, files and folders hold what was found before
// it (a watcher of the folders watches those).
func RuleFiles(paths ...string) (files, folders []string, err error) {
	w, err := walkRules(paths)
	return w.files, w.folders, err
}

// SkippedLinks returns the links to nothing (whose target does not exist)
// under the folders of paths that RuleFiles leaves out, in the order it
// finds them, as Rules.Skipped lists them after LoadRuleFiles; nil when
// none. With an error, it returns those found before it.
func SkippedLinks(paths ...string) ([]string, error) {
	w, err := walkRules(paths)
	return w.skipped, err
}

// walkRules walks paths as RuleFiles does, and returns what it found,
// with the links to nothing it skipped.
func walkRules(paths []string) (*ruleWalk, error) {
	w := &ruleWalk{seen: map[string]bool{}}
	for _, p := range paths {
		p = filepath.Clean(p)
		st, err := os.Stat(p)
		if err != nil {
			return w, fmt.Errorf("envoy rules: %w", err)
		}
		if !st.IsDir() {
			w.file(p)
			continue
		}
		if err := w.folder(p, 0, []os.FileInfo{st}); err != nil {
			return w, err
		}
	}
	return w, nil
}

// ruleWalk accumulates what RuleFiles finds.
type ruleWalk struct {
	files, folders []string
	skipped        []string        // links to nothing, left out
	seen           map[string]bool // the paths of files and folders
	entries        int             // read so far, of at most MaxRuleEntries
}

// danglingLink reports whether path, whose os.Stat failed with err, is a
// link to nothing: a link whose target does not exist.
func danglingLink(path string, err error) bool {
	if !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	st, lerr := os.Lstat(path)
	return lerr == nil && st.Mode()&fs.ModeSymlink != 0
}

// file adds the file at path, unless it is added already.
func (w *ruleWalk) file(path string) {
	if !w.seen[path] {
		w.seen[path] = true
		w.files = append(w.files, path)
	}
}

// folder adds the files of dir, depth folders below a path, whose own
// folder and those above it up to the path are up, unless dir is added
// already.
func (w *ruleWalk) folder(dir string, depth int, up []os.FileInfo) error {
	if w.seen[dir] {
		return nil
	}
	w.seen[dir] = true
	w.folders = append(w.folders, dir)
	names, err := w.names(dir)
	if err != nil {
		return err
	}
	for _, name := range names {
		if strings.HasPrefix(name, ".") {
			continue
		}
		p := filepath.Join(dir, name)
		st, err := os.Stat(p)
		if err != nil && danglingLink(p, err) {
			w.skipped = append(w.skipped, p)
			continue
		}
		if err != nil {
			return fmt.Errorf("envoy rules: %w", err)
		}
		if !st.IsDir() {
			w.file(p)
			continue
		}
		if i := slices.IndexFunc(up, func(a os.FileInfo) bool { return os.SameFile(a, st) }); i >= 0 {
			return fmt.Errorf("envoy rules: %s is a link back to %s, a folder that holds it", p, ancestor(dir, len(up)-1-i))
		}
		if depth+1 > MaxRuleDepth {
			return fmt.Errorf("envoy rules: %s is more than %d folders deep in a rules folder", p, MaxRuleDepth)
		}
		if err := w.folder(p, depth+1, append(up, st)); err != nil {
			return err
		}
	}
	return nil
}

// names returns the names in dir, sorted, reading no more than the
// entries left of MaxRuleEntries and one.
func (w *ruleWalk) names(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("envoy rules: %w", err)
	}
	defer f.Close()
	names, err := f.Readdirnames(MaxRuleEntries - w.entries + 1)
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("envoy rules: %w", err)
	}
	if w.entries += len(names); w.entries > MaxRuleEntries {
		return nil, fmt.Errorf("envoy rules: the rules folders hold more than %d entries (at %s): name fewer files", MaxRuleEntries, dir)
	}
	slices.Sort(names)
	return names, nil
}

// ancestor returns the folder n levels above dir.
func ancestor(dir string, n int) string {
	for range n {
		dir = filepath.Dir(dir)
	}
	return dir
}
