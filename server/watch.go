package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/envoy"
)

// watch reloads the configuration on Options.Reloads and, with WatchFile, when the
// file changes or when the Envoy rules it names change: a rules file, or
// a file or folder created, written, renamed or removed in a rules
// directory or any folder below it that envoy.RuleFiles reads, but for
// names starting with "." (as envoyproxy/ratelimit watches its runtime
// folder; a ".." entry, a Kubernetes volume's swapped link, counts), or
// the target of a link there appearing or changing, wherever it is (a
// link to nothing, which is skipped, or to a rules file; see
// awaitTargets, which bounds the folders watched for them); or when
// a TLS file of the listeners or of upstream_tls, or the keys file,
// changes, or, for any of these files and the configuration file, the
// file a link of theirs points to, or a ".." entry beside them, so that a
// renewed certificate is served, a new key admitted and an updated
// ConfigMap applied without a signal (certbot relinks its live files,
// Kubernetes swaps a mounted Secret's or ConfigMap's ..data link). Editors
// and config managers often replace a file rather than write it, and
// deployments swap a folder through a symbolic link, so the directories
// holding them are watched, events are filtered by name, and the watches
// are renewed after every reload (following a swapped link, and the rules
// of the new configuration) and after events that changed nothing loaded
// (a folder made on the way to a link's target); bursts of events are
// coalesced, and files rewritten with the bytes they held cause no reload
// (Reloads always does; so do they after a refused reload, which they
// undo). A change
// that does not load is refused and logged by Reload, and the previous
// configuration and rules keep serving.
func (s *Server) watch(ctx context.Context) {
	var (
		w      *fsnotify.Watcher
		events <-chan fsnotify.Event
		errs   <-chan error
		set    watchSet
		moved  bool // the files changed while the watches were renewed
	)
	if s.opts.WatchFile != "" {
		var err error
		if w, err = fsnotify.NewWatcher(); err != nil {
			s.log.Warn("cannot watch the configuration file; reload with SIGHUP", "err", err)
		} else {
			defer w.Close()
			events, errs = w.Events, w.Errors
			set, moved = s.renewWatches(w, watchSet{})
		}
	}
	var debounce <-chan time.Time
	if w != nil && (moved || set.digest() != s.loaded) {
		// A file changed after New read it and before the watches began.
		debounce = time.After(100 * time.Millisecond)
	}
	// reload reloads, unless changed is set and the watched files hold
	// what the configuration in force was read from (rewritten as they
	// were, as config managers do): a reload gives leases back and
	// rebuilds the middleware, for nothing then. After a refused reload
	// it reloads even so: files written back as they were undo the change
	// that was refused, and the reload says that the configuration on
	// disk is in force again. The digest is taken before the reload reads
	// the files, so a change made meanwhile is seen again.
	refused := false
	reload := func(changed bool) {
		sum := set.digest()
		if changed && sum == s.loaded && !refused {
			s.log.Debug("watched files rewritten as they were: not reloading", "file", s.opts.WatchFile)
			if w != nil {
				// A folder made on the way to a skipped link's target is
				// watched from now on; what was written in it before
				// raised no event: look for it.
				set, moved = s.renewWatches(w, set)
				if moved || set.digest() != sum {
					debounce = time.After(100 * time.Millisecond)
				}
			}
			return
		}
		if changed {
			s.log.Info("configuration or the files it names changed: reloading", "file", s.opts.WatchFile)
		}
		start := time.Now()
		refused = s.Reload() != nil
		if !refused {
			s.loaded = sum
		}
		if w != nil {
			set, moved = s.renewWatches(w, set)
			// A write between the reload's reading and the watches'
			// renewal raised no event: look for one, and reload again.
			if moved || set.changedSince(start.Add(-watchSlack)) {
				debounce = time.After(100 * time.Millisecond)
			}
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.opts.Reloads:
			s.log.Info("reload requested: reloading the configuration")
			reload(false)
		case ev := <-events:
			if ev.Op&(fsnotify.Write|fsnotify.Create|fsnotify.Rename|fsnotify.Remove) != 0 && set.concerns(ev.Name) {
				debounce = time.After(100 * time.Millisecond)
			}
		case err := <-errs:
			s.log.Warn("configuration watch", "err", err)
		case <-debounce:
			debounce = nil
			reload(true)
		}
	}
}

// watchSet is what the watcher looks at: the directories it watches, and
// the paths whose events concern the configuration.
type watchSet struct {
	dirs []string
	// files are the configuration file and the Envoy rules files; folders
	// the Envoy rules directories, which count themselves (a folder
	// replaced or swapped), and tree those and every folder below them
	// that envoy.RuleFiles reads, in which any name counts but those
	// starting with a single "." (a ".." entry is a Kubernetes volume's
	// swapped link).
	files, folders, tree []string
	// linkedNames are the files of the set by directory (a volume may
	// mount any of them through links): their names, and where their
	// links point. An event on one of them, or on a name starting with
	// ".." beside them (a Kubernetes volume's swapped ..data), counts.
	linkedNames map[string][]string
	// linkedFiles are those files, whose modification times changedSince
	// reads.
	linkedFiles []string
	// awaited are the names, by folder, whose events may bring or change
	// the target of a link in the rules folders, to nothing (which
	// envoy.RuleFiles skips) or to a rules file (see awaitTargets);
	// unwatchedLinks counts those links past its bound.
	awaited        map[string][]string
	unwatchedLinks int
}

