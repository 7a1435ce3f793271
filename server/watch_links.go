package server

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// maxPathLinks bounds the links followed resolving one path, as the system
// bounds them (Linux's ELOOP after 40): past it, or in a loop of links,
// the path names no file, and the links met are watched.
const maxPathLinks = 40

// pathWaits returns where a change may bring or change the file path
// names: one linkWait per link met resolving it, a component at a time as
// the system does (the links among its folders, and those the file's own
// link leads to, a relative target read from the folder that holds its
// link), each the link's folder, free of links, and name; then the file
// the last link leads to, its folder and name, or, where a folder on the
// way is missing, the nearest folder that exists and the first missing
// name. A relative path is read from the working directory.
func pathWaits(path string) []linkWait {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil
	}
	var out []linkWait
	dir, rest, links := "/", splitPath(abs), 0
	for len(rest) > 0 {
		name := rest[0]
		rest = rest[1:]
		if name == ".." {
			dir = filepath.Dir(dir)
			continue
		}
		next := filepath.Join(dir, name)
		st, err := os.Lstat(next)
		if err != nil {
			return append(out, linkWait{dir, name}) // missing
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			if len(rest) == 0 {
				return append(out, linkWait{dir, name}) // the file
			}
			dir = next
			continue
		}
		out = append(out, linkWait{dir, name})
		target, err := os.Readlink(next)
		if links++; err != nil || links > maxPathLinks {
			return out
		}
		if filepath.IsAbs(target) {
			dir = "/"
		}
		rest = append(splitPath(target), rest...)
	}
	return out
}

// splitPath returns the names of path, without empty ones and ".".
func splitPath(path string) []string {
	var out []string
	for _, name := range strings.Split(path, string(filepath.Separator)) {
		if name != "" && name != "." {
			out = append(out, name)
		}
	}
	return out
}
