package server

import (
	_ "embed" // the pages below
	"html/template"
	"net/http"
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

// writeAdminPage writes page, an HTML page of the admin listener, which no
// other site may frame (clickjacking an operator) or have read as another
// type.
func writeAdminPage(w http.ResponseWriter, page []byte) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "frame-ancestors 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	w.Write(page)
}

// docsTemplate parses the /docs page's template, once; newDocsPage reports
// its error.
var docsTemplate = sync.OnceValues(func() (*template.Template, error) {
	return template.New("docs.html").Parse(docsHTML)
})
