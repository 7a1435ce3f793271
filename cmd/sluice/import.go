package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/migrate"
	"go.yaml.in/yaml/v3"
)

const importUsage = `usage: sluice import [-from FORMAT] [flags] FILE

Translates the rate limits of FILE ("-": standard input) into a sluice
configuration that keeps their behaviour, and writes a report of every place
the semantics differ, with a rollout that starts in shadow mode (every limit
shadow: true: reported, never refusing) and the metrics to watch before
enforcing.

formats (without -from, guessed from what FILE holds, when only one fits):
  nginx     limit_req_zone and limit_req (burst, nodelay, delay)
  envoy     envoyproxy/ratelimit's YAML rules (served as they are), or
            Envoy's local_ratelimit filter in an Envoy or Istio file
  envoy-gateway  Envoy Gateway's BackendTrafficPolicy rate limits (global
            and local), with the HTTPRoutes they target
  kong      the rate-limiting and rate-limiting-advanced plugins in a decK file,
            or in the Kong Ingress Controller's KongPlugin resources
  traefik   the rateLimit and inFlightReq middlewares (file provider or
            Kubernetes)
  haproxy   stick tables of http_req_rate or conn_cur, track-sc, and the
            http-request deny (tarpit, return) or tcp-request reject
            rules that compare them with a number
  ingress-nginx  Kubernetes Ingresses' limit-rps, limit-rpm,
            limit-connections and limit-whitelist annotations
  aws-apigateway  Amazon API Gateway's usage plans (throttle, quota,
            method throttles) as aws apigateway get-usage-plans prints them,
            or the AWS::ApiGateway::UsagePlan resources of a CloudFormation
            template (YAML or JSON)

examples:
  sluice import -from nginx /etc/nginx/nginx.conf -dir migration
  sluice import -from kong kong.yaml -dir migration -report migration.md
  sluice import haproxy.cfg

flags:
`

// runImport is "sluice import".
func runImport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("import", importUsage, stderr)
	var (
		from    = fs.String("from", "", "the `format` of FILE: "+strings.Join(migrate.Formats(), ", ")+" (default: guessed from FILE)")
		dir     = fs.String("dir", ".", "write the configuration (and envoy rules) into this `directory`")
		report  = fs.String("report", "", "write the report to this `file` instead of standard output (\"-\": standard output)")
		enforce = fs.Bool("enforce", false, "write the limits enforcing, without shadow: true")
		force   = fs.Bool("force", false, "replace files in -dir that no earlier sluice import wrote (a sluice.yaml or envoy-rules.yaml of your own)")
	)
	// Flags may come before or after FILE.
	var names []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		names, args = append(names, fs.Arg(0)), fs.Args()[1:]
	}
	if len(names) != 1 {
		fs.Usage()
		return usageErrorf("want one FILE")
	}
	if *from != "" && !slices.Contains(migrate.Formats(), *from) {
		return usageErrorf("-from %q: use %s", *from, strings.Join(migrate.Formats(), ", "))
	}
	if *report != "" && *report != "-" && isInput(names[0], *report) {
		return usageErrorf("-report %s: it is the FILE imported; name another file", *report)
	}
	src, err := readImportFile(ctx, names[0])
	if err != nil {
		return err
	}
	if *from == "" {
		format, ok := migrate.Detect(string(src))
		switch {
		case !ok && format == "":
			return fmt.Errorf("%s: no sign of %s: say which with -from", inputName(names[0]), strings.Join(migrate.Formats(), ", "))
		case !ok:
			return fmt.Errorf("%s: it could be %s: say which with -from", inputName(names[0]), format)
		}
		*from = format
		fmt.Fprintf(stderr, "reading %s as %s (-from says otherwise)\n", inputName(names[0]), format)
	}
	tr, err := migrate.Import(*from, string(src), filepath.Base(inputName(names[0])))
	if err != nil {
		return err
	}
	files, err := tr.Files(*enforce)
	if err != nil {
		return err
	}
	for name := range files {
		if isInput(names[0], filepath.Join(*dir, name)) {
			return usageErrorf("-dir %s: the import writes %s there, which is the FILE imported; name another -dir", *dir, name)
		}
	}
	// An input that ended because a signal ended its producer too (Ctrl-C
	// in kubectl … | sluice import -) may be a part of it: nothing is
	// written.
	if err := ctx.Err(); err != nil {
		return err
	}
	if *report == "" || *report == "-" {
		if err := writeImported(*dir, files, *force, stderr); err != nil {
			return err
		}
		_, err := io.WriteString(stdout, tr.Report())
		return err
	}
	for name := range files {
		if sameFile(*report, filepath.Join(*dir, name)) {
			return usageErrorf("-report %s: the import writes %s there; name another file", *report, name)
		}
	}
	pending, err := preparePendingFile("-report", *report, tr.Report())
	if err != nil {
		return err
	}
	if err := writeImported(*dir, files, *force, stderr); err != nil {
		pending.discard()
		return err
	}
	if err := pending.commit(); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "wrote %s\n", *report)
	return nil
}

