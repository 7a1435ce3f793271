package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/sluice-dev/sluice/sim"
)

const designUsage = `usage: sluice design [flags]

Turns requirements into a recommended limit and store, justified by
simulating every algorithm on four traffic patterns, and writes a markdown
analysis and a ready sluice configuration file.

Requirements come from a YAML file (-requirements), from flags, or both
(flags win):

  rate: 100/1m          # quantity per window, per key (required); a window of
                        # week, month or year is a calendar quota: 10000/month
  zone: "+09:00"        # a calendar quota's zone (default UTC)
  starts: 15            # a calendar month's first day (a week's: a weekday)
  burst: 20             # most units a client may send at once (0: the quantity)
  precision: strict     # strict | approximate | loose
  keys: 10000           # distinct keys live at once
  instances: 3          # sluice instances enforcing the limit together
  store: auto           # auto | memory | redis

A requirements file with a plans: list describes a whole API — plans with
several limits and their traffic, endpoint costs and classes, the global
capacity, identification, instances and store, internal callers, overload
thresholds — and gets the analysis of the whole API (Context Assessment,
Recommended Approach, Implementation Steps, Trade-offs and Considerations,
Next Steps) with a complete configuration; docs/designer.md shows the format.

examples:
  sluice design -rate 100/1m -precision strict -burst 20
  sluice design -rate 10000/month -zone +09:00 -store redis
  sluice design -requirements needs.yaml -config sluice.yaml -o design.md
  sluice design -requirements api.yaml -shadow -config sluice.yaml

flags:
`

// runDesign is "sluice design".
func runDesign(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("design", designUsage, stderr)
	var (
		flags   sim.Requirements
		reqFile = fs.String("requirements", "", "YAML `file` of requirements (\"-\": standard input)")
		config  = fs.String("config", "", "also write the configuration to this `file`")
		out     = fs.String("o", "", "write the analysis to this `file` instead of standard output (\"-\": standard output)")
		format  = fs.String("format", "markdown", "output: markdown, yaml (the configuration only) or json")
		addrs   = fs.String("redis-addresses", "", "comma-separated Redis `addresses` for the configuration (default localhost:6379)")
		shadow  = fs.Bool("shadow", false, "whole API: write every limit with shadow: true (reported, never refusing)")
	)
	fs.StringVar(&flags.Rate, "rate", "", "the limit per key, `quantity/window`, e.g. 100/1m, or a calendar quota per week, month or year, e.g. 10000/month")
	fs.StringVar(&flags.Zone, "zone", "", "a calendar quota's zone: UTC or a fixed offset such as +09:00 (default UTC)")
	starts := fs.String("starts", "", "a calendar quota's first day: of a month 1 to 28, of a week a weekday (default 1, monday)")
	fs.Int64Var(&flags.Burst, "burst", 0, "most units a client may send at once (0: the whole quantity)")
	fs.StringVar(&flags.Precision, "precision", "", "strict, approximate or loose (default approximate)")
	fs.Int64Var(&flags.Keys, "keys", 0, "distinct keys live at once (default 1000)")
	fs.IntVar(&flags.Instances, "instances", 0, "sluice instances enforcing the limit together (default 1)")
	fs.StringVar(&flags.Store, "store", "", "auto, memory or redis (default auto)")
	fs.StringVar(&flags.RedisMode, "redis-mode", "", "standalone, sentinel or cluster (default: by size)")
	fs.StringVar(&flags.Name, "name", "", "the limit's name (default after the window, e.g. per-minute)")
	fs.Uint64Var(&flags.Seed, "seed", 0, "random seed of the simulations (default 1)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("unexpected argument %q (see sluice design -h)", fs.Arg(0))
	}
	if *format != "markdown" && *format != "yaml" && *format != "json" {
		return usageErrorf("-format %q: use markdown, yaml or json", *format)
	}
	if *out == "-" {
		*out = ""
	}
	if *config == "-" {
		return usageErrorf("-config -: standard output has the analysis; name a file (or print the configuration alone with -format yaml)")
	}
	for _, o := range []struct{ flag, name string }{{"-config", *config}, {"-o", *out}} {
		if o.name != "" && *reqFile != "" && isInput(*reqFile, o.name) {
			return usageErrorf("%s %s and -requirements %s name one file: the requirements would be written over; name another", o.flag, o.name, *reqFile)
		}
	}
	var req sim.Requirements
	if *reqFile != "" {
		f, err := openInput(*reqFile)
		if err != nil {
			return err
		}
		// sim reads at most maxRequirementsBytes, refusing more whole: one
		// byte more lets it tell, and an input that never ends is read no
		// further.
		data, err := io.ReadAll(io.LimitReader(f, maxRequirementsBytes+1))
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", inputName(*reqFile), err)
		}
		if sim.IsAPIRequirements(data) {
			return designAPI(ctx, fs, data, inputName(*reqFile), *shadow, designOutput{config: *config, out: *out, format: *format}, stdout, stderr)
		}
		if req, err = sim.ReadRequirements(bytes.NewReader(data), inputName(*reqFile)); err != nil {
			return err
		}
	}
	if *shadow {
		return usageErrorf("-shadow needs a -requirements file of a whole API (with plans:)")
	}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "rate":
			req.Rate = flags.Rate
		case "zone":
			req.Zone = flags.Zone
		case "starts":
			req.Starts = sim.Starts(*starts)
		case "burst":
			req.Burst = flags.Burst
		case "precision":
			req.Precision = flags.Precision
		case "keys":
			req.Keys = flags.Keys
		case "instances":
			req.Instances = flags.Instances
		case "store":
			req.Store = flags.Store
		case "redis-mode":
			req.RedisMode = flags.RedisMode
		case "name":
			req.Name = flags.Name
		case "seed":
			req.Seed = flags.Seed
		case "redis-addresses":
			req.RedisAddresses = strings.Split(*addrs, ",")
			for i, a := range req.RedisAddresses {
				req.RedisAddresses[i] = strings.TrimSpace(a) // "a:6379, b:6379"
			}
		}
	})
	if req.Rate == "" {
		fs.Usage()
		return usageErrorf("no rate: give -rate 100/1m or a -requirements file with rate:")
	}

	if err := req.Validate(); err != nil && *reqFile == "" {
		return usageError{err} // every requirement came from a flag
	}
	a, err := sim.Design(ctx, req)
	if err != nil {
		return err
	}
	return designOutput{config: *config, out: *out, format: *format}.write(a.Config, a.Markdown, a, stdout, stderr)
}

