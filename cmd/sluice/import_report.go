package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// A pendingReport is import's -report made ready before the configuration
// is written and finished by commit once it is, or dropped by discard: a
// report that cannot be written fails the import before -dir changes.
type pendingReport struct {
	name string
	// tmp is the report written beside name, renamed over it by commit;
	// or, when name is a link or no regular file (/dev/stdout, a pipe),
	// file is name opened, which commit writes text to.
	tmp  string
	file *os.File
	text string
}

// preparePendingReport makes the report text of name ready to commit.
func preparePendingReport(name, text string) (*pendingReport, error) {
	if st, err := os.Lstat(name); err == nil && !st.Mode().IsRegular() {
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			return nil, fmt.Errorf("-report %s: %w", name, err)
		}
		return &pendingReport{name: name, file: f, text: text}, nil
	}
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*")
	if err != nil {
		return nil, fmt.Errorf("-report %s: %w", name, err)
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644) // CreateTemp makes it 0600; a report is no secret
	}
	if err != nil {
		os.Remove(f.Name())
		return nil, fmt.Errorf("-report %s: %w", name, err)
	}
	return &pendingReport{name: name, tmp: f.Name()}, nil
}

// commit puts the report in place of any file of its name, or writes it
// to the file opened.
func (p *pendingReport) commit() error {
	if p.file != nil {
		_, err := p.file.WriteString(p.text)
		if cerr := p.file.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("-report %s: %w", p.name, err)
		}
		return nil
	}
	if err := os.Rename(p.tmp, p.name); err != nil {
		os.Remove(p.tmp)
		return fmt.Errorf("-report %s: %w", p.name, err)
	}
	return nil
}

// discard drops the report: removes what was written beside its name, or
// closes the file opened.
func (p *pendingReport) discard() {
	if p.file != nil {
		p.file.Close()
		return
	}
	os.Remove(p.tmp)
}
