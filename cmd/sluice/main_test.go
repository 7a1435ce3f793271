package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// "sluice COMMAND -h" prints the command's usage and exits 0, as asked; a
// flag the command does not have prints its usage and exits non-zero.
func TestEveryCommandAnswersHelpWithUsageAndStatus0(t *testing.T) {
	for name := range commands() {
		t.Run(name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := run(context.Background(), []string{name, "-h"}, &out, &errOut); code != 0 {
				t.Errorf("-h: exit %d, want 0; stderr:\n%s", code, errOut.String())
			}
			if !strings.Contains(strings.ToLower(errOut.String()), "usage") || strings.Contains(errOut.String(), "help requested") {
				t.Errorf("-h: stderr is not the usage alone:\n%s", errOut.String())
			}
			out.Reset()
			errOut.Reset()
			if code := run(context.Background(), []string{name, "-no-such-flag"}, &out, &errOut); code == 0 {
				t.Errorf("-no-such-flag: exit 0; stderr:\n%s", errOut.String())
			}
		})
	}
}

// fullWriter is a standard output that cannot be written: a full disk, a
// closed descriptor.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// A command whose output could not be written has failed, though it did
// its work: "sluice token > token.txt" on a full disk exits non-zero and
// says why, where a status 0 would leave a script holding no token.
func TestAnOutputThatCannotBeWrittenIsAFailure(t *testing.T) {
	file := filepath.Join(t.TempDir(), "sluice.yaml")
	if err := os.WriteFile(file, []byte(opsConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"token"}, {"version"}, {"check", file}, {"help"}} {
		var errOut bytes.Buffer
		code := run(context.Background(), args, fullWriter{}, &errOut)
		if code == 0 || !strings.Contains(errOut.String(), "standard output: no space left on device") {
			t.Errorf("%q: exit %d, stderr %q; want a failure that says the output was not written", args, code, errOut.String())
		}
	}
}

// A command line a command cannot read — a flag it does not have, a value
// a flag cannot hold, an argument too many or missing — exits with status
// 2, as an unknown command does; a command that ran and failed exits with
// 1. Each says why in one line on stderr. (import is another's to hold.)
func TestUsageErrorsExit2AndFailures1(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"no-such-command"}, 2},
		{[]string{"help", "check", "extra"}, 2},
		{[]string{"serve", "-no-such-flag"}, 2},
		{[]string{"serve", "sluice.yaml"}, 2},
		{[]string{"serve", "-gc-heap-floor", "lots"}, 2},
		{[]string{"check"}, 2},
		{[]string{"check", "a.yaml", "b.yaml"}, 2},
		{[]string{"check", "-no-such-flag", "a.yaml"}, 2},
		{[]string{"keys"}, 2},
		{[]string{"keys", "inspect"}, 2},
		{[]string{"keys", "-n", "ten", "top"}, 2},
		{[]string{"token", "extra"}, 2},
		{[]string{"token", "-no-such-flag"}, 2},
		{[]string{"version", "extra"}, 2},
		{[]string{"bench"}, 2},
		{[]string{"bench", "-c", "many", "http://127.0.0.1:1/"}, 2},
		{[]string{"simulate", "extra"}, 2},
		{[]string{"simulate", "-no-such-flag"}, 2},
		{[]string{"design", "extra"}, 2},
		{[]string{"design", "-no-such-flag"}, 2},
		{[]string{"check", filepath.Join(t.TempDir(), "missing.yaml")}, 1},
		{[]string{"keys", "-admin", "http://127.0.0.1:1", "top"}, 1},
	} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), tc.args, &out, &errOut)
		if said := "\n" + errOut.String(); code != tc.want || !strings.Contains(said, "\nsluice") {
			t.Errorf("%q: exit %d, want %d; stderr:\n%s", tc.args, code, tc.want, errOut.String())
		}
	}
}

// "sluice help COMMAND" prints that command's usage, as "sluice COMMAND -h"
// does; "sluice help" the list of commands.
func TestHelpCommandPrintsItsUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"help", "check"}, &out, &errOut); code != 0 || !strings.Contains(out.String()+errOut.String(), "usage: sluice check [-online] FILE") {
		t.Errorf("help check: exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	}
	out.Reset()
	errOut.Reset()
	if code := run(context.Background(), []string{"help", "no-such-command"}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), `unknown command "no-such-command"`) {
		t.Errorf("help no-such-command: exit %d\nstderr:\n%s", code, errOut.String())
	}
}

// A flag written after an argument, where the flag package stops reading,
// is named as such: "sluice check sluice.yaml -online" would otherwise be
// told it gave two files.
func TestFlagsAfterArgumentsAreNamed(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "sluice.yaml", "-online"}, `flag -online after "sluice.yaml": flags go first (sluice check -online … sluice.yaml …)`},
		{[]string{"bench", "http://127.0.0.1:1/", "-d=1s"}, `flag -d after "http://127.0.0.1:1/": flags go first (sluice bench -d … http://127.0.0.1:1/ …)`},
	} {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), tc.args, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("%q: exit %d, stderr:\n%s\nwant 2 and %q", tc.args, code, errOut.String(), tc.want)
		}
	}
}

