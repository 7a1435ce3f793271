package server

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// maxLinkHops bounds the links followed from a link to nothing towards the
// path where its target would appear (a link to a link to nothing).
const maxLinkHops = 8

// maxAwaitedDirs bounds the folders watched for the targets of the links
// in the Envoy rules folders, all links together: past it, the targets of
// the other links load on the next reload (SIGHUP, or any other change).
const maxAwaitedDirs = 32

// awaitTargets returns where the targets of links (links in the rules
// folders: to nothing, or to rules files) would appear or change, and the
// links past maxAwaitedDirs left unwatched. Each folder of awaited exists,
// with the names in it whose creation, writing, renaming or removal may
// bring or change a target: for a target that exists, its folder and name;
// for a missing one, the nearest folder above it that exists and the
// target's name or the first missing folder on its way. Where that name is
// itself a link, its target is awaited too, up to maxLinkHops links from
// the first. A relative target is read from the folder that holds its
// link, after that folder's own links, as the system reads it. Once an
// awaited folder is made, the watcher's renewal awaits the name below it.
func awaitTargets(links []string) (awaited map[string][]string, unwatched int) {
	awaited = map[string][]string{}
	for _, link := range links {
		waits := linkWaits(link)
		var added []string
		for _, w := range waits {
			if _, ok := awaited[w.dir]; !ok && !slices.Contains(added, w.dir) {
				added = append(added, w.dir)
			}
		}
		if len(awaited)+len(added) > maxAwaitedDirs {
			unwatched++
			continue
		}
		for _, w := range waits {
			if !slices.Contains(awaited[w.dir], w.name) {
				awaited[w.dir] = append(awaited[w.dir], w.name)
			}
		}
	}
	return awaited, unwatched
}

// linksAmong returns the paths of files that are links.
func linksAmong(files []string) []string {
	var out []string
	for _, f := range files {
		if st, err := os.Lstat(f); err == nil && st.Mode()&fs.ModeSymlink != 0 {
			out = append(out, f)
		}
	}
	return out
}

// linkWait is a name in an existing folder whose events may bring or
// change the target of a link.
type linkWait struct{ dir, name string }

// linkWaits returns where the target of the link at link would appear or
// change, one linkWait per link followed (see awaitTargets).
func linkWaits(link string) []linkWait {
	var out []linkWait
	for range maxLinkHops {
		target, err := os.Readlink(link)
		if err != nil {
			return out
		}
		if !filepath.IsAbs(target) {
			dir := filepath.Dir(link)
			if real, err := filepath.EvalSymlinks(dir); err == nil {
				dir = real
			}
			target = filepath.Join(dir, target)
		}
		dir, name := filepath.Dir(filepath.Clean(target)), filepath.Base(target)
		for {
			if st, err := os.Stat(dir); err == nil && st.IsDir() {
				break
			}
			if filepath.Dir(dir) == dir {
				return out // not even the root: nothing to watch
			}
			dir, name = filepath.Dir(dir), filepath.Base(dir)
		}
		out = append(out, linkWait{dir, name})
		link = filepath.Join(dir, name)
		if st, err := os.Lstat(link); err != nil || st.Mode()&fs.ModeSymlink == 0 {
			return out
		}
	}
	return out
}
