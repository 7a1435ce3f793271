package migrate

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// envoyHeaderSettings are envoyproxy/ratelimit's environment settings of
// its response headers, with their defaults, and the keys of sluice's
// envoy section that rename the same headers.
var envoyHeaderSettings = []struct{ env, name, key string }{
	{"LIMIT_LIMIT_HEADER", "RateLimit-Limit", "limit_header"},
	{"LIMIT_REMAINING_HEADER", "RateLimit-Remaining", "remaining_header"},
	{"LIMIT_RESET_HEADER", "RateLimit-Reset", "reset_header"},
}

// envoyHeadersEnabled is the setting without which envoyproxy/ratelimit
// adds no response headers.
const envoyHeadersEnabled = "LIMIT_RESPONSE_HEADERS_ENABLED"

// envoyWorkloadKinds are the Kubernetes kinds whose pods run
// envoyproxy/ratelimit: their containers' env holds its settings.
var envoyWorkloadKinds = map[string]bool{
	"Deployment": true, "StatefulSet": true, "DaemonSet": true, "ReplicaSet": true, "Pod": true,
}

// envoyManifest translates src when it is a Kubernetes manifest of
// envoyproxy/ratelimit: several documents (or a List) among which a
// workload (a Deployment, say) runs it. The rules are those of the one
// ConfigMap of the manifest that holds a rules file; the response headers'
// settings are those of the workload's containers that run
// envoyproxy/ratelimit. ok is false when src holds no such workload, to
// be read as a rules file or a ConfigMap alone.
func envoyManifest(src, source string) (t *Translation, ok bool, err error) {
	var docs []*yaml.Node
	if err := eachDocument(src, source, func(n *yaml.Node) error {
		if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
			n = n.Content[0]
		}
		docs = append(docs, n)
		return nil
	}); err != nil {
		return nil, false, nil // the reading as one file says what is wrong
	}
	var rules, workloads []*yaml.Node
	configMaps := map[string]*yaml.Node{} // name → data
	for _, d := range docs {
		kind := scalar(mapValue(d, "kind"))
		switch {
		case kind == "ConfigMap":
			data := mapValue(d, "data")
			configMaps[scalar(mapValue(mapValue(d, "metadata"), "name"))] = data
			if holdsRules(data) {
				rules = append(rules, d)
			}
		case envoyWorkloadKinds[kind]:
			workloads = append(workloads, d)
		}
	}
	if len(workloads) == 0 {
		return nil, false, nil
	}
	switch len(rules) {
	case 0:
		return nil, true, fmt.Errorf("%s: a manifest without a ConfigMap holding an envoyproxy/ratelimit rules file (a data entry with a domain)", source)
	case 1:
	default:
		return nil, true, fmt.Errorf("%s: the manifest holds %d ConfigMaps of rules files (lines %d and %d); sluice's Envoy service reads one: import each apart", source, len(rules), rules[0].Line, rules[1].Line)
	}
	if t, err = envoyConfigMap(rules[0], source); err != nil {
		return nil, true, err
	}
	if err := t.envoyHeaders(workloads, configMaps, source); err != nil {
		return nil, true, err
	}
	return t, true, nil
}

// holdsRules reports whether a ConfigMap's data holds an
// envoyproxy/ratelimit rules file: an entry with a domain.
func holdsRules(data *yaml.Node) bool {
	if data == nil || data.Kind != yaml.MappingNode {
		return false
	}
	for i := 1; i < len(data.Content); i += 2 {
		var file yaml.Node
		if yaml.Unmarshal([]byte(data.Content[i].Value), &file) == nil && len(file.Content) == 1 && mapValue(file.Content[0], "domain") != nil {
			return true
		}
	}
	return false
}

// envoyHeaders translates the response headers' settings of the
// containers of workloads that run envoyproxy/ratelimit (an image named
// ratelimit, or a LIMIT_ or RUNTIME_ setting), read from their env and
// from the ConfigMaps of the manifest that their envFrom names (env wins,
// as in Kubernetes), into the difference "response headers", which says
// what sluice's envoy section must hold to send the same headers, and
// sets t.EnvoyHeaders to those of its keys that the configuration
// writes. A value
// that no ConfigMap of the manifest holds (a Secret's, say) is reported
// as not read. Containers that disagree, or an enabling setting that is
// no boolean (envoyproxy/ratelimit would not start), are errors.
func (t *Translation) envoyHeaders(workloads []*yaml.Node, configMaps map[string]*yaml.Node, source string) error {
	var found, where string
	var unread []string
	for _, w := range workloads {
		spec := mapValue(w, "spec")
		if tmpl := mapValue(spec, "template"); tmpl != nil {
			spec = mapValue(tmpl, "spec")
		}
		containers := mapValue(spec, "containers")
		if containers == nil || containers.Kind != yaml.SequenceNode {
			continue
		}
		for _, c := range containers.Content {
			env, missing := containerEnv(c, configMaps)
			if !runsRatelimit(c, env) {
				continue
			}
			here := fmt.Sprintf("%s %s, container %s (line %d)", scalar(mapValue(w, "kind")), scalar(mapValue(mapValue(w, "metadata"), "name")), scalar(mapValue(c, "name")), c.Line)
			section, keys, err := envoyHeaderSection(env, missing, here)
			if err != nil {
				return fmt.Errorf("%s: %w", source, err)
			}
			if found != "" && section != found {
				return fmt.Errorf("%s: %s and %s set the response headers apart: import a manifest of one", source, where, here)
			}
			found, where, unread, t.EnvoyHeaders = section, here, missing, keys
		}
	}
	if found == "" {
		return nil
	}
	t.dropDifference("response headers")
	text := fmt.Sprintf("%s %s", where, found)
	if len(unread) > 0 {
		text += fmt.Sprintf(" %s come from outside the file (a Secret, a ConfigMap it does not hold) and were not read: set their keys by hand.", strings.Join(unread, ", "))
	}
	t.differs("response headers", "%s", text)
	return nil
}

