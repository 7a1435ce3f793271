package migrate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/internal/yamlcheck"
	"github.com/sluice-dev/sluice/internal/yamlexpand"
)

// EnvoyRulesFile is the name Files gives an imported envoyproxy/ratelimit
// rules file.
const EnvoyRulesFile = "envoy-rules.yaml"

// envoyUnits are envoyproxy/ratelimit's units and their lengths.
var envoyUnits = map[string]time.Duration{
	"second": time.Second, "minute": time.Minute, "hour": time.Hour, "day": 24 * time.Hour,
	"week": 7 * 24 * time.Hour, "month": 30 * 24 * time.Hour, "year": 365 * 24 * time.Hour,
}

// envoyUnit returns the name and span of the unit s names as
// envoyproxy/ratelimit reads it: the unit whose upper-case name is
// strings.ToUpper(s) (ı is I, ſ is S; the Kelvin sign is no k).
func envoyUnit(s string) (name string, span time.Duration, ok bool) {
	upper := strings.ToUpper(s)
	for name, span := range envoyUnits {
		if strings.ToUpper(name) == upper {
			return name, span, true
		}
	}
	return "", 0, false
}

// maxEnvoyDepth bounds descriptor nesting.
const maxEnvoyDepth = 32

// Envoy translates an envoyproxy/ratelimit configuration file (a domain and
// its descriptors). sluice's Envoy rate limit service reads the file as it
// is, so the translation keeps it whole (Translation.EnvoyRules) and lists
// each rule for the report, reading anchors, aliases and merge keys as the
// service reads them (see envoy_aliases.go); source names the file. The file may be a
// Kubernetes ConfigMap holding the rules file, or a manifest of
// envoyproxy/ratelimit (several documents, or a List) whose ConfigMap holds
// it and whose Deployment (or other workload) sets the response headers
// (LIMIT_RESPONSE_HEADERS_ENABLED, LIMIT_LIMIT_HEADER and its kin), which
// the report translates. A file that configures Envoy's local rate limit
// filter instead is read by EnvoyLocal.
func Envoy(src, source string) (*Translation, error) {
	if isEnvoyLocal(src) {
		return EnvoyLocal(src, source)
	}
	if t, ok, err := envoyManifest(src, source); ok {
		return t, err
	}
	t := &Translation{Format: FormatEnvoy, Source: source, EnvoyRules: EnvoyRulesFile, EnvoyRulesText: src}
	var doc yaml.Node
	dec := yaml.NewDecoder(strings.NewReader(src))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: empty file", source)
		}
		return nil, fmt.Errorf("%s: %s", source, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	// A scalar tagged `!` is a text to yaml.v2, which yaml.v3 forgets.
	text := yamlexpand.NewSource([]byte(src))
	yamlexpand.MarkNonSpecific(text, &doc)
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d: want a mapping with domain and descriptors", source, root.Line)
	}
	if kind := mapValue(root, "kind"); kind != nil && kind.Value == "ConfigMap" && mapValue(root, "domain") == nil {
		return envoyConfigMap(root, source)
	}
	t.EnvoyRulesText = t.envoyFirstDocument(src, text, dec, root.Line)
	// The rules are those of the file's reading with its aliases and merge
	// keys expanded, as sluice's service and envoyproxy/ratelimit read it.
	root, _, err := expandEnvoy(root, source)
	if err != nil {
		return nil, err
	}
	// Its fields are read as the service reads them (see envoyReader).
	r := &envoyReader{dec: yamlcheck.Decoder{File: source}}
	domainNode := mapValue(root, "domain")
	if domainNode == nil {
		return nil, fmt.Errorf("%s:%d: domain is required", source, root.Line)
	}
	domain := r.dec.YAML11Text(domainNode, yamlcheck.PathOf("domain"))
	if err := r.err(); err != nil {
		return nil, err
	}
	if domain == "" {
		return nil, fmt.Errorf("%s:%d: domain is required", source, root.Line)
	}
	descs := mapValue(root, "descriptors")
	if n := countDescriptors(descs, 0); n > MaxPlaces {
		return nil, fmt.Errorf("%s: %w", source, tooManyPlaces(n, "descriptors"))
	}
	if err := t.envoyDescriptors(r, descs, yamlcheck.PathOf("descriptors"), yamlcheck.Shown(domain), 0); err != nil {
		return nil, err
	}
	t.differs("all or nothing", "envoyproxy/ratelimit increments every matching descriptor's counter even when another refuses the request; sluice checks all of a request's descriptors in one atomic call, and a refused request consumes nothing. A client over one limit no longer burns its others.")
	t.same("matching", "sluice's service walks the descriptor tree as envoyproxy/ratelimit does: exact value, then value prefix (\"*\"), then the key without value; unlimited, replaces, shadow_mode and requests_per_unit: 0 behave the same.")
	t.differs("settings outside the file", "envoyproxy/ratelimit's environment settings (LOCAL_CACHE_SIZE_IN_BYTES, NEAR_LIMIT_RATIO, REDIS_PIPELINE_*, the per-second Redis) have no equivalent: sluice's over-limit cache and store settings live in sluice.yaml.")
	t.differs("response headers", "envoyproxy/ratelimit adds RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset only when LIMIT_RESPONSE_HEADERS_ENABLED is set; sluice's service answers with IETF RateLimit headers in response_headers_to_add (envoy.headers: ietf | draft-6 | none; draft-6 sends envoyproxy/ratelimit's three).")
	return t, nil
}