// concerns reports whether an event on path may change the configuration.
func (ws watchSet) concerns(path string) bool {
	path = filepath.Clean(path)
	if slices.Contains(ws.files, path) || slices.Contains(ws.folders, path) {
		return true
	}
	base := filepath.Base(path)
	if names, ok := ws.linkedNames[filepath.Dir(path)]; ok {
		if slices.Contains(names, base) || strings.HasPrefix(base, "..") {
			return true
		}
	}
	if slices.Contains(ws.awaited[filepath.Dir(path)], base) {
		return true
	}
	return (!strings.HasPrefix(base, ".") || strings.HasPrefix(base, "..")) && slices.Contains(ws.tree, filepath.Dir(path))
}

// watchSlack is how far before a reload began a file's modification time
// may fall and still count as a change the reload may have missed: more
// than the coarse clock the kernel stamps files with.
const watchSlack = 50 * time.Millisecond

// changedSince reports whether a file of the set, a rules file or folder
// under one of its folders as envoy.RuleFiles finds them now, a folder
// itself, or a directory the set watches (where a name was made, removed
// or renamed: a linked file's target removed, say) was modified at or
// after t. A directory's change may concern no file of the set: it is
// reported even so.
func (ws watchSet) changedSince(t time.Time) bool {
	recent := func(path string) bool {
		st, err := os.Stat(path)
		return err == nil && !st.ModTime().Before(t)
	}
	files, folders, _ := envoy.RuleFiles(ws.folders...)
	return slices.ContainsFunc(slices.Concat(ws.files, ws.linkedFiles, ws.folders, files, folders, ws.dirs), recent)
}