// envoyHeaderSection says, for the environment env of an
// envoyproxy/ratelimit container at here, what sluice's envoy section
// must hold to send the headers it sends, and those keys and values (nil
// when unknown); missing are the settings whose values were not read.
func envoyHeaderSection(env map[string]string, missing []string, here string) (string, map[string]string, error) {
	if slices.Contains(missing, envoyHeadersEnabled) {
		return fmt.Sprintf("takes %s from outside the file: if it is true, sluice's envoy section sends envoyproxy/ratelimit's headers with headers: draft-6; otherwise, none with headers: none.", envoyHeadersEnabled), nil, nil
	}
	enabled := false
	if v, ok := env[envoyHeadersEnabled]; ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return "", nil, fmt.Errorf("%s: %s %q is not a boolean (envoyproxy/ratelimit would not start)", here, envoyHeadersEnabled, v)
		}
		enabled = b
	}
	if !enabled {
		return fmt.Sprintf("does not set %s, so envoyproxy/ratelimit adds no response headers; sluice's envoy section sends none with headers: none, which the configuration says.", envoyHeadersEnabled),
			map[string]string{"headers": "none"}, nil
	}
	lines, keys := []string{"headers: draft-6"}, map[string]string{"headers": "draft-6"}
	for _, s := range envoyHeaderSettings {
		if v, ok := env[s.env]; ok && v != s.name {
			lines, keys[s.key] = append(lines, s.key+": "+v), v
		}
	}
	return fmt.Sprintf("sets %s, so envoyproxy/ratelimit adds its three headers to every response; sluice's service sends the same, of the same descriptor, with these lines of the configuration's envoy section: %s.", envoyHeadersEnabled, strings.Join(lines, ", ")), keys, nil
}

// containerEnv returns the environment of container c: its envFrom's
// ConfigMaps that configMaps holds, then its env; missing lists the
// response headers' settings whose value comes from elsewhere: those its
// env takes from a Secret or an absent ConfigMap, and every one its env
// does not set when an envFrom names such a source.
func containerEnv(c *yaml.Node, configMaps map[string]*yaml.Node) (env map[string]string, missing []string) {
	env = map[string]string{}
	unreadFrom := false
	if from := mapValue(c, "envFrom"); from != nil && from.Kind == yaml.SequenceNode {
		for _, f := range from.Content {
			data := configMaps[scalar(mapValue(mapValue(f, "configMapRef"), "name"))]
			if data == nil || data.Kind != yaml.MappingNode {
				unreadFrom = true
				continue
			}
			prefix := scalar(mapValue(f, "prefix"))
			for i := 0; i+1 < len(data.Content); i += 2 {
				env[prefix+data.Content[i].Value] = data.Content[i+1].Value
			}
		}
	}
	if list := mapValue(c, "env"); list != nil && list.Kind == yaml.SequenceNode {
		for _, e := range list.Content {
			name := scalar(mapValue(e, "name"))
			if v := mapValue(e, "value"); v != nil {
				env[name] = v.Value
				continue
			}
			ref := mapValue(mapValue(e, "valueFrom"), "configMapKeyRef")
			if v := mapValue(configMaps[scalar(mapValue(ref, "name"))], scalar(mapValue(ref, "key"))); ref != nil && v != nil {
				env[name] = v.Value
				continue
			}
			if isHeaderSetting(name) {
				missing = append(missing, name)
			}
		}
	}
	if unreadFrom {
		for _, name := range append([]string{envoyHeadersEnabled}, headerSettingNames()...) {
			if _, set := env[name]; !set && !slices.Contains(missing, name) {
				missing = append(missing, name)
			}
		}
	}
	return env, missing
}

// isHeaderSetting reports whether the environment variable name sets
// envoyproxy/ratelimit's response headers.
func isHeaderSetting(name string) bool {
	return name == envoyHeadersEnabled || strings.HasPrefix(name, "LIMIT_") && strings.HasSuffix(name, "_HEADER")
}

// headerSettingNames returns the environment variables that name
// envoyproxy/ratelimit's three response headers.
func headerSettingNames() []string {
	names := make([]string, 0, len(envoyHeaderSettings))
	for _, s := range envoyHeaderSettings {
		names = append(names, s.env)
	}
	return names
}

// runsRatelimit reports whether container c, of environment env, runs
// envoyproxy/ratelimit: its image is named ratelimit, or it has one of
// its LIMIT_ or RUNTIME_ settings.
func runsRatelimit(c *yaml.Node, env map[string]string) bool {
	if strings.Contains(scalar(mapValue(c, "image")), "ratelimit") {
		return true
	}
	for k := range env {
		if strings.HasPrefix(k, "LIMIT_") || strings.HasPrefix(k, "RUNTIME_") {
			return true
		}
	}
	return false
}

// dropDifference removes the differences at where.
func (t *Translation) dropDifference(where string) {
	out := t.Differences[:0]
	for _, d := range t.Differences {
		if d.Where != where {
			out = append(out, d)
		}
	}
	t.Differences = out
}
