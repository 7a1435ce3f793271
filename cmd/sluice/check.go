package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/server"
)

// runCheck validates a configuration file and prints its plans × limits.
func runCheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	online := fs.Bool("online", false, "also fetch each identity.jwt issuer's keys (jwks_url, discover) and connect to a Redis store, as sluice serve would")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: sluice check [-online] FILE\n\nValidates FILE and prints its plans and limits; with -online, fetches its identity providers' keys and connects to its Redis store too.")
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := flagAfterArguments("check", fs.Args()); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return usageErrorf("want one configuration file")
	}
	cfg, err := config.Load(fs.Arg(0))
	if err != nil {
		printConfigErrors(stderr, err)
		return fmt.Errorf("%s is not valid", fs.Arg(0))
	}
	// What the server reads and builds beyond the file itself: TLS
	// certificates, Envoy's rules, the options derived.
	if err := server.Check(cfg); err != nil {
		fmt.Fprintln(stderr, err)
		return fmt.Errorf("%s is not valid", fs.Arg(0))
	}
	printPlans(stdout, cfg)
	fmt.Fprintln(stdout)
	printRules(stdout, cfg)
	printCounts(stdout, cfg)
	printSlots(stdout, cfg)
	printAccess(stdout, cfg)
	fmt.Fprintln(stdout)
	printStore(stdout, cfg)
	printIdentity(stdout, cfg)
	printUpstream(stdout, cfg)
	printExempt(stdout, cfg)
	printPenalty(stdout, cfg)
	printDegradation(stdout, cfg)
	printResponse(stdout, cfg)
	printLog(stdout, cfg)
	printNotify(stdout, cfg)
	printSettle(stdout, cfg)
	if err := printEnvoy(stdout, cfg); err != nil {
		return err
	}
	if *online {
		if err := checkOnline(ctx, stdout, cfg); err != nil {
			return fmt.Errorf("%s: %w", fs.Arg(0), err)
		}
	}
	keys := count(len(cfg.Keys), "API key")
	if cfg.KeysFile != "" {
		keys += " (with those of " + cfg.KeysFile + ")"
	}
	fmt.Fprintf(stdout, "\n%s is valid: %s, %s, %s, store %s.\n",
		cfg.File, count(len(cfg.Policy.Plans), "plan"), count(len(cfg.Policy.Global), "global limit"), keys, cfg.Store.Type)
	return nil
}

// printConfigErrors prints why a configuration did not load: each
// file:line:col error on a line of its own, or err itself when it is not
// about a place in the file (a file that cannot be read).
func printConfigErrors(w io.Writer, err error) {
	errs := config.Errors(err)
	for _, e := range errs {
		fmt.Fprintln(w, e)
	}
	if len(errs) == 0 {
		fmt.Fprintln(w, err)
	}
}

// printAccess prints the listeners and who may call the admin listener,
// with a warning, as serve logs, for each caller whose token is an example
// that sluice's repository publishes.
func printAccess(w io.Writer, cfg *config.Config) {
	tls := func(t config.TLS) string {
		switch {
		case t.ClientCAFile != "":
			return "mutual TLS"
		case t.Enabled():
			return "TLS"
		}
		return "plain"
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LISTENER\tADDRESS\tTRANSPORT\tSERVES")
	public := tls(cfg.TLS)
	if len(cfg.ProxyProtocol) > 0 {
		var from []string
		for _, p := range cfg.ProxyProtocol {
			from = append(from, p.String())
		}
		public += ", PROXY header from " + strings.Join(from, " ")
	}
	serves := "the limited API"
	for _, p := range []string{cfg.DocsPath, cfg.HealthPath} {
		if p != "" {
			serves += ", " + p
		}
	}
	if p := cfg.Response.StatusPath; p != "" {
		serves += ", " + p + " (a client's standing)"
	}
	fmt.Fprintf(tw, "public\t%s\t%s\t%s\n", cfg.Listen, public, serves)
	fmt.Fprintf(tw, "admin\t%s\t%s\t%s\n", cfg.Admin.Listen, tls(cfg.Admin.TLS), adminEndpoints)
	if cfg.Envoy.Enabled {
		fmt.Fprintf(tw, "envoy\t%s\t%s\tEnvoy's ShouldRateLimit (gRPC)\n", cfg.Envoy.Listen, tls(cfg.Admin.TLS))
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CALLER\tBY\tSCOPES")
	if s := cfg.Admin.LoopbackScopes; s != 0 {
		fmt.Fprintf(tw, "(any loopback peer)\taddress\t%s\n", s)
	}
	for _, c := range cfg.Admin.Callers {
		by := "token (SHA-256)"
		if c.Certificate != "" {
			by = "certificate " + c.Certificate
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Name, by, c.Scopes)
	}
	tw.Flush()
	for _, msg := range server.ExampleTokenWarnings(cfg) {
		fmt.Fprintln(w, "WARNING: "+msg)
	}
}

func printPlans(w io.Writer, cfg *config.Config) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PLAN\tLIMIT\tALGORITHM\tQUANTITY\tWINDOW\tBURST\tNOTES")
	row := func(plan string, l sluice.Limit) {
		var notes []string
		if l.MaxWait() > 0 {
			notes = append(notes, "queue, max wait "+l.MaxWait().String())
		}
		if l.Shadow() {
			notes = append(notes, "shadow")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%d\t%s\n", plan, l.Name(), l.Algorithm(), l.Quantity(),
			httplimit.WindowOf(l), l.Burst(), strings.Join(notes, ", "))
	}
	for _, p := range cfg.Policy.Plans {
		var marks []string
		if p.Name == cfg.Policy.DefaultPlan {
			marks = append(marks, "default")
		}
		if p.Name == cfg.Policy.AnonymousPlan {
			marks = append(marks, "anonymous")
		}
		name := p.Name
		if len(marks) > 0 {
			name += " (" + strings.Join(marks, ", ") + ")"
		}
		for _, l := range p.Limits {
			row(name, l)
		}
	}
	for _, l := range cfg.Policy.Global {
		row("(global)", l)
	}
	tw.Flush()
}

// printExempt says which requests and clients no limit applies to, when
// some are.
func printExempt(w io.Writer, cfg *config.Config) {
	var parts []string
	add := func(what string, items []string) {
		if len(items) > 0 {
			parts = append(parts, what+" "+strings.Join(items, ", "))
		}
	}
	add("routes", cfg.Exempt)
	var addrs []string
	for _, p := range cfg.ExemptAddresses {
		addrs = append(addrs, p.String())
	}
	add("addresses", addrs)
	add("keys", cfg.ExemptKeys)
	add("users", cfg.ExemptUsers)
	add("plans", cfg.ExemptPlans)
	if len(parts) > 0 {
		fmt.Fprintf(w, "EXEMPT  %s\n", strings.Join(parts, "; "))
	}
}

// count writes n things: "1 plan", "2 plans", "0 API keys".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