// envoyFirstDocument returns the text of src's first YAML document, whose
// root starts at line first; text is src prepared, and dec has decoded the
// first document. envoyproxy/ratelimit reads a rules file's first document
// and ignores the others without a word, where sluice's Envoy service
// would read each as a domain: the import keeps the first only, in shadow
// and enforced alike, and reports the domains of the others as not
// imported. The document ends at the first line from its root's that
// starts with a document marker (--- or ...), its lines broken and its
// text read as the parser reads them (UTF-16 included); the text returned
// is src's, in its encoding.
func (t *Translation) envoyFirstDocument(src string, text *yamlexpand.Source, dec *yaml.Decoder, first int) string {
	var others []string
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			break // the end, or a document envoyproxy/ratelimit never reads
		}
		if len(doc.Content) == 0 {
			continue
		}
		what := fmt.Sprintf("line %d", doc.Content[0].Line)
		if d := mapValue(doc.Content[0], "domain"); d != nil && d.Kind == yaml.ScalarNode {
			what = fmt.Sprintf("domain %s (line %d)", d.Value, doc.Content[0].Line)
		}
		others = append(others, what)
	}
	end := len(src)
	for n := max(first, 1) + 1; n <= text.Lines(); n++ {
		if line := text.Line(n); documentMarker(line, "---") || documentMarker(line, "...") {
			end = text.Offset(n)
			break
		}
	}
	if len(others) > 0 {
		t.differs("documents", "the file holds %d more YAML documents after the first: %s. envoyproxy/ratelimit reads a rules file's first document only and ignores the others; sluice's Envoy service would read each as a domain of its own, so the imported rules file holds the first document alone, as envoyproxy/ratelimit enforced it: not imported. To limit those domains, give each a rules file of its own.", len(others), strings.Join(others, ", "))
	}
	return src[:end]
}

// documentMarker reports whether line, without its line break, starts
// with the document marker, followed by a blank or nothing.
func documentMarker(line []byte, marker string) bool {
	return bytes.HasPrefix(line, []byte(marker)) && (len(line) == len(marker) || line[len(marker)] == ' ' || line[len(marker)] == '\t')
}

// envoyConfigMap translates the rules file that cm, a Kubernetes ConfigMap
// mounted as envoyproxy/ratelimit's configuration directory, holds: the
// one data entry with a domain. A ConfigMap of several rules files is
// refused, naming them, as sluice's Envoy service reads one.
func envoyConfigMap(cm *yaml.Node, source string) (*Translation, error) {
	var names, texts []string
	if data := mapValue(cm, "data"); data != nil && data.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(data.Content); i += 2 {
			var file yaml.Node
			text := data.Content[i+1].Value
			if yaml.Unmarshal([]byte(text), &file) == nil && len(file.Content) == 1 && mapValue(file.Content[0], "domain") != nil {
				names, texts = append(names, data.Content[i].Value), append(texts, text)
			}
		}
	}
	switch len(names) {
	case 0:
		return nil, fmt.Errorf("%s:%d: a ConfigMap without an envoyproxy/ratelimit rules file (a data entry with a domain)", source, cm.Line)
	case 1:
		return Envoy(texts[0], source+" data "+names[0])
	}
	return nil, fmt.Errorf("%s:%d: the ConfigMap holds %d rules files (%s); sluice's Envoy service reads one: import each apart (kubectl get configmap <name> -o jsonpath='{.data.<file>}' prints one, dots escaped as \\.)", source, cm.Line, len(names), strings.Join(names, ", "))
}