// digest returns the SHA-256 of the content of every path whose change
// counts: the files, the linked files, and the rules files under the
// folders as envoy.RuleFiles finds them now (within its bounds), each
// with its path (a missing one as missing, one that is no regular file,
// such as a pipe, which opening would wait on, as such), and the paths of
// the folders below them and why the walk stopped, if it did. Each file
// is read up to maxWatchedBytes.
func (ws watchSet) digest() [sha256.Size]byte {
	h := sha256.New()
	add := func(path string) {
		fmt.Fprintf(h, "%s\x00", path)
		if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
			fmt.Fprintf(h, "%v\x00", st.Mode().Type())
			return
		}
		f, err := os.Open(path)
		if err != nil {
			h.Write([]byte("missing\x00"))
			return
		}
		defer f.Close()
		n, _ := io.Copy(h, io.LimitReader(f, maxWatchedBytes))
		fmt.Fprintf(h, "\x00%d\x00", n)
	}
	for _, f := range slices.Concat(ws.files, ws.linkedFiles) {
		add(f)
	}
	files, folders, err := envoy.RuleFiles(ws.folders...)
	for _, d := range folders {
		fmt.Fprintf(h, "%s\x00folder\x00", d)
	}
	for _, f := range files {
		add(f)
	}
	if err != nil {
		fmt.Fprintf(h, "%s\x00", err)
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

// maxWatchedBytes bounds what digest reads of one file: more than any file
// the configuration loads.
const maxWatchedBytes = 16 << 20

// watchSetOf returns the watch set of the configuration file file, the
// Envoy rules paths rules and the files linkedFiles (TLS files, the keys
// file).
func watchSetOf(file string, rules, linkedFiles []string) watchSet {
	ws := watchSet{files: []string{filepath.Clean(file)}}
	ws.linkedNames = map[string][]string{}
	for _, f := range linkedFiles {
		if f == "" {
			continue
		}
		f = filepath.Clean(f)
		ws.linkedFiles = append(ws.linkedFiles, f)
	}
	for _, r := range rules {
		r = filepath.Clean(r)
		if st, err := os.Stat(r); err == nil && st.IsDir() {
			ws.folders = append(ws.folders, r)
		} else {
			ws.files = append(ws.files, r)
		}
	}
	// The folders below, within envoy.RuleFiles's bounds: past them the
	// rules do not load, and the folders found before are watched.
	var files []string
	files, ws.tree, _ = envoy.RuleFiles(ws.folders...)
	ws.dirs = append(ws.dirs, ws.tree...)
	// The links in them, to nothing (skipped) and to rules files: where
	// their targets would appear or change, wherever that is.
	skipped, _ := envoy.SkippedLinks(ws.folders...)
	ws.awaited, ws.unwatchedLinks = awaitTargets(slices.Concat(skipped, linksAmong(files)))
	for d := range ws.awaited {
		ws.dirs = append(ws.dirs, d)
	}
	// Every file may be mounted through links, the configuration file
	// itself as a ConfigMap's: its name and where its link points count,
	// and a ".." entry beside either.
	for _, f := range slices.Concat(ws.files, ws.linkedFiles) {
		paths := []string{f}
		if real, err := filepath.EvalSymlinks(f); err == nil && real != f {
			paths = append(paths, real) // where a link points: a file rewritten there
		}
		for _, p := range paths {
			dir := filepath.Dir(p)
			ws.linkedNames[dir] = append(ws.linkedNames[dir], filepath.Base(p))
			ws.dirs = append(ws.dirs, dir)
		}
	}
	for _, f := range ws.files {
		ws.dirs = append(ws.dirs, filepath.Dir(f))
	}
	for _, f := range ws.folders {
		ws.dirs = append(ws.dirs, filepath.Dir(f))
	}
	slices.Sort(ws.dirs)
	ws.dirs = slices.Compact(ws.dirs)
	return ws
}

// watchSet returns the watch set of the configuration in force.
func (s *Server) watchSet() watchSet {
	cfg := s.Config()
	var rules []string
	if cfg.Envoy.Enabled {
		rules = cfg.Envoy.Rules
	}
	return watchSetOf(s.opts.WatchFile, rules, []string{cfg.TLS.CertFile, cfg.TLS.KeyFile,
		cfg.Admin.TLS.CertFile, cfg.Admin.TLS.KeyFile, cfg.Admin.TLS.ClientCAFile,
		cfg.UpstreamTLS.CAFile, cfg.UpstreamTLS.CertFile, cfg.UpstreamTLS.KeyFile, cfg.KeysFile})
}

// configDigest returns the first 12 hex digits of the SHA-256 of what cfg
// was read from — its file, its keys file and its Envoy rules, as they are
// on disk now — or "" for a configuration not read from a file.
func configDigest(cfg *config.Config) string {
	if cfg.File == "" {
		return ""
	}
	var rules, linked []string
	if cfg.Envoy.Enabled {
		rules = cfg.Envoy.Rules
	}
	if cfg.KeysFile != "" {
		linked = append(linked, cfg.KeysFile)
	}
	sum := watchSetOf(cfg.File, rules, linked).digest()
	return hex.EncodeToString(sum[:6])
}

// renewWatches points w at the directories of the configuration in force
// (dropping old's, and adding each again, so that a watch follows a
// directory swapped through a link) and returns the new set; changed
// reports a change w may have missed meanwhile (see renewWatches).
func (s *Server) renewWatches(w *fsnotify.Watcher, old watchSet) (ws watchSet, changed bool) {
	return renewWatches(w, old, s.watchSet, s.log)
}

// renewWatches points w at the directories of the set current returns,
// dropping old's, and returns that set. A folder made, removed or swapped
// after current read the files and before w watched its parent raised no
// event: current is read again once the watches are in place, and they are
// renewed until it returns the set they watch, at most maxRenewals times.
// changed reports that the set had to be read again (the files changed
// while the watches were renewed, as a folder made on the way to a link's
// target, and what was written in it then raised no event) or never
// settled: what the files hold is to be compared with what was loaded, and
// the watches renewed again.
func renewWatches(w *fsnotify.Watcher, old watchSet, current func() watchSet, log *slog.Logger) (ws watchSet, changed bool) {
	ws = current()
	for i := range maxRenewals {
		for _, d := range old.dirs {
			w.Remove(d) // an error means it is gone already
		}
		for _, d := range ws.dirs {
			if err := w.Add(d); err != nil {
				log.Warn("cannot watch a directory of the configuration; reload with SIGHUP", "dir", d, "err", err)
			}
		}
		if ws.unwatchedLinks > 0 && ws.unwatchedLinks != old.unwatchedLinks {
			log.Warn("envoy rules: too many links to watch the targets of; reload with SIGHUP when one appears or changes",
				"links", ws.unwatchedLinks, "folders_watched", maxAwaitedDirs)
		}
		now := current()
		if now.equal(ws) || i == maxRenewals-1 {
			return ws, i > 0 || !now.equal(ws)
		}
		old, ws = ws, now
	}
	return ws, true // not reached
}

// maxRenewals bounds the renewals of the watches in one call of
// renewWatches while the files keep changing under it.
const maxRenewals = 4

// equal reports whether ws and o watch the same directories for the same
// names.
func (ws watchSet) equal(o watchSet) bool {
	return slices.Equal(ws.dirs, o.dirs) && slices.Equal(ws.files, o.files) &&
		slices.Equal(ws.folders, o.folders) && slices.Equal(ws.tree, o.tree) &&
		slices.Equal(ws.linkedFiles, o.linkedFiles) && ws.unwatchedLinks == o.unwatchedLinks &&
		maps.EqualFunc(ws.linkedNames, o.linkedNames, slices.Equal) &&
		maps.EqualFunc(ws.awaited, o.awaited, slices.Equal)
}
