package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// A pendingFile is a file a command writes, made ready before the
// command's other files are written and put in place by commit once they
// are, or dropped by discard: a file that cannot be written fails the
// command before anything else changes, and a reader of name never sees
// it half written. flag is the flag that names it, for errors.
type pendingFile struct {
	flag, name string
	// tmp is the file written beside path (name, or the regular file a
	// link named name leads to), renamed over it by commit; or, when name
	// is no regular file (/dev/stdout, a pipe), file is name opened, which
	// commit writes text to.
	tmp, path string
	file      *os.File
	text      string
}

// preparePendingFile makes text ready to commit as the file name, which
// flag names. A link to a regular file is kept: the file it leads to is
// replaced, and nothing of it changes before commit.
func preparePendingFile(flag, name, text string) (*pendingFile, error) {
	mode := os.FileMode(0o644) // os.Create's 0666 less a umask of 022
	path := name
	st, err := os.Lstat(name)
	if err == nil && st.Mode()&os.ModeSymlink != 0 {
		if target, terr := filepath.EvalSymlinks(name); terr == nil {
			if ts, serr := os.Stat(target); serr == nil && ts.Mode().IsRegular() {
				path, st = target, ts
			}
		}
	}
	if err == nil && st.Mode().IsRegular() {
		mode = st.Mode().Perm() // a file replaced keeps its permissions
	}
	if err == nil && !st.Mode().IsRegular() {
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", flag, name, err)
		}
		return &pendingFile{flag: flag, name: name, file: f, text: text}, nil
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", flag, name, err)
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), mode) // CreateTemp makes it 0600
	}
	if err != nil {
		os.Remove(f.Name())
		return nil, fmt.Errorf("%s %s: %w", flag, name, err)
	}
	return &pendingFile{flag: flag, name: name, tmp: f.Name(), path: path}, nil
}

// commit puts the file in place of any of its name, or writes it to the
// file opened.
func (p *pendingFile) commit() error {
	if p.file != nil {
		_, err := p.file.WriteString(p.text)
		if cerr := p.file.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("%s %s: %w", p.flag, p.name, err)
		}
		return nil
	}
	if err := os.Rename(p.tmp, p.path); err != nil {
		os.Remove(p.tmp)
		return fmt.Errorf("%s %s: %w", p.flag, p.name, err)
	}
	return nil
}

// discard drops the file: removes what was written beside its name, or
// closes the file opened.
func (p *pendingFile) discard() {
	if p.file != nil {
		p.file.Close()
		return
	}
	os.Remove(p.tmp)
}

// sameFile reports whether the paths a and b name one file: the same path
// once made absolute and clean, or, when both exist, one file reached by
// two names (a link, a hard link).
func sameFile(a, b string) bool {
	absA, errA := filepath.Abs(a)
	absB, errB := filepath.Abs(b)
	if errA == nil && errB == nil && absA == absB {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}
