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
// changes, or, for any of these files and the configuration file, any
// link on the way to it (of the file, of a folder above it, or a link a
// link leads to: see pathWaits), the file the last one leads to, or a ".."
// entry beside any, so that a renewed certificate is served, a new key
// admitted, an updated ConfigMap and a new release applied without a
// signal (certbot relinks its live files, Kubernetes swaps a mounted
// Secret's or ConfigMap's ..data link, a deploy swaps current ->
// releases/v2). A missing folder on the way (removed, to be made again) is
// awaited in the nearest folder above it that exists. After a refused
// reload, the files the refused configuration names (config.NamedFiles)
// are watched too, until a reload succeeds: a missing one may be its fix.
// Editors and config managers often replace a file rather than write it,
// so the directories holding them are watched, events are filtered by
// name, and the watches are renewed after every reload (following a
// swapped link, and the rules of the new configuration) and after events
// that changed nothing loaded (a folder made on the way to a link's
// target); bursts of events are coalesced, and files rewritten with the
// bytes the configuration in force was read from (config.Config.Read, so
// that a change made after the first load read them, before the watches
// began, reloads) cause no reload (Reloads always does; so do they after a
// refused reload, which they undo). A change that does not load is refused
// and logged by Reload, and the previous configuration and rules keep
// serving.
func (s *Server) watch(ctx context.Context) {
	var (
		w      *fsnotify.Watcher
		events <-chan fsnotify.Event
		errs   <-chan error
		set    watchSet
		moved  bool // the files changed while the watches were renewed
		// awaited are the files the configuration refused last names: the
		// making of one may be its fix.
		awaited namedFiles
	)
	if s.opts.WatchFile != "" {
		var err error
		if w, err = fsnotify.NewWatcher(); err != nil {
			s.log.Warn("cannot watch the configuration file; reload with SIGHUP", "err", err)
		} else {
			defer w.Close()
			events, errs = w.Events, w.Errors
			set, moved = s.renewWatches(w, watchSet{}, awaited)
		}
	}
	var debounce <-chan time.Time
	if w != nil && (moved || set.digest() != s.loaded) {
		// A file changed after the configuration in force was read and
		// before the watches began.
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
				set, moved = s.renewWatches(w, set, awaited)
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
		awaited = namedFiles{}
		if refused {
			awaited = namedFilesIn(s.opts.WatchFile)
		} else {
			s.loaded = sum
		}
		if w != nil {
			set, moved = s.renewWatches(w, set, awaited)
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
	// mount any of them through links): their names, each link on their
	// way and the file the last one leads to (see pathWaits). An event on
	// one of them, or on a name starting with ".." beside them (a
	// Kubernetes volume's swapped ..data), counts.
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
func (ws watchSet) digest() [sha256.Size]byte { return ws.digestAs(nil) }

// digestAs is digest, but for the files of read (config.Config.Read),
// whose content counts as the SHA-256 read holds of them, whatever they
// hold now: the digest of what a configuration was read from.
func (ws watchSet) digestAs(read map[string][sha256.Size]byte) [sha256.Size]byte {
	h := sha256.New()
	add := func(path string) {
		fmt.Fprintf(h, "%s\x00", path)
		if sum, ok := read[path]; ok {
			fmt.Fprintf(h, "%x\x00", sum)
			return
		}
		fmt.Fprintf(h, "%s\x00", fileDigest(path))
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

// fileDigest returns the hex SHA-256 of the file at path, read up to
// maxWatchedBytes, or what it is instead: "missing", or the type of a file
// that is not a regular one (such as a pipe, which opening would wait on).
func fileDigest(path string) string {
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return st.Mode().Type().String()
	}
	f, err := os.Open(path)
	if err != nil {
		return "missing"
	}
	defer f.Close()
	h := sha256.New()
	io.Copy(h, io.LimitReader(f, maxWatchedBytes))
	return hex.EncodeToString(h.Sum(nil))
}

// maxWatchedBytes bounds what digest reads of one file: more than any file
// the configuration loads.
const maxWatchedBytes = 16 << 20

// watchSetOf returns the watch set of the configuration file file, the
// Envoy rules paths rules and the files linkedFiles (TLS files, the keys
// file); a path given twice counts once.
func watchSetOf(file string, rules, linkedFiles []string) watchSet {
	ws := watchSet{files: []string{filepath.Clean(file)}}
	ws.linkedNames = map[string][]string{}
	for _, f := range linkedFiles {
		if f == "" {
			continue
		}
		f = filepath.Clean(f)
		if !slices.Contains(ws.linkedFiles, f) {
			ws.linkedFiles = append(ws.linkedFiles, f)
		}
	}
	for _, r := range rules {
		r = filepath.Clean(r)
		if slices.Contains(ws.files, r) || slices.Contains(ws.folders, r) {
			continue
		}
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
	// itself as a ConfigMap's, and read through folders that are links, as
	// a release swapped in: its name, each link on its way and the file the
	// last one leads to count (see pathWaits: a folder removed, its nearest
	// parent that exists and the name of the first missing one), and a
	// ".." entry beside any.
	for _, f := range slices.Concat(ws.files, ws.linkedFiles) {
		for _, w := range append(pathWaits(f), linkWait{filepath.Dir(f), filepath.Base(f)}) {
			if !slices.Contains(ws.linkedNames[w.dir], w.name) {
				ws.linkedNames[w.dir] = append(ws.linkedNames[w.dir], w.name)
			}
			ws.dirs = append(ws.dirs, w.dir)
		}
	}
	for _, f := range ws.folders {
		ws.dirs = append(ws.dirs, filepath.Dir(f))
	}
	// Only folders that exist can be watched: a missing one is awaited in
	// the nearest parent that exists, and watched once the event of its
	// making has the watches renewed.
	ws.dirs = slices.DeleteFunc(ws.dirs, func(d string) bool {
		st, err := os.Stat(d)
		return err != nil || !st.IsDir()
	})
	slices.Sort(ws.dirs)
	ws.dirs = slices.Compact(ws.dirs)
	return ws
}

// watchSet returns the watch set of the configuration in force, and of
// the files awaited besides (those a refused configuration names).
func (s *Server) watchSet(awaited namedFiles) watchSet {
	named := namedFilesOf(s.Config())
	return watchSetOf(s.opts.WatchFile, slices.Concat(named.rules, awaited.rules), slices.Concat(named.files, awaited.files))
}

// namedFiles are the files a configuration names that the watcher
// watches: its Envoy rules (files and folders) and its other files (TLS
// files, the keys file).
type namedFiles struct{ rules, files []string }

// namedFilesOf returns the files cfg names.
func namedFilesOf(cfg *config.Config) namedFiles {
	var rules []string
	if cfg.Envoy.Enabled {
		rules = cfg.Envoy.Rules
	}
	return namedFiles{rules, []string{cfg.TLS.CertFile, cfg.TLS.KeyFile,
		cfg.Admin.TLS.CertFile, cfg.Admin.TLS.KeyFile, cfg.Admin.TLS.ClientCAFile,
		cfg.UpstreamTLS.CAFile, cfg.UpstreamTLS.CertFile, cfg.UpstreamTLS.KeyFile, cfg.KeysFile}}
}

// namedFilesIn returns the files the configuration file at file names,
// read without validating it (config.NamedFiles), as a configuration that
// was refused is, at most maxAwaitedFiles of them: a missing one may be why
// it was refused, and its making the fix.
func namedFilesIn(file string) namedFiles {
	files, rules := config.NamedFiles(file, maxAwaitedFiles)
	return namedFiles{rules: rules, files: files}
}

// maxAwaitedFiles bounds the files of a refused configuration watched.
const maxAwaitedFiles = 16

// configDigest returns the first 12 hex digits of the SHA-256 of what cfg
// was read from — its file and its keys file as it read them
// (config.Config.Read), its Envoy rules as they are on disk now — or "" for
// a configuration not read from a file.
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
	sum := watchSetOf(cfg.File, rules, linked).digestAs(cfg.Read)
	return hex.EncodeToString(sum[:6])
}

// renewWatches points w at the directories of the configuration in force
// and of the files awaited besides (dropping old's, and adding each again,
// so that a watch follows a directory swapped through a link) and returns
// the new set; changed reports a change w may have missed meanwhile (see
// renewWatches).
func (s *Server) renewWatches(w *fsnotify.Watcher, old watchSet, awaited namedFiles) (ws watchSet, changed bool) {
	return renewWatches(w, old, func() watchSet { return s.watchSet(awaited) }, s.log)
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