// maxRequirementsBytes is the most of a -requirements file that
// sim.ReadRequirements and sim.ReadAPIRequirements read: 1 MiB.
const maxRequirementsBytes = 1 << 20

// designOutput is where the design goes: the configuration file, the
// analysis file (standard output when empty) and the analysis's format.
type designOutput struct {
	config, out, format string
}

// write writes the analysis, in o.format, to o.out or standard output,
// and the configuration to o.config. Each file is written beside its name
// and renamed over it (pendingFile), the analysis first and the
// configuration once the analysis is in place: a failure of either leaves
// both files as they were (a rename that fails after the analysis's
// succeeded leaves the new analysis beside the earlier configuration).
func (o designOutput) write(config, markdown string, v any, stdout, stderr io.Writer) error {
	text := markdown
	switch o.format {
	case "yaml":
		text = config
	case "json":
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err != nil {
			return err
		}
		text = b.String()
	}
	if o.config != "" && o.out != "" && sameFile(o.config, o.out) {
		return usageErrorf("-config %s and -o %s name one file: the analysis and the configuration each need their own", o.config, o.out)
	}
	var pending *pendingFile
	if o.config != "" {
		var err error
		if pending, err = preparePendingFile("-config", o.config, config); err != nil {
			return err
		}
	}
	discard := func() {
		if pending != nil {
			pending.discard()
		}
	}
	if o.out == "" {
		if _, err := io.WriteString(stdout, text); err != nil {
			discard()
			return err
		}
	} else {
		analysis, err := preparePendingFile("-o", o.out, text)
		if err == nil {
			err = analysis.commit()
		}
		if err != nil {
			discard()
			return err
		}
	}
	if pending != nil {
		if err := pending.commit(); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "configuration written to %s\n", o.config)
	}
	if o.out != "" {
		fmt.Fprintf(stderr, "analysis written to %s\n", o.out)
	}
	return nil
}

// designAPI is "sluice design -requirements api.yaml" for a whole API.
func designAPI(ctx context.Context, fs *flag.FlagSet, data []byte, name string, shadow bool, o designOutput, stdout, stderr io.Writer) error {
	var bad error
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "requirements", "config", "o", "format", "shadow", "seed":
		default:
			bad = usageErrorf("-%s applies to one limit; %s describes a whole API (set it in the file)", f.Name, name)
		}
	})
	if bad != nil {
		return bad
	}
	req, err := sim.ReadAPIRequirements(bytes.NewReader(data), name)
	if err != nil {
		return err
	}
	req.Shadow = req.Shadow || shadow
	if f := fs.Lookup("seed"); f != nil && f.Value.String() != "0" {
		fmt.Sscan(f.Value.String(), &req.Seed)
	}
	a, err := sim.DesignAPI(ctx, req)
	if err != nil {
		return err
	}
	return o.write(a.Config, a.Markdown, a, stdout, stderr)
}
