package migrate_test

import (
	"os"
	"path/filepath"
	"testing"
)

// nginx Plus limits per user by $jwt_claim_sub, with auth_jwt verifying the
// tokens with a key file: the import verifies them with the same JWK Set
// and counts by the verified subject and claims.
func TestImportNginxJWTClaims(t *testing.T) {
	keys := filepath.Join(t.TempDir(), "api.jwk")
	if err := os.WriteFile(keys, []byte(`{"keys":[{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo","kid":"k1"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	runImportCases(t, []importCase{{
		name:   "zones keyed by JWT claims",
		format: "nginx",
		src: `http {
    limit_req_zone $jwt_claim_sub zone=peruser:10m rate=10r/s;
    limit_req_zone $jwt_claim_org zone=perorg:10m rate=100r/m;
    server {
        auth_jwt "api";
        auth_jwt_key_file ` + keys + `;
        location /api/ {
            limit_req zone=peruser burst=20 nodelay;
            limit_req zone=perorg;
        }
    }
}
`,
		limits: []string{"placeholder: fixed-window 1000000000 per 1s (shadow)"},
		rules: []string{
			"peruser paths=[/api/] key=[user] fallback=skip | per-second: gcra 10 per 1s burst 21",
			"perorg paths=[/api/] key=[claim:org] fallback=skip | per-minute: gcra 100 per 1m0s burst 1",
		},
		costs:   map[string]int64{"/": 0, "/api/": 1},
		same:    []string{"tokens verified with the JWK Set in " + keys, "one count per value of the verified token's subject (sub)", "one count per value of claim org of the verified token"},
		differs: []string{"nginx Plus refuses a request whose token does not verify (401, auth_jwt)"},
	}, {
		name:   "keys from a subrequest: the claims cannot be keyed by",
		format: "nginx",
		src: `http {
    limit_req_zone $jwt_claim_sub zone=peruser:10m rate=10r/s;
    server {
        auth_jwt "api";
        auth_jwt_key_request /_jwks;
        location /api/ { limit_req zone=peruser; }
    }
}
`,
		limits:  []string{"peruser: gcra 10 per 1s burst 1"},
		costs:   map[string]int64{"/": 0, "/api/": 1},
		differs: []string{"fetches its JWT keys by a subrequest", "sluice cannot key a limit on $jwt_claim_sub"},
	}})
}
