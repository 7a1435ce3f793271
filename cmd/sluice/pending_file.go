package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
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
// replaced, and nothing of it changes before commit. A file replaced keeps
// its permissions; a new one gets os.Create's (writeBeside).
func preparePendingFile(flag, name, text string) (*pendingFile, error) {
	path := name
	st, err := os.Lstat(name)
	if err == nil && st.Mode()&os.ModeSymlink != 0 {
		if target, terr := filepath.EvalSymlinks(name); terr == nil {
			if ts, serr := os.Stat(target); serr == nil && ts.Mode().IsRegular() {
				path, st = target, ts
			}
		}
	}
	if err == nil && !st.Mode().IsRegular() {
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", flag, name, err)
		}
		return &pendingFile{flag: flag, name: name, file: f, text: text}, nil
	}
	tmp, err := writeBeside(path, text)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", flag, name, err)
	}
	return &pendingFile{flag: flag, name: name, tmp: tmp, path: path}, nil
}

// writeBeside writes text to a new file beside path, named
// ".<path's base>.<random>", for a rename over path, and returns its name.
// It has the permissions of the regular file at path when there is one (a
// file replaced keeps them), else those a new file gets (os.Create's 0666
// less the umask: 0644 under umask 022, 0600 under 077). It is never
// readable by more than the file it replaces while text is written: it is
// created with those permissions less the umask, and given them whole
// only once written. What cannot be written leaves nothing behind.
func writeBeside(path, text string) (string, error) {
	perm, replaced := besidePerm(path)
	f, err := createBeside(filepath.Dir(path), filepath.Base(path), perm)
	if err != nil {
		return "", err
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && replaced {
		err = os.Chmod(f.Name(), perm)
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// besidePerm returns the permissions of the file written beside path: those
// of the regular file at path (replaced true), else os.Create's 0666, which
// the umask narrows.
func besidePerm(path string) (perm os.FileMode, replaced bool) {
	if st, err := os.Lstat(path); err == nil && st.Mode().IsRegular() {
		return st.Mode().Perm(), true
	}
	return 0o666, false
}

// createBeside creates a file of a name no file has in dir,
// ".<base>.<random>", with permissions perm less the umask, as os.OpenFile
// gives them.
func createBeside(dir, base string, perm os.FileMode) (*os.File, error) {
	for range 10000 {
		name := filepath.Join(dir, "."+base+"."+strconv.FormatUint(uint64(rand.Uint32()), 10))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if !errors.Is(err, os.ErrExist) {
			return f, err
		}
	}
	return nil, fmt.Errorf("%s: no free name for a file beside %s", dir, base)
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

// isInput reports whether name, a file a command writes, is input, the
// regular file it reads (sameFile): written over, the input would be
// gone. Standard input ("-"), a pipe or a device is never one.
func isInput(input, name string) bool {
	if input == "-" {
		return false
	}
	st, err := os.Stat(input)
	return err == nil && st.Mode().IsRegular() && sameFile(input, name)
}
