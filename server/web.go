package server

import (
	"bytes"
	"crypto/sha256"
	_ "embed" // the pages below
	"encoding/base64"
	"html/template"
	"net/http"
	"strings"
	"sync"
)

// The pages are embedded file by file, so that a missing one fails the
// build instead of the server.
var (
	//go:embed web/docs.html
	docsHTML string
	//go:embed web/dashboard.html
	dashboardHTML []byte
	//go:embed web/designer.html
	designerHTML []byte
)

// The pages' Content-Security-Policy, beside the hashes of their own
// scripts (scriptSources): nothing is loaded from elsewhere, the only
// images are data: URLs (the blank icon), and styles may be written in
// the page (the pages' own, and the designer's SVG chart's style
// attributes), since
// injected CSS runs no script. A script that is not the page's own — an
// event handler attribute, a javascript: URL, a script element added by
// any value that reached the page as markup — does not run.
const (
	// adminPagePolicy is the admin listener's pages': they fetch their
	// data from their own origin, and no other site may frame them
	// (clickjacking an operator).
	adminPagePolicy = "default-src 'none'; connect-src 'self'; img-src data:; style-src 'unsafe-inline'; " +
		"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
	// docsPagePolicy is /docs': it fetches nothing, and an API's own
	// portal may frame it (it has nothing to click that changes state).
	docsPagePolicy = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
)

// contentSecurityPolicy returns policy with a script-src that allows the
// scripts written in page (its <script> elements, by SHA-256) and no other.
func contentSecurityPolicy(page []byte, policy string) string {
	src := []string{}
	rest := page
	for {
		_, after, ok := bytes.Cut(rest, []byte("<script>"))
		if !ok {
			break
		}
		script, tail, _ := bytes.Cut(after, []byte("</script>"))
		sum := sha256.Sum256(script)
		src = append(src, "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'")
		rest = tail
	}
	if len(src) == 0 {
		src = append(src, "'none'")
	}
	return policy + "; script-src " + strings.Join(src, " ")
}

// adminPage is an HTML page of the admin listener and its
// Content-Security-Policy.
type adminPage struct {
	body   []byte
	policy string
}

// The admin listener's pages, their policies computed once.
var (
	dashboardPage = sync.OnceValue(func() adminPage {
		return adminPage{dashboardHTML, contentSecurityPolicy(dashboardHTML, adminPagePolicy)}
	})
	designerPage = sync.OnceValue(func() adminPage {
		return adminPage{designerHTML, contentSecurityPolicy(designerHTML, adminPagePolicy)}
	})
)

// writeAdminPage writes page, an HTML page of the admin listener, which
// runs no script but its own, no other site may frame (clickjacking an
// operator) or have read as another type, and whose address is sent to no
// other site.
func writeAdminPage(w http.ResponseWriter, page adminPage) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", page.policy)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	w.Write(page.body)
}

// docsTemplate parses the /docs page's template, once; newDocsPage reports
// its error.
var docsTemplate = sync.OnceValues(func() (*template.Template, error) {
	return template.New("docs.html").Parse(docsHTML)
})
