package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// offlineCommands are the commands a documented command line may run
// without a server: the test runs each such line it finds.
var offlineCommands = map[string]bool{"check": true, "simulate": true, "design": true, "import": true, "token": true, "version": true}

// outputFlags are the flags whose value is a file or folder a command
// writes: the test writes them into a folder of its own.
var outputFlags = map[string]bool{"-o": true, "-config": true, "-chart": true, "-dir": true, "-report": true}

// docCommandLine matches a command line of the docs: "sluice COMMAND …"
// or "go run ./cmd/sluice COMMAND …", alone on its line but for a
// comment, in or out of a code block.
var docCommandLine = regexp.MustCompile("^\\s*(?:\\$ )?(?:go run \\./cmd/sluice|sluice) ([a-z]+)((?: [^#`|<>$…]*)?)(?:\\s+#.*)?$")

// Each command line of README.md and docs/*.md that runs offline (check,
// simulate, design, import, token, version) on files the repository holds
// exits as the docs show it (0, or the "exit N" and error line that follow
// it in its code block): a flag renamed, a default or an example file
// gone, is seen here. Lines naming a file the repository lacks (the
// reader's own: FILE, api.yaml, /etc/nginx/nginx.conf) are skipped.
func TestTheDocsCommandLinesRun(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	docs = append(docs, filepath.Join(root, "README.md"))
	t.Chdir(root)
	out := t.TempDir()
	ran := 0
	for _, doc := range docs {
		text, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(text), "\n")
		for i, line := range lines {
			var found [][]string
			for _, m := range docInlineCommand.FindAllStringSubmatch(line, -1) {
				if namesARepositoryFile(m[2]) { // else a command named in the text, not run
					found = append(found, m)
				}
			}
			if m := docCommandLine.FindStringSubmatch(line); m != nil {
				found = [][]string{m}
			}
			for _, m := range found {
				if !offlineCommands[m[1]] {
					continue
				}
				args, ok := docArgs(m[2], out)
				if !ok {
					continue
				}
				where := filepath.Base(doc) + ":" + strconv.Itoa(i+1)
				wantCode, wantErr := docOutcome(lines[i+1:])
				code, stdout, stderr := runSluice(t, append([]string{m[1]}, args...)...)
				ran++
				t.Logf("%s: sluice %s %q: exit %d", where, m[1], args, code)
				if code != wantCode || !strings.Contains(stderr, wantErr) {
					t.Errorf("%s: sluice %s%s: exit %d, want %d and %q on stderr\n%s%s", where, m[1], m[2], code, wantCode, wantErr, stderr, stdout)
				}
			}
		}
	}
	if ran < 10 {
		t.Errorf("ran %d documented command lines, want at least 10: is docCommandLine still matching the docs?", ran)
	}
}

// docOutcome returns the exit status and error the docs show for a
// command line followed by after, the rest of its page: in the same code
// block, an "exit N" line and the "sluice …: error" line before it; else
// 0 and "".
func docOutcome(after []string) (code int, stderr string) {
	for i, line := range after {
		if strings.HasPrefix(line, "```") || strings.HasPrefix(line, "$ ") {
			break
		}
		if n, ok := strings.CutPrefix(line, "exit "); ok {
			code, _ = strconv.Atoi(n)
			if i > 0 && strings.HasPrefix(after[i-1], "sluice ") {
				stderr = after[i-1]
			}
			return code, stderr
		}
	}
	return 0, ""
}

// docInlineCommand matches a command in a code span of the docs' text:
// `sluice COMMAND …` or `go run ./cmd/sluice COMMAND …`.
var docInlineCommand = regexp.MustCompile("`(?:go run \\./cmd/sluice|sluice) ([a-z]+)((?: [^#`|<>$…]*)?)`")

// namesARepositoryFile is whether args, a command's arguments, name a
// file of the repository (the working directory's).
func namesARepositoryFile(args string) bool {
	for _, a := range strings.Fields(args) {
		if st, err := os.Stat(a); err == nil && !st.IsDir() && !filepath.IsAbs(a) {
			return true
		}
	}
	return false
}

// docArgs splits a documented command's arguments, single quotes keeping
// spaces, the value of each output flag put in dir. It returns false when
// an argument names an input file the repository lacks, or a placeholder
// (FILE, an upper-case word).
func docArgs(s, dir string) ([]string, bool) {
	var args []string
	var cur strings.Builder
	quoted, in := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted, in = !quoted, true
		case r == ' ' && !quoted:
			if in {
				args = append(args, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		args = append(args, cur.String())
	}
	for i, a := range args {
		if a == strings.ToUpper(a) && len(a) > 1 && regexp.MustCompile(`^[A-Z]+$`).MatchString(a) {
			return nil, false
		}
		if i > 0 && outputFlags[args[i-1]] {
			args[i] = filepath.Join(dir, filepath.Base(a))
			continue
		}
		if strings.HasPrefix(a, "-") || (i > 0 && strings.HasPrefix(args[i-1], "-") && !isBoolDocFlag(args[i-1])) {
			if i > 0 && (args[i-1] == "-requirements" || args[i-1] == "-trace") {
				if _, err := os.Stat(a); err != nil {
					return nil, false
				}
			}
			continue
		}
		if filepath.IsAbs(a) { // the reader's own file (/etc/nginx/nginx.conf)
			return nil, false
		}
		if strings.Contains(a, "/") || strings.Contains(a, ".") {
			if _, err := os.Stat(a); err != nil {
				return nil, false
			}
		}
	}
	return args, true
}

// isBoolDocFlag is whether flag, in a documented command line, takes no
// value.
func isBoolDocFlag(flag string) bool {
	switch flag {
	case "-online", "-enforce", "-force", "-shadow", "-skip-bad-lines":
		return true
	}
	return false
}
