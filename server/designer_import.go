package server

import (
	"fmt"
	"net/http"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/migrate"
)

// importRequest is POST /designer/import's body: another limiter's
// configuration, as `sluice import -from Format` reads it (without Format,
// guessed as `sluice import` guesses it).
type importRequest struct {
	Format string `json:"format"`
	Source string `json:"source"`
	// Enforce writes the limits enforcing; otherwise in shadow mode.
	Enforce bool `json:"enforce"`
}

// importResponse is the translation: the files `sluice import` writes, by
// name, and the migration report (Markdown).
type importResponse struct {
	Files  map[string]string `json:"files"`
	Report string            `json:"report"`
}

// handleDesignerImport translates another limiter's configuration (POST
// /designer/import) as `sluice import` does: 200 with the files and the
// report; 400 for a source it cannot read or a request that is not one;
// 413 for a body above designerMaxBody; 503 with Retry-After when as many
// imports as the designer runs simulations at once (one per core) are
// being translated (imports do not wait for simulations, nor these for
// them). The files are checked, in memory, as `sluice check` and the
// Envoy service load them, but opening none of the files the
// configuration names (a jwks_file, a keys file, a TLS certificate: paths
// of the host the source came from), so that the answer never depends on
// what this server's disk holds; one that does not load is a 500 (a fault
// of the translation, never of the source).
func (s *Server) handleDesignerImport(w http.ResponseWriter, r *http.Request) {
	s.designer.handleImport(w, r)
}

// handleImport is handleDesignerImport within d's bounds.
func (d *designer) handleImport(w http.ResponseWriter, r *http.Request) {
	var req importRequest
	if !decodeDesignerBody(w, r, &req, "an import") {
		return
	}
	select {
	case d.imports <- struct{}{}:
		defer func() { <-d.imports }()
	default:
		w.Header().Set("Retry-After", "1")
		writeDesignerProblem(w, designerProblem{problem: problem{Type: httplimit.ProblemReducedCapacity,
			Title: "Service Unavailable", Status: http.StatusServiceUnavailable,
			Detail: fmt.Sprintf("The designer is translating %d imports, the most it translates at once; retry in a second.", d.limits.concurrency)}})
		return
	}
	if req.Format == "" {
		format, ok := migrate.Detect(req.Source)
		if !ok {
			detail := "The format is not clear from the file: choose it."
			if format != "" {
				detail = "The file could be " + format + ": choose its format."
			}
			writeJSONProblem(w, http.StatusBadRequest, "Bad Request", detail)
			return
		}
		req.Format = format
	}
	tr, err := migrate.Import(req.Format, req.Source, req.Format+" source")
	if err != nil {
		writeJSONProblem(w, http.StatusBadRequest, "Bad Request", err.Error())
		return
	}
	if tr.EnvoyRules != "" {
		// The source's envoyproxy/ratelimit rules are served as they are
		// (with shadow_mode added): rules the Envoy service would not load
		// are the source's fault.
		if _, err := envoy.LoadRules(tr.Source, []byte(tr.EnvoyRulesText)); err != nil {
			writeJSONProblem(w, http.StatusBadRequest, "Bad Request", err.Error())
			return
		}
	}
	files, err := tr.Files(req.Enforce)
	if err != nil {
		writeJSONProblem(w, http.StatusBadRequest, "Bad Request", err.Error())
		return
	}
	if err := loadImported(files); err != nil {
		writeJSONProblem(w, http.StatusInternalServerError, "Internal Server Error",
			"the imported configuration does not load (please report this): "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, importResponse{Files: files, Report: tr.Report()})
}

// loadImported loads files as `sluice check` and the Envoy service would,
// from memory, without opening a file the configuration names (see
// config.CheckWithoutFiles): nothing on disk is read or written.
func loadImported(files map[string]string) error {
	if err := config.CheckWithoutFiles(migrate.ConfigFile, []byte(files[migrate.ConfigFile])); err != nil {
		return err
	}
	if rules, ok := files[migrate.EnvoyRulesFile]; ok {
		if _, err := envoy.LoadRules(migrate.EnvoyRulesFile, []byte(rules)); err != nil {
			return err
		}
	}
	return nil
}
