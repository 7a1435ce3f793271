package server

import (
	_ "embed" // the pages below
	"html/template"
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

// docsTemplate parses the /docs page's template, once; newDocsPage reports
// its error.
var docsTemplate = sync.OnceValues(func() (*template.Template, error) {
	return template.New("docs.html").Parse(docsHTML)
})