// A flag's value that its command refuses, or an argument it cannot read,
// is a usage error too: status 2, and the message names the flag.
func TestRefusedFlagValuesExit2NamingTheFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"bench", "-c", "0", "http://127.0.0.1:1/"}, "-c"},
		{[]string{"bench", "-d", "0s", "http://127.0.0.1:1/"}, "-d"},
		{[]string{"bench", "-rate", "-5", "http://127.0.0.1:1/"}, "-rate"},
		{[]string{"bench", "-keys", "0", "http://127.0.0.1:1/"}, "-keys"},
		{[]string{"bench", "-H", "no colon", "http://127.0.0.1:1/"}, "-H"},
		{[]string{"bench", "ftp://127.0.0.1:1/"}, "URL"},
		{[]string{"serve", "-config", "", "-listen", "127.0.0.1:0", "-admin-listen", "127.0.0.1:0"}, "-config"},
		{[]string{"serve", "-listen", "bogus", "-admin-listen", "127.0.0.1:0"}, "-listen"},
		{[]string{"serve", "-listen", "127.0.0.1:0", "-admin-listen", ":99999"}, "-admin-listen"},
		{[]string{"simulate", "-limit", "0/1s"}, "-limit"},
		{[]string{"simulate", "-limit", "80/1m", "-reference", "100 per minute"}, "-reference"},
		{[]string{"token", "-scopes", "everything"}, "-scopes"},
		{[]string{"token", "-scopes", ","}, "-scopes"},
		{[]string{"token", "-name", ""}, "-name"},
		{[]string{"token", "-name", "ops\nWARN forged"}, "-name"},
		{[]string{"keys", "-admin", "127.0.0.1:9090", "top"}, "-admin"},
		{[]string{"keys", "-admin", "http://127.0.0.1:1", "-cert", "c.pem", "top"}, "-cert"},
		{[]string{"keys", "-admin", "http://127.0.0.1:1", "-n", "0", "top"}, "-n"},
		{[]string{"keys", "-admin", "http://127.0.0.1:1", "-n", "513", "top"}, "-n"},
	} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), tc.args, &out, &errOut)
		if code != 2 || !strings.Contains(errOut.String(), tc.flag) {
			t.Errorf("%q: exit %d, want 2 and a message naming %s; stderr:\n%s", tc.args, code, tc.flag, errOut.String())
		}
	}
}

// "sluice" alone names no command: a usage error, its list of commands on
// stderr and status 2, as go alone does, so that a script whose command
// came out empty ("sluice $CMD") fails. Asked for ("sluice help", -h),
// the list is the answer: on stdout, status 0.
func TestNoCommandIsAUsageError(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), nil, &out, &errOut); code != 2 || out.Len() != 0 || !strings.Contains(errOut.String(), "usage: sluice <command>") {
		t.Errorf("sluice: exit %d, want 2 and the usage on stderr\nstdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	}
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}} {
		out.Reset()
		errOut.Reset()
		if code := run(context.Background(), args, &out, &errOut); code != 0 || !strings.Contains(out.String(), "usage: sluice <command>") {
			t.Errorf("%q: exit %d, want 0 and the usage on stdout\nstdout:\n%s\nstderr:\n%s", args, code, out.String(), errOut.String())
		}
	}
}

// A command interrupted (Ctrl-C, SIGTERM: its context canceled) fails
// saying so, in words: not Go's "context canceled".
func TestAnInterruptedCommandSaysSo(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errOut bytes.Buffer
	code := run(ctx, []string{"simulate", "-pattern", "many-keys", "-keys", "10000", "-duration", "20m"}, &out, &errOut)
	if code != 1 || errOut.String() != "sluice simulate: interrupted before it finished\n" {
		t.Errorf("exit %d, want 1 and a line saying it was interrupted; stderr:\n%s", code, errOut.String())
	}
}

// "sluice help" names every subcommand of keys, as keys -h lists them.
func TestHelpNamesEveryKeysSubcommand(t *testing.T) {
	var out bytes.Buffer
	run(context.Background(), []string{"help"}, &out, new(bytes.Buffer))
	_, line, _ := strings.Cut(out.String(), "\n  keys ")
	line, _, _ = strings.Cut(line, "\n")
	for _, sub := range []string{"top", "inspect", "reset", "penalize", "token"} {
		if !strings.Contains(line, sub) {
			t.Errorf("sluice help's keys line does not name %s:\n%s", sub, line)
		}
	}
}

// sluice --version prints what sluice version prints, as other programs'
// --version does: scripts and package checks ask it that way.
func TestVersionFlagIsTheVersionCommand(t *testing.T) {
	var want, errOut bytes.Buffer
	if code := run(context.Background(), []string{"version"}, &want, &errOut); code != 0 {
		t.Fatalf("sluice version: exit %d, %s", code, errOut.String())
	}
	for _, flag := range []string{"--version", "-version"} {
		var out bytes.Buffer
		if code := run(context.Background(), []string{flag}, &out, &errOut); code != 0 || out.String() != want.String() {
			t.Errorf("sluice %s: exit %d, %q (stderr %q); want sluice version's %q", flag, code, out.String(), errOut.String(), want.String())
		}
	}
}
