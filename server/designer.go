package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/sluice-dev/sluice/sim"
)

// Bounds of one simulation run from the web page: a page must stay
// responsive and a visitor must not be able to occupy the server.
const (
	designerMaxBody     = 1 << 20 // a CSV trace up to 1 MiB
	designerMaxArrivals = 200_000
	designerTimeout     = 10 * time.Second
)

// designerResponse is what the page draws: the simulator's result and its
// SVG chart.
type designerResponse struct {
	Result *sim.Result `json:"result"`
	Chart  string      `json:"chart_svg"`
}

// handleDesignerRun runs a simulation (POST /designer/run, a sim.Request
// as JSON) through the real algorithms and returns the table data and the
// chart.
func (s *Server) handleDesignerRun(w http.ResponseWriter, r *http.Request) {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, designerMaxBody))
	dec.DisallowUnknownFields()
	var req sim.Request
	if err := dec.Decode(&req); err != nil {
		status := http.StatusBadRequest
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			status = http.StatusRequestEntityTooLarge
		}
		writeJSONProblem(w, status, http.StatusText(status), fmt.Sprintf("not a simulation request: %v", err))
		return
	}
	req.Chart = "svg"
	req.MaxArrivals = designerMaxArrivals
	req.TraceReader = nil
	ctx, cancel := contextWithTimeout(r, designerTimeout)
	defer cancel()
	resp, err := sim.Simulate(ctx, req)
	if err != nil {
		writeJSONProblem(w, http.StatusBadRequest, "Bad Request", err.Error())
		return
	}
	writeJSON(w, http.StatusOK, designerResponse{Result: resp.Result, Chart: string(resp.Chart)})
}

func (s *Server) handleDesigner(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(designerHTML)
}
