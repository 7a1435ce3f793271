// Command sluice is the rate limiter's one binary:
//
//	sluice serve     run the server (reverse proxy, decision API, admin)
//	sluice check     validate a configuration file and print its plans
//	sluice simulate  replay traffic through every algorithm and compare them
//	sluice design    turn requirements into a recommended limit and config
//	sluice import    translate nginx, Envoy, Envoy Gateway, Kong, Traefik, HAProxy, ingress-nginx or API Gateway limits into a config
//	sluice bench     send load to a running server and report its rate and latency
//	sluice token     make a caller token for the admin listener and its hash
//	sluice keys      on a running server: top, inspect, reset, penalize; explain a token
//	sluice version   print the module version and commit this binary was built from
//	sluice healthcheck  ask a running server whether it is ready (a container's HEALTHCHECK)
//
// Run "sluice help" for the commands this build has.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
)

// A command is one subcommand: it parses its own flags from args and writes
// to stdout/stderr. A non-nil error is printed and exits with status 1; a
// usageError with status 2; flag.ErrHelp (-h), after which the command has
// printed its usage, with status 0.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() map[string]command {
	return map[string]command{
		"serve":       {"run the rate-limiting server", runServe},
		"simulate":    {"replay traffic through every algorithm and compare them", runSimulate},
		"design":      {"turn requirements into a recommended limit, analysis and config", runDesign},
		"import":      {"translate nginx, Envoy, Envoy Gateway, Kong, Traefik, HAProxy, ingress-nginx or API Gateway limits into a sluice config", runImport},
		"check":       {"validate a configuration file and print its plans", runCheck},
		"bench":       {"send load to a running server and report rate, statuses and latency", runBench},
		"token":       {"make a caller token for the admin listener and the hash to configure", runToken},
		"keys":        {"on a running server: list the most refused subjects (top), inspect, reset or penalize one; explain a client's token", runKeys},
		"version":     {"print the module version, commit and Go version of this binary", runVersion},
		"healthcheck": {"ask a running server whether it is ready: exit 0 when its /readyz answers 2xx (a container's HEALTHCHECK)", runHealthcheck},
	}
}

// main runs the command until it ends or a first SIGINT or SIGTERM asks
// it to stop (serve then drains); a second one ends the process at once,
// with status 1.
func main() {
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	ctx, stop := context.WithCancel(context.Background())
	go func() {
		<-signals
		stop()
		s := <-signals
		fmt.Fprintf(os.Stderr, "sluice: %v again: exiting without waiting for what is in flight\n", s)
		os.Exit(1)
	}()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run runs the command args name and returns the exit status: 0 when it
// succeeded and its standard output was written, 1 when it failed or its
// output could not be written (a full disk), 2 for a command line it
// cannot read (no command, an unknown one, a usageError). Every failure is
// one line on stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	out := &outputWriter{w: stdout}
	stdout = out
	cmds := commands()
	if len(args) > 2 && args[0] == "help" {
		fmt.Fprintf(stderr, "sluice help: unexpected argument %q (sluice help COMMAND)\n", args[2])
		return 2
	}
	if len(args) == 2 && args[0] == "help" { // help COMMAND: COMMAND -h
		args = []string{args[1], "-h"}
	}
	if len(args) == 0 { // no command: a command line it cannot read
		usage(stderr, cmds)
		return 2
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout, cmds)
		return out.status(stderr, "sluice")
	}
	if args[0] == "--version" || args[0] == "-version" { // as other programs' --version
		args[0] = "version"
	}
	cmd, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "sluice: unknown command %q\n\n", args[0])
		usage(stderr, cmds)
		return 2
	}
	if err := cmd.run(ctx, args[1:], stdout, stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) { // -h: the command printed its usage, as asked
			return 0
		}
		if ctx.Err() != nil && errors.Is(err, context.Canceled) { // a signal ended it
			err = errors.New("interrupted before it finished")
		}
		fmt.Fprintf(stderr, "sluice %s: %v\n", args[0], err)
		if errors.As(err, new(usageError)) {
			return 2
		}
		return 1
	}
	return out.status(stderr, "sluice "+args[0])
}

// A usageError is a command line a command cannot read: a flag it does not
// have, a value its flag cannot hold, an argument missing or one too many.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

// usageErrorf is a usageError saying format.
func usageErrorf(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// newFlagSet returns the flag set of the command name: it writes to
// stderr, returns its errors rather than exiting, and its Usage prints
// usage and then every flag with its default.
func newFlagSet(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		io.WriteString(stderr, usage)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args with fs: flag.ErrHelp after -h, a usageError
// when fs cannot read them.
func parseFlags(fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		return usageError{err}
	}
	return err
}

// flagAfterArguments returns a usageError naming the first of rest, the
// arguments fs.Parse left, after the first that looks like a flag: the
// flag package reads flags only before the first argument.
func flagAfterArguments(command string, rest []string) error {
	for _, a := range rest[min(1, len(rest)):] {
		if len(a) > 1 && a[0] == '-' {
			name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
			return usageErrorf("flag -%s after %q: flags go first (sluice %s -%s … %s …)", name, rest[0], command, name, rest[0])
		}
	}
	return nil
}

// outputWriter is a command's standard output that keeps the first error
// of a write: once one failed, the output is incomplete.
type outputWriter struct {
	w   io.Writer
	err error
}

func (o *outputWriter) Write(p []byte) (int, error) {
	if o.err != nil {
		return 0, o.err
	}
	n, err := o.w.Write(p)
	o.err = err
	return n, err
}

// status is the exit status of a command that succeeded: 0, or 1 after
// saying on stderr that its output could not be written.
func (o *outputWriter) status(stderr io.Writer, name string) int {
	if o.err != nil {
		fmt.Fprintf(stderr, "%s: writing standard output: %v\n", name, o.err)
		return 1
	}
	return 0
}

func usage(w io.Writer, cmds map[string]command) {
	fmt.Fprintln(w, "usage: sluice <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(cmds))
	width := 0
	for name := range cmds {
		names = append(names, name)
		width = max(width, len(name))
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(w, "  %-*s  %s\n", width, name, cmds[name].summary)
	}
}
