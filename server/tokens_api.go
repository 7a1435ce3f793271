package server

import (
	"context"
	"net/http"
	"time"

	"github.com/sluice-dev/sluice/httplimit"
)

// maxTokenBody bounds POST /v1/tokens' body: one token of at most
// maxTokenLen, and its JSON.
const maxTokenBody = 16 << 10

// tokenAnswer is what POST /v1/tokens says of a token: whom it names and
// on which plan, or why it names no one.
type tokenAnswer struct {
	Verified bool `json:"verified"`
	// Result is "verified" or the class of the refusal, as
	// sluice_token_verifications_total counts it; Detail says why.
	Result string `json:"result"`
	Detail string `json:"detail,omitempty"`
	// Subject is the client the token names ("user:…"); Plan the plan its
	// requests are limited by (before a trusted plan header); PlanClaim
	// the plan the token itself names, PlanNames the names its plan claim
	// lists (groups, roles), in order.
	Subject   string            `json:"subject,omitempty"`
	Plan      string            `json:"plan,omitempty"`
	PlanClaim string            `json:"planClaim,omitempty"`
	PlanNames []string          `json:"planNames,omitempty"`
	ExpiresAt *time.Time        `json:"expiresAt,omitempty"`
	Claims    map[string]string `json:"claims,omitempty"`
}

// handleToken is POST /v1/tokens, for callers with the admin scope: it
// verifies {"token": "…"} as the served configuration's identity.jwt
// does, now (not from the middleware's memory of recent tokens, and not
// counted in the metrics), and says whom it names or why it names no one:
// the question an operator asks when a client is limited by its address.
// 409 without identity.jwt; 400 for a body that is not one.
func (s *Server) handleToken(w http.ResponseWriter, r *http.Request, _ caller) {
	var req struct {
		Token string `json:"token"`
	}
	status, err := readJSON(w, r, maxTokenBody, &req)
	switch {
	case err != nil:
		writeJSONProblem(w, status, http.StatusText(status), "tokens: "+err.Error())
		return
	case req.Token == "":
		writeJSONProblem(w, http.StatusBadRequest, "Bad Request", `tokens: "token" is required`)
		return
	case len(req.Token) > maxTokenLen:
		writeJSONProblem(w, http.StatusBadRequest, "Bad Request", "tokens: a token of more than 8 KiB names no one")
		return
	}
	v := s.tokens.plain()
	if v == nil {
		writeJSONProblem(w, http.StatusConflict, "Conflict", "This configuration verifies no tokens (no identity.jwt): a Bearer token is an API key here.")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 15*time.Second)
	defer cancel()
	claims, err := v.VerifyToken(ctx, req.Token)
	writeJSON(w, http.StatusOK, s.explainToken(ctx, claims, err))
}

// explainToken is the answer of a verification that returned claims and
// err.
func (s *Server) explainToken(ctx context.Context, claims httplimit.TokenClaims, err error) tokenAnswer {
	if err != nil {
		return tokenAnswer{Result: resultOf(ctx, err), Detail: err.Error()}
	}
	mw := s.state.Load().mw
	pol := mw.Policy()
	a := tokenAnswer{Verified: true, Result: "verified", Subject: mw.UserSubject(claims.Subject), PlanClaim: claims.Plan,
		PlanNames: claims.Plans, Claims: claims.Claims}
	for _, name := range append([]string{claims.Plan}, claims.Plans...) {
		if p := pol.Plan(name); p != nil && a.Plan == "" {
			a.Plan = p.Name
		}
	}
	if p := pol.Plan(pol.DefaultPlan); p != nil && a.Plan == "" {
		a.Plan = p.Name
	}
	if !claims.Expires.IsZero() {
		at := claims.Expires.UTC()
		a.ExpiresAt = &at
	}
	return a
}
