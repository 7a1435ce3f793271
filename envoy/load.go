package envoy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/internal/boundedfile"
	"github.com/sluice-dev/sluice/internal/yamlcheck"
	"github.com/sluice-dev/sluice/internal/yamlexpand"
)

// maxFileSize bounds one rules file.
const maxFileSize = 4 << 20

// LoadRules parses envoyproxy/ratelimit configuration in data; name is the
// file name used in errors. data holds one domain per YAML document
// (documents separated by "---"). Every problem found is returned, joined, as
// *Error values located at file:line:col (see Errors).
func LoadRules(name string, data []byte) (*Rules, error) {
	l := newLoader()
	if err := l.load(name, data); err != nil {
		return nil, err
	}
	return l.rules, nil
}

// LoadRuleFiles loads every file at paths into one Rules value: a path
// that is a file is read whatever its name, and a path that is a folder
// contributes every file under it, subfolders included, but for names
// starting with "." (see RuleFiles for the order, the links followed and
// the bounds), as envoyproxy/ratelimit loads its runtime folder. A link to
// nothing in a folder is skipped (Rules.Skipped lists it; a Service given
// the rules logs it). A domain defined twice is an error. Every problem of every file is returned,
// joined.
func LoadRuleFiles(paths ...string) (*Rules, error) {
	w, err := walkRules(paths)
	if err != nil {
		return nil, err
	}
	files := w.files
	if len(files) == 0 {
		return nil, fmt.Errorf("envoy rules: no rules file in %s", strings.Join(paths, ", "))
	}
	l := newLoader()
	var errs []error
	for _, f := range files {
		data, err := readFile(f)
		if err == nil {
			err = l.load(f, data)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	l.rules.skipped = w.skipped
	return l.rules, nil
}

// readFile reads the rules file at path, a regular file (or a link to one)
// of at most maxFileSize bytes: a pipe or a device is an error, not a read
// that waits.
func readFile(path string) ([]byte, error) {
	data, err := boundedfile.Read(path, maxFileSize)
	if err != nil {
		return nil, fmt.Errorf("envoy rules: %w", err)
	}
	return data, nil
}

// loader accumulates domains from several files.
type loader struct {
	rules *Rules
	where map[string]string // domain → file:line that defined it
	// read counts the bytes of the keys and values of the descriptors of
	// the file being loaded (see maxDescriptorText).
	read int64
}

func newLoader() *loader {
	return &loader{rules: &Rules{domains: map[string]*node{}}, where: map[string]string{}}
}

func (l *loader) load(name string, data []byte) error {
	if len(data) > maxFileSize {
		return &Error{File: name, Msg: fmt.Sprintf("larger than %d bytes", maxFileSize)}
	}
	d := &decoder{Decoder: &yamlcheck.Decoder{File: name}}
	l.read = 0
	dec := yaml.NewDecoder(bytes.NewReader(data))
	src := yamlexpand.NewSource(data) // once for all the documents
	docs := 0
	for {
		var root yaml.Node
		err := dec.Decode(&root)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			d.Add(yamlcheck.SyntaxErrorOf(name, data, err))
			break
		}
		// A scalar tagged `!` is a text to yaml.v2, which yaml.v3 forgets.
		yamlexpand.MarkNonSpecific(src, &root)
		doc := &root
		if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
			doc = doc.Content[0]
		}
		// An empty document, e.g. after a trailing "---", is no domain; a
		// mapping tagged !!null is one, as yaml.v2 reads it by its kind.
		if d.NullAt(doc, nil) {
			continue
		}
		docs++
		if doc, ok := d.expandAliases(doc); ok {
			l.domain(d, doc)
		}
	}
	if docs == 0 && len(d.Errs) == 0 {
		d.Errorf(nil, "", "no domain (see examples/envoy/ratelimit-config.yaml)")
	}
	return d.Err()
}

// domain decodes one document: a domain and its descriptors.
func (l *loader) domain(d *decoder, doc *yaml.Node) {
	var (
		domain     string
		domainNode *yaml.Node
		root       = &node{}
	)
	ok := d.MappingAt(doc, nil, map[string]yamlcheck.FieldAt{
		"domain": func(n *yaml.Node, p *yamlcheck.Path) { domain, domainNode = d.str(n, p), n },
		"descriptors": func(n *yaml.Node, p *yamlcheck.Path) {
			d.descriptors(n, p, root, newPlace(&l.read))
		},
	})
	switch {
	case !ok:
	case domainNode == nil:
		d.Errorf(doc, "domain", "missing")
	case domain == "" && domainNode.Kind == yaml.ScalarNode:
		d.Errorf(domainNode, "domain", "must not be empty")
	case domain == "":
	case len(domain) > MaxDomainBytes:
		d.Errorf(domainNode, "domain", "%d bytes, more than %d: no request could name it", len(domain), MaxDomainBytes)
	case l.where[domain] != "":
		d.Errorf(domainNode, "domain", "%q is already defined at %s", domain, l.where[domain])
	default:
		l.where[domain] = fmt.Sprintf("%s:%d", d.File, domainNode.Line)
		if len(d.Errs) == 0 {
			l.rules.domains[domain] = root
		}
	}
}