// maxImportBytes bounds the FILE import reads: far above any file of
// limits, far below a log or a dump given by mistake.
const maxImportBytes = 16 << 20

// readImportFile reads the file at name, a pipe too (<(kubectl get
// ingress -o yaml)), or standard input for "-"; one of more than
// maxImportBytes is an error read no further. When ctx ends first, the
// read is given up with ctx's error (untilDone).
func readImportFile(ctx context.Context, name string) ([]byte, error) {
	open := func() (io.ReadCloser, error) { return openInput(name) } // opening a named pipe waits for a writer
	if name == "-" {
		// Standard input is taken here, not by the read, which may
		// outlive the call when ctx ends first.
		in, _ := openInput(name)
		open = func() (io.ReadCloser, error) { return in, nil }
	}
	src, err := untilDone(ctx, func() ([]byte, error) {
		f, err := open()
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return io.ReadAll(io.LimitReader(f, maxImportBytes+1))
	})
	if err != nil {
		return nil, err
	}
	if len(src) > maxImportBytes {
		return nil, fmt.Errorf("%s holds more than %d MiB: not a file of limits (import a part of it at a time)", inputName(name), maxImportBytes>>20)
	}
	return src, nil
}

// importedOrder is the order in which writeImported puts the files of a
// translation in place: the configuration, which names the Envoy rules,
// last.
var importedOrder = []string{migrate.EnvoyRulesFile, migrate.ConfigFile}

// writeImported writes files, a translation's files by name, into dir
// (made when missing), after checking that each loads as sluice check and
// the Envoy rate limit service load it, with errors naming dir's path. A
// file that does not load, or cannot be written, is an error that leaves
// dir as it was: no file of this import in it, any file of an earlier one
// untouched, and dir itself gone when this call made it. Unless force, a
// file of files' names already in dir is replaced only when an earlier
// import wrote it (keepOthersFiles). Each file is written as every other
// file a command writes (preparePendingFile): beside its final name and
// renamed over it, so a reader of dir never sees one half written; a link
// to a regular file is kept, the file it leads to replaced; a file
// replaced keeps its permissions, a new one gets os.Create's. A rename
// that fails after the Envoy rules' succeeded leaves the new rules beside
// the earlier configuration.
func writeImported(dir string, files map[string]string, force bool, stderr io.Writer) (err error) {
	cfg := filepath.Join(dir, migrate.ConfigFile)
	if _, err := config.Parse(cfg, []byte(files[migrate.ConfigFile])); err != nil {
		return fmt.Errorf("the imported configuration does not load (please report this unless it names a file of yours): %w", err)
	}
	if rules, ok := files[migrate.EnvoyRulesFile]; ok {
		if _, err := envoy.LoadRules(filepath.Join(dir, migrate.EnvoyRulesFile), []byte(rules)); err != nil {
			return fmt.Errorf("the imported Envoy rules do not load (please report this): %w", err)
		}
	}
	if !force {
		if err := keepOthersFiles(dir, files); err != nil {
			return err
		}
	}
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		defer func() {
			if err != nil {
				os.Remove(dir)
			}
		}()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var pending []*pendingFile // prepared, not yet committed
	defer func() {
		for _, p := range pending {
			p.discard()
		}
	}()
	for _, name := range importedOrder {
		text, ok := files[name]
		if !ok {
			continue
		}
		p, err := preparePendingFile("-dir", filepath.Join(dir, name), text)
		if err != nil {
			return err
		}
		pending = append(pending, p)
	}
	for len(pending) > 0 {
		p := pending[0]
		pending = pending[1:]
		if err := p.commit(); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote %s\n", p.name)
	}
	return nil
}