func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// envoyReader reads the fields of an expanded rules file as sluice's
// Envoy service (package envoy) reads them, with the same yamlcheck
// helpers: a text as yaml.v2 reads it into a string field
// (yamlcheck.Decoder.YAML11Text: !!binary is the text its base64 encodes,
// decoded once however many aliases repeat it; a null is refused), a value
// or a name that may be null (YAML11OptionalText: null is none), a list of
// descriptors that may be null (none). The keys and values of the
// descriptors, each counted wherever an alias repeats it, are bounded by
// yamlexpand.MaxDescriptorText, as the service bounds them.
type envoyReader struct {
	dec yamlcheck.Decoder
	// read counts the bytes of the keys and values of the descriptors
	// read so far.
	read int64
}

// err returns the problems found so far, or nil.
func (r *envoyReader) err() error {
	if len(r.dec.Errs) == 0 {
		return nil
	}
	return r.dec.Err()
}

// envoyDescriptors lists the rules of a descriptor list (nil or null:
// none), its aliases and merge keys expanded, at p in the file; where
// names its place in the report, each key and value shown as
// yamlcheck.Shown shows it.
func (t *Translation) envoyDescriptors(r *envoyReader, list *yaml.Node, p *yamlcheck.Path, where string, depth int) error {
	if r.dec.NullAt(list, p) {
		return r.err()
	}
	if depth > maxEnvoyDepth {
		return fmt.Errorf("%s:%d: descriptors nested more than %d deep", r.dec.File, list.Line, maxEnvoyDepth)
	}
	if list.Kind != yaml.SequenceNode {
		return fmt.Errorf("%s:%d: descriptors must be a list", r.dec.File, list.Line)
	}
	for i, d := range list.Content {
		p := p.Index(i)
		keyNode := mapValue(d, "key")
		if keyNode == nil {
			return fmt.Errorf("%s:%d: a descriptor needs a key", r.dec.File, d.Line)
		}
		key := r.dec.YAML11Text(keyNode, p.Key("key"))
		var value string
		if v := mapValue(d, "value"); v != nil {
			value = r.dec.YAML11OptionalText(v, p.Key("value"))
		}
		if err := r.err(); err != nil {
			return err
		}
		if key == "" {
			return fmt.Errorf("%s:%d: a descriptor needs a key", r.dec.File, d.Line)
		}
		if r.read += int64(len(key) + len(value)); r.read > yamlexpand.MaxDescriptorText {
			return fmt.Errorf("%s:%d: the keys and values of the file's descriptors, each counted wherever an alias repeats it, total more than %d bytes by here, the most a rules file may (sluice's Envoy service refuses it; envoyproxy/ratelimit copies each into every descriptor)", r.dec.File, d.Line, yamlexpand.MaxDescriptorText)
		}
		here := where + " " + yamlcheck.Shown(key)
		if value != "" {
			here += "=" + yamlcheck.Shown(value)
		}
		if rl := mapValue(d, "rate_limit"); !yamlcheck.IsNull(rl) {
			if err := t.envoyRule(r, rl, d, p.Key("rate_limit"), here); err != nil {
				return err
			}
		}
		if sub := mapValue(d, "descriptors"); sub != nil {
			if err := t.envoyDescriptors(r, sub, p.Key("descriptors"), here, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// countDescriptors returns how many descriptors list (nil: none) holds at
// every depth down to maxEnvoyDepth, where envoyDescriptors refuses to go.
func countDescriptors(list *yaml.Node, depth int) int {
	if list == nil || list.Kind != yaml.SequenceNode || depth > maxEnvoyDepth {
		return 0
	}
	n := len(list.Content)
	for _, d := range list.Content {
		n += countDescriptors(mapValue(d, "descriptors"), depth+1)
	}
	return n
}

// envoyRule lists one rate_limit, rl, of the descriptor d, both expanded.
// A rule in shadow_mode or quota_mode, which envoyproxy/ratelimit never
// refuses a request by, is listed as shadow.
func (t *Translation) envoyRule(r *envoyReader, rl, d *yaml.Node, p *yamlcheck.Path, where string) error {
	source := r.dec.File
	if envoyTrue(mapValue(rl, "unlimited")) {
		t.same(where, "unlimited: always OK, as before.")
		return nil
	}
	unit, rpu := mapValue(rl, "unit"), mapValue(rl, "requests_per_unit")
	if unit == nil || rpu == nil {
		return fmt.Errorf("%s:%d: rate_limit needs unit and requests_per_unit", source, rl.Line)
	}
	unitText := r.dec.YAML11Text(unit, p.Key("unit"))
	// The count is read as the service reads it: 1_000 is 1000, and 010
	// (8 to envoyproxy/ratelimit's YAML 1.1) is refused.
	q := r.dec.IntAt(rpu, p.Key("requests_per_unit"), 0, math.MaxUint32)
	alg := "fixed-window"
	if a := mapValue(rl, "algorithm"); a != nil {
		alg = r.dec.YAML11Text(a, p.Key("algorithm"))
	}
	name := where
	if n := mapValue(rl, "name"); n != nil {
		if text := r.dec.YAML11OptionalText(n, p.Key("name")); text != "" {
			name = yamlcheck.Shown(text)
		}
	}
	if err := r.err(); err != nil {
		return err
	}
	unitName, w, ok := envoyUnit(unitText)
	if !ok {
		return fmt.Errorf("%s:%d: unit %q: use second, minute, hour, day, week, month or year", source, unit.Line, yamlcheck.Shown(unitText))
	}
	shadow := envoyTrue(mapValue(d, "shadow_mode")) || envoyTrue(mapValue(d, "quota_mode"))
	t.Rules = append(t.Rules, Limit{Name: name, Algorithm: alg, Quantity: q, Window: w, Shadow: shadow,
		Source: fmt.Sprintf("%s: %d per %s", where, q, unitName)})
	switch {
	case q == 0:
		t.same(where, "requests_per_unit: 0 refuses every request that hits it, as before; a peek (hits_addend 0) is OK until one has in the window, as ratelimit answers.")
	case alg == "fixed-window":
		t.same(where, "%d per %s in fixed windows counted from the Unix epoch, as envoyproxy/ratelimit counts them (weeks from a Thursday, 30-day months, 365-day years included).", q, unitName)
	}
	return nil
}

// shadowRules returns the rules text with shadow_mode: true on every
// descriptor that has a rate limit, written in the file, aliased or merged
// (see shadowDescriptors).
func shadowRules(src string) (string, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		return "", fmt.Errorf("envoy rules: %w", err)
	}
	// Written back tagged !!str, a `!`-tagged text stays a text.
	yamlexpand.MarkNonSpecific(yamlexpand.NewSource([]byte(src)), &doc)
	if len(doc.Content) > 0 {
		if err := shadowDescriptors(doc.Content[0]); err != nil {
			return "", err
		}
	}
	var b bytes.Buffer
	b.WriteString("# Every rule is in shadow mode (shadow_mode: true), added by `sluice import`: remove it to enforce.\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return "", fmt.Errorf("envoy rules: %w", err)
	}
	enc.Close()
	return b.String(), nil
}

// shadowDescriptors writes shadow_mode: true in every descriptor of the
// rules document root that has a rate limit once aliases and merge keys
// are expanded (its own, an alias's or a merged one), at the descriptor's
// own level: in the mapping the file writes it as (the anchor's, for an
// alias), after its merge keys, so that no merged shadow_mode: false undoes
// it. Anchors, aliases and merge keys stay as written; a shadow_mode
// written before a merge key moves after it, which reads the same, so that
// a merged mapping that gains shadow_mode cannot make it set twice. A
// descriptor without a rate limit that merges one of the mappings written
// to would take shadow_mode: true from it, which the service refuses: it
// gets the shadow_mode it had written at its own level.
func shadowDescriptors(root *yaml.Node) error {
	expanded, x, err := expandEnvoy(root, "envoy rules")
	if err != nil {
		return err
	}
	moveEnvoyShadows(root, root)
	had := map[*yaml.Node]bool{} // a descriptor as written → its shadow_mode, expanded
	var rules []*yaml.Node
	eachEnvoyDescriptor(expanded, func(d *yaml.Node) {
		own := x.Written(d)
		had[own] = envoyTrue(mapValue(d, "shadow_mode"))
		if hasEnvoyRule(d) {
			rules = append(rules, own)
		}
	})
	for _, own := range rules {
		setEnvoyShadow(root, own, true)
	}
	// A descriptor written to reads its own shadow_mode, whatever it
	// merges: one round restores them all, a second finds none to.
	settled := map[*yaml.Node]bool{}
	for {
		expanded, x, err := expandEnvoy(root, "envoy rules")
		if err != nil {
			return err
		}
		var changed []*yaml.Node
		eachEnvoyDescriptor(expanded, func(d *yaml.Node) {
			if own := x.Written(d); !hasEnvoyRule(d) && envoyTrue(mapValue(d, "shadow_mode")) != had[own] {
				changed = append(changed, own)
			}
		})
		if len(changed) == 0 {
			return nil
		}
		for _, own := range changed {
			if settled[own] {
				return fmt.Errorf("envoy rules:%d: the descriptor's shadow_mode cannot be kept", own.Line)
			}
			settled[own] = true
			setEnvoyShadow(root, own, had[own])
		}
	}
}

// setEnvoyShadow writes shadow_mode: on in the mapping m of the document
// root, after m's merge keys; a shadow_mode written there already is
// changed in place, one written before a merge key is moved after it.
func setEnvoyShadow(root, m *yaml.Node, on bool) {
	value := strconv.FormatBool(on)
	i := envoyShadowAt(m)
	if i < 0 || i < lastMergeKey(m) {
		if i >= 0 {
			unshareEnvoyNode(root, m.Content[i])
			unshareEnvoyNode(root, m.Content[i+1])
			m.Content = slices.Delete(m.Content, i, i+2)
		}
		m.Content = append(m.Content,
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "shadow_mode"},
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: value})
		return
	}
	v := m.Content[i+1]
	unshareEnvoyNode(root, v)
	v.Kind, v.Tag, v.Value, v.Style, v.Alias, v.Content = yaml.ScalarNode, "!!bool", value, 0, nil, nil
}

// moveEnvoyShadows moves every shadow_mode written in a mapping under n,
// of the document root, before a merge key after the mapping's merge
// keys. It reads the same where no merged mapping sets shadow_mode too,
// which the expansion refuses.
func moveEnvoyShadows(root, n *yaml.Node) {
	if n.Kind == yaml.MappingNode {
		if i := envoyShadowAt(n); i >= 0 && i < lastMergeKey(n) {
			k, v := n.Content[i], n.Content[i+1]
			unshareEnvoyNode(root, k)
			unshareEnvoyNode(root, v)
			n.Content = append(slices.Delete(n.Content, i, i+2), k, v)
		}
	}
	for _, c := range n.Content {
		moveEnvoyShadows(root, c)
	}
}

// envoyShadowAt returns the index in m.Content of the key shadow_mode
// written in the mapping m (as an alias, too), or -1.
func envoyShadowAt(m *yaml.Node) int {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := yamlexpand.Resolve(m.Content[i]); k.Kind == yaml.ScalarNode && k.Value == "shadow_mode" && !yamlexpand.IsMergeKey(k) {
			return i
		}
	}
	return -1
}

// lastMergeKey returns the index in m.Content of the mapping m's last
// merge key, or -1.
func lastMergeKey(m *yaml.Node) int {
	last := -1
	for i := 0; i+1 < len(m.Content); i += 2 {
		if yamlexpand.IsMergeKey(m.Content[i]) {
			last = i
		}
	}
	return last
}

// unshareEnvoyNode makes the scalar n of the document root its own: every
// alias of it becomes a copy of it and its anchor is dropped, so that n
// can be changed or moved without changing or leaving behind what the
// aliases stand for.
func unshareEnvoyNode(root, n *yaml.Node) {
	if n.Anchor == "" || n.Kind != yaml.ScalarNode {
		return
	}
	var walk func(p *yaml.Node)
	walk = func(p *yaml.Node) {
		for i, c := range p.Content {
			if c.Kind == yaml.AliasNode && c.Alias == n {
				cp := *n
				cp.Anchor, cp.Line, cp.Column = "", c.Line, c.Column
				p.Content[i] = &cp
				continue
			}
			walk(c)
		}
	}
	walk(root)
	n.Anchor = ""
}
