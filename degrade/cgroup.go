package degrade

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// cgroupDirs are the directories of the process's cgroup that resources
// reads, each with no path when there is none.
//
// A controller on a cgroup v1 hierarchy is read there (on a v1 host, and on
// a hybrid one, whose v2 hierarchy holds no controller); any other from the
// cgroup v2 directory. Each directory is the mount point of its hierarchy
// (from /proc/self/mountinfo) joined with the cgroup's path below the
// mount's root: a container that mounts its own cgroup as the hierarchy's
// root (Docker's /docker/<id> at /sys/fs/cgroup/memory) is found there.
// Without a mount that holds the cgroup, the hierarchies are looked for
// where they are mounted by convention: v2 at /sys/fs/cgroup (or its
// unified folder), v1 at /sys/fs/cgroup/<controllers>.
type cgroupDirs struct {
	// cpuacct holds v1's cpuacct.usage, cpu v1's cpu.cfs_quota_us and
	// cpu.cfs_period_us, memory v1's memory.limit_in_bytes,
	// memory.usage_in_bytes and memory.stat.
	cpuacct, cpu, memory cgroupDir
	// v2 holds cpu.stat, and cpu.max, memory.max, memory.current and
	// memory.stat for the controllers that are not on v1.
	v2 cgroupDir
}

// cgroupDir is the process's cgroup in one hierarchy: its directory (path,
// "" for none) and the mount point it was found under (top), path or an
// ancestor of it. The cgroups from path up to top are those the process
// can see; in a cgroup namespace, path is top.
type cgroupDir struct {
	path, top string
}

// ancestry returns d's path and each of its parents up to its top, nearest
// first; none when d has no path.
func (d cgroupDir) ancestry() []string {
	if d.path == "" {
		return nil
	}
	below := d.top
	if !strings.HasSuffix(below, string(filepath.Separator)) {
		below += string(filepath.Separator)
	}
	dirs := []string{d.path}
	for p := d.path; p != d.top && strings.HasPrefix(p, below); {
		p = filepath.Dir(p)
		dirs = append(dirs, p)
	}
	return dirs
}

// cgroupLine is a line of /proc/self/cgroup: the controllers of a v1
// hierarchy (none for v2's "0::" line) and the cgroup's path in it.
type cgroupLine struct {
	v2          bool
	controllers []string
	path        string
}

// mount is a cgroup hierarchy's line of /proc/self/mountinfo: which of its
// directories (root) is mounted where (at), of which filesystem type
// ("cgroup" or "cgroup2"), with which super options (a v1 hierarchy's
// controllers among them).
type mount struct {
	root, at, fstype string
	options          []string
}

// findCgroup returns the process's cgroup directories, from proc's
// self/cgroup and self/mountinfo, with sysfs where hierarchies are mounted
// by convention.
func findCgroup(proc, sysfs string) cgroupDirs {
	b, err := os.ReadFile(filepath.Join(proc, "self", "cgroup"))
	if err != nil {
		return cgroupDirs{}
	}
	return cgroupOf(b, proc, sysfs)
}

// cgroupOf returns the cgroup directories of the process whose
// /proc/self/cgroup is b, from proc's self/mountinfo, with sysfs where
// hierarchies are mounted by convention.
func cgroupOf(b []byte, proc, sysfs string) cgroupDirs {
	var lines []cgroupLine
	for _, line := range strings.Split(string(b), "\n") {
		id, rest, ok1 := strings.Cut(line, ":")
		ctrls, path, ok2 := strings.Cut(rest, ":")
		if !ok1 || !ok2 || !strings.HasPrefix(path, "/") {
			continue
		}
		l := cgroupLine{v2: id == "0" && ctrls == "", path: path}
		if ctrls != "" {
			l.controllers = strings.Split(ctrls, ",")
		}
		lines = append(lines, l)
	}
	mounts := readMounts(filepath.Join(proc, "self", "mountinfo"))
	find := func(controller, file string) cgroupDir {
		for _, l := range lines {
			if l.v2 && controller == "" || !l.v2 && slices.Contains(l.controllers, controller) {
				for _, d := range candidates(l, controller, mounts, sysfs) {
					if _, err := os.Stat(filepath.Join(d.path, file)); err == nil {
						return d
					}
				}
			}
		}
		return cgroupDir{}
	}
	return cgroupDirs{
		cpuacct: find("cpuacct", "cpuacct.usage"),
		cpu:     find("cpu", "cpu.cfs_quota_us"),
		memory:  find("memory", "memory.limit_in_bytes"),
		v2:      find("", "cpu.stat"),
	}
}

// candidates lists the directories that may be l's cgroup of controller
// ("" for v2): below each mount of its hierarchy that holds it, then where
// the hierarchy is mounted by convention.
func candidates(l cgroupLine, controller string, mounts []mount, sysfs string) []cgroupDir {
	var dirs []cgroupDir
	for _, m := range mounts {
		if l.v2 && m.fstype != "cgroup2" || !l.v2 && (m.fstype != "cgroup" || !slices.Contains(m.options, controller)) {
			continue
		}
		rel := l.path
		if m.root != "/" {
			rest, ok := strings.CutPrefix(l.path, m.root)
			if !ok || rest != "" && !strings.HasPrefix(rest, "/") {
				continue // the mount shows another part of the hierarchy
			}
			rel = rest
		}
		if rel == "/.." || strings.HasPrefix(rel, "/../") {
			continue // outside the process's cgroup namespace: not below this mount
		}
		at := filepath.Clean(m.at)
		dirs = append(dirs, cgroupDir{path: filepath.Join(at, rel), top: at})
	}
	rel := filepath.Clean("/" + l.path)
	under := func(top string) cgroupDir {
		top = filepath.Clean(top)
		return cgroupDir{path: filepath.Join(top, rel), top: top}
	}
	if l.v2 {
		return append(dirs, under(sysfs), under(filepath.Join(sysfs, "unified")))
	}
	return append(dirs, under(filepath.Join(sysfs, strings.Join(l.controllers, ","))))
}

// readMounts returns the cgroup mounts of a mountinfo file, none when it
// cannot be read. A line is "id parent major:minor root mount-point options
// [optional fields…] - fstype source super-options", its paths with space,
// tab, newline and backslash escaped in octal.
func readMounts(path string) []mount {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var mounts []mount
	for _, line := range strings.Split(string(b), "\n") {
		before, after, ok := strings.Cut(line, " - ")
		f, g := strings.Fields(before), strings.Fields(after)
		if !ok || len(f) < 5 || len(g) < 3 || g[0] != "cgroup" && g[0] != "cgroup2" {
			continue
		}
		mounts = append(mounts, mount{root: unescapeMount(f[3]), at: unescapeMount(f[4]), fstype: g[0], options: strings.Split(g[2], ",")})
	}
	return mounts
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
