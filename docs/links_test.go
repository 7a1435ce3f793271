package docs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// mdLink matches an inline Markdown link or image: its target, up to a
// space (a title) or the closing parenthesis.
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// mdHeading matches an ATX heading: its text.
var mdHeading = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)

// mdInline matches what a heading's anchor keeps of a link or an image:
// its text.
var mdInline = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)

// anchorOf is the anchor GitHub gives a heading's text: lower case, what
// a link names kept as its text, every character but letters, digits,
// spaces, '-' and '_' dropped, spaces turned into '-'.
func anchorOf(heading string) string {
	heading = mdInline.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mdSpan matches an inline code span on one line: a run of backticks, text
// without one, and a run of backticks (their lengths are not compared: a
// span of two backticks around text holding one is matched as two).
var mdSpan = regexp.MustCompile("`+[^`]*`+")

// mdOutsideCode returns the lines of a Markdown file outside its fenced
// code blocks, each with its 1-based number, and its inline code spans
// blanked so that a link shown as code is not taken for one.
func mdOutsideCode(text string) (lines []string, numbers []int) {
	fence := ""
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if fence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")) {
			fence = trimmed[:3]
			continue
		}
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		lines = append(lines, line)
		numbers = append(numbers, i+1)
	}
	for i, line := range lines {
		lines[i] = mdSpan.ReplaceAllStringFunc(line, func(s string) string {
			// A heading keeps the text of its code spans in its anchor.
			if mdHeading.MatchString(line) {
				return strings.Trim(s, "`")
			}
			return strings.Repeat(" ", len(s))
		})
	}
	return lines, numbers
}

// anchorsOf returns the anchors of a Markdown file's headings, numbered
// as GitHub numbers repeated ones (-1, -2, …).
func anchorsOf(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	lines, _ := mdOutsideCode(text)
	for _, line := range lines {
		m := mdHeading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		a := anchorOf(m[1])
		if n := seen[a]; n > 0 {
			anchors[a+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[a] = true
		}
		seen[a]++
	}
	return anchors
}

// Every relative link of README.md and docs/*.md names a file or folder of
// the repository, and every #anchor a heading of the page it points to (the
// anchor GitHub makes of it). Links to other sites are not followed.
func TestDocLinksResolve(t *testing.T) {
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, "../README.md")
	anchors := map[string]map[string]bool{}
	anchorsIn := func(path string) (map[string]bool, bool) {
		if a, ok := anchors[path]; ok {
			return a, true
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, false
		}
		anchors[path] = anchorsOf(string(b))
		return anchors[path], true
	}
	links := 0
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		lines, numbers := mdOutsideCode(string(b))
		for i, line := range lines {
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				links++
				where := filepath.Base(page) + ":" + strconv.Itoa(numbers[i])
				file, anchor, _ := strings.Cut(target, "#")
				path := filepath.Clean(filepath.Join(filepath.Dir(page), file))
				if file == "" {
					path = filepath.Clean(page)
				}
				st, err := os.Stat(path)
				if err != nil {
					t.Errorf("%s: link %q: no such file or folder %s", where, target, path)
					continue
				}
				if anchor == "" || st.IsDir() || !strings.HasSuffix(path, ".md") {
					continue
				}
				if a, ok := anchorsIn(path); !ok || !a[anchor] {
					t.Errorf("%s: link %q: %s has no heading whose anchor is #%s", where, target, path, anchor)
				}
			}
		}
	}
	if links < 50 {
		t.Errorf("found %d relative links, want at least 50: is mdLink still matching the docs?", links)
	}
}

// The anchors are GitHub's: a guard of anchorOf and anchorsOf on headings
// whose anchors GitHub shows.
func TestAnchorsAreGitHubs(t *testing.T) {
	for heading, want := range map[string]string{
		"A client's own standing: `GET response.status_path`":     "a-clients-own-standing-get-responsestatus_path",
		"Many API keys: a keys file":                              "many-api-keys-a-keys-file",
		"Browsers on other origins (`response.cors`)":             "browsers-on-other-origins-responsecors",
		"Redis: TLS, a user, and a password kept out of the file": "redis-tls-a-user-and-a-password-kept-out-of-the-file",
		"See [the API](api.md) — now":                             "see-the-api--now",
	} {
		lines, _ := mdOutsideCode("## " + heading)
		if got := anchorOf(mdHeading.FindStringSubmatch(lines[0])[1]); got != want {
			t.Errorf("anchorOf(%q) = %q, want %q", heading, got, want)
		}
	}
	a := anchorsOf("# Usage\n```\n# not a heading\n```\n## Usage\n### Usage\n")
	for _, want := range []string{"usage", "usage-1", "usage-2"} {
		if !a[want] {
			t.Errorf("anchorsOf: no %q in %v", want, a)
		}
	}
	if a["not-a-heading"] {
		t.Errorf("anchorsOf took a line of a code block for a heading")
	}
}