// importedMark begins the configuration an import writes.
const importedMark = "# sluice configuration imported by `sluice import"

// importedRulesMark begins the Envoy rules an import writes in shadow
// mode (migrate's shadowRules); with -enforce they are the source's as
// they are, with no mark.
const importedRulesMark = "# Every rule is in shadow mode (shadow_mode: true), added by `sluice import`"

// keepOthersFiles returns an error naming the first file of files' names
// that is in dir and that no earlier import wrote. It decides per file:
// the configuration is an import's when it begins with importedMark; the
// Envoy rules are when they begin with importedRulesMark, or when that
// configuration of an import's lists them in envoy.rules. A file an
// operator put beside an earlier import's configuration is the operator's.
func keepOthersFiles(dir string, files map[string]string) error {
	cfgPath := filepath.Join(dir, migrate.ConfigFile)
	importedCfg := beginsWith(cfgPath, importedMark)
	for _, name := range importedOrder {
		if _, ok := files[name]; !ok {
			continue
		}
		path := filepath.Join(dir, name)
		if _, err := os.Lstat(path); err != nil {
			continue
		}
		switch {
		case name == migrate.ConfigFile && importedCfg:
			continue
		case name == migrate.EnvoyRulesFile && (beginsWith(path, importedRulesMark) || importedCfg && listsEnvoyRules(cfgPath, path)):
			continue
		}
		return fmt.Errorf("%s is there and no earlier sluice import wrote it: write elsewhere with -dir, or replace it with -force", path)
	}
	return nil
}

// beginsWith reports whether the regular file at path (or that a link at
// path names) begins with mark; a pipe or device is not read.
func beginsWith(path, mark string) bool {
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, len(mark))
	n, _ := io.ReadFull(f, head)
	return string(head[:n]) == mark
}

// listsEnvoyRules reports whether the configuration at cfgPath lists the
// file rules in its envoy.rules (a path or a list of them, each relative
// to the configuration's folder, as sluice reads them).
func listsEnvoyRules(cfgPath, rules string) bool {
	data, err := os.ReadFile(cfgPath)
	if err != nil {
		return false
	}
	var doc struct {
		Envoy struct {
			Rules yaml.Node `yaml:"rules"`
		} `yaml:"envoy"`
	}
	if yaml.Unmarshal(data, &doc) != nil {
		return false
	}
	var listed []string
	switch n := doc.Envoy.Rules; n.Kind {
	case yaml.ScalarNode:
		listed = []string{n.Value}
	case yaml.SequenceNode:
		for _, e := range n.Content {
			if e.Kind == yaml.ScalarNode {
				listed = append(listed, e.Value)
			}
		}
	}
	want, err := filepath.Abs(rules)
	if err != nil {
		return false
	}
	for _, r := range listed {
		if r == "" {
			continue
		}
		if !filepath.IsAbs(r) {
			r = filepath.Join(filepath.Dir(cfgPath), r)
		}
		if abs, err := filepath.Abs(r); err == nil && abs == want {
			return true
		}
	}
	return false
}
