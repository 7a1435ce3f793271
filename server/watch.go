package server

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

// watch reloads the configuration on SIGHUP and, with WatchFile, when the
// file changes. Editors and config managers often replace a file rather than
// write it, so the directory is watched and events are filtered by name;
// bursts of events are coalesced.
func (s *Server) watch(ctx context.Context) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)

	var events <-chan fsnotify.Event
	var errs <-chan error
	if s.opts.WatchFile != "" {
		w, err := fsnotify.NewWatcher()
		if err != nil {
			s.log.Warn("cannot watch the configuration file; reload with SIGHUP", "err", err)
		} else {
			defer w.Close()
			if err := w.Add(filepath.Dir(s.opts.WatchFile)); err != nil {
				s.log.Warn("cannot watch the configuration file; reload with SIGHUP", "err", err)
			}
			events, errs = w.Events, w.Errors
		}
	}
	target := filepath.Clean(s.opts.WatchFile)
	var debounce <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			s.log.Info("SIGHUP: reloading the configuration")
			s.Reload()
		case ev := <-events:
			if filepath.Clean(ev.Name) == target && ev.Op&(fsnotify.Write|fsnotify.Create|fsnotify.Rename) != 0 {
				debounce = time.After(100 * time.Millisecond)
			}
		case err := <-errs:
			s.log.Warn("configuration watch", "err", err)
		case <-debounce:
			debounce = nil
			s.log.Info("configuration file changed: reloading", "file", s.opts.WatchFile)
			s.Reload()
		}
	}
}
