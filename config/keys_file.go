package config

import (
	"crypto/sha256"
	"errors"
	"io"
	"path/filepath"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/internal/yamlcheck"
)

// maxKeysFileBytes bounds a keys file as the configuration is bounded:
// about 38,000 keys of one line each, whose YAML tree takes about 35 times
// the file's size while it is read. Past that many clients, a plan header
// set by the authentication layer (identity.plan_header) is the way to
// give each its plan.
const maxKeysFileBytes = maxFileSize

// keysFile reads the API keys of the file at path, a YAML list of entries
// as keys: holds them, n being where the configuration names it. Problems
// are reported at their line in that file.
func (d *decoder) keysFile(n *yaml.Node, path string) []rawKey {
	if d.unread {
		return nil
	}
	data, err := readBounded(path, maxKeysFileBytes)
	if err != nil {
		d.Errorf(n, "keys_file", "%v", err)
		return nil
	}
	d.read[filepath.Clean(path)] = sha256.Sum256(data)
	doc, err := yamlcheck.Parse(path, data)
	if errors.Is(err, io.EOF) {
		return nil // an empty file: no keys
	}
	if err != nil {
		d.Add(err)
		return nil
	}
	kd := &decoder{Decoder: &yamlcheck.Decoder{File: path}, leases: d.leases, leaseAuto: d.leaseAuto, read: d.read}
	if kd.unexpanded(doc, ""); len(kd.Errs) > 0 {
		d.Merge(kd.Decoder)
		return nil
	}
	keys := kd.keys(doc, "")
	d.Merge(kd.Decoder)
	for i := range keys {
		keys[i].file = path
	}
	return keys
}

// errorfIn is Errorf for a node of file, the configuration's own when "".
func (d *decoder) errorfIn(file string, n *yaml.Node, path, format string, args ...any) {
	before := len(d.Errs)
	d.Errorf(n, path, format, args...)
	if file == "" || len(d.Errs) == before {
		return
	}
	if e, ok := d.Errs[len(d.Errs)-1].(*yamlcheck.Error); ok {
		e.File = file
	}
}
