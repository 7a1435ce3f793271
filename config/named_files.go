package config

import (
	"path/filepath"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/internal/boundedfile"
)

// NamedFiles returns the files the configuration file at path names, read
// without validating it, as a configuration that did not load is: its
// TLS files (the listeners', the admin listener's and upstream_tls's),
// its keys file, and, apart, its Envoy rules (files or folders), relative
// ones read from path's folder, as Load reads them. A field of another
// type names nothing; a file that cannot be read (up to 4 MiB) names none.
// At most max paths are returned, all of them together.
func NamedFiles(path string, max int) (files, rules []string) {
	data, err := boundedfile.Read(path, maxFileSize)
	if err != nil {
		return nil, nil
	}
	type tlsFiles struct {
		CertFile     string `yaml:"cert_file"`
		KeyFile      string `yaml:"key_file"`
		ClientCAFile string `yaml:"client_ca_file"`
		CAFile       string `yaml:"ca_file"`
	}
	var doc struct {
		TLS         tlsFiles               `yaml:"tls"`
		Admin       struct{ TLS tlsFiles } `yaml:"admin"`
		UpstreamTLS tlsFiles               `yaml:"upstream_tls"`
		KeysFile    string                 `yaml:"keys_file"`
		Envoy       struct{ Rules any }    `yaml:"envoy"`
	}
	yaml.Unmarshal(data, &doc) // what decodes: a field of another type stays empty
	add := func(to *[]string, name string) {
		if name == "" || len(files)+len(rules) >= max {
			return
		}
		if !filepath.IsAbs(name) {
			name = filepath.Join(filepath.Dir(path), name)
		}
		*to = append(*to, name)
	}
	for _, t := range []tlsFiles{doc.TLS, doc.Admin.TLS, doc.UpstreamTLS} {
		for _, f := range []string{t.CertFile, t.KeyFile, t.ClientCAFile, t.CAFile} {
			add(&files, f)
		}
	}
	add(&files, doc.KeysFile)
	switch r := doc.Envoy.Rules.(type) {
	case string:
		add(&rules, r)
	case []any:
		for _, e := range r {
			if name, ok := e.(string); ok {
				add(&rules, name)
			}
		}
	}
	return files, rules
}
