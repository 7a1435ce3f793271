package server

import (
	"embed"
	"html/template"
)

//go:embed web
var web embed.FS

var (
	docsTemplate  = template.Must(template.ParseFS(web, "web/docs.html"))
	dashboardHTML = must(web.ReadFile("web/dashboard.html"))
	designerHTML  = must(web.ReadFile("web/designer.html"))
)

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err) // the file is embedded at build time: only a build mistake gets here
	}
	return b
}
