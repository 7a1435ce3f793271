package migrate_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/migrate"
)

// TestImportNginxConnWithReqIsReported: nginx runs limit_req before
// limit_conn in its preaccess phase, each deciding alone, so a request
// limit_conn refuses has spent limit_req's bucket, and takes the
// connection slot only after limit_req's delay; sluice decides a
// location's limits in one call, a refusal spending nothing, and holds the
// slot while a request waits in the queue. The contract: a file where a
// place uses both is reported; one using limit_conn alone is not.
func TestImportNginxConnWithReqIsReported(t *testing.T) {
	for _, c := range []struct {
		location string
		reported bool
	}{
		{"limit_conn c 2; limit_req zone=r burst=5 nodelay;", true},
		{"limit_conn c 2;", false},
	} {
		tr, err := migrate.Import("nginx", `http {
  limit_conn_zone $binary_remote_addr zone=c:1m;
  limit_req_zone $binary_remote_addr zone=r:1m rate=1r/m;
  server {
    listen 80;
    location /slow/ { `+c.location+` }
    location /other/ { limit_req zone=r; }
  }
}
`, "nginx.conf")
		if err != nil {
			t.Fatal(err)
		}
		if got := hasDifference(tr, false, "limit_conn with limit_req: nginx runs limit_req before limit_conn"); got != c.reported {
			t.Errorf("location /slow/ { %s }: reported %v, want %v:\n%s", c.location, got, c.reported, tr.Report())
		}
	}
}

// TestNginxConnRefusalSpendsLimitReq: real nginx and the import are sent
// the same requests: two held at the upstream (limit_conn 2), three more
// refused meanwhile by limit_conn, then, once the two end, requests until
// limit_req (1r/m, burst=5 nodelay: a bucket of 6) refuses. nginx's
// limit_conn refusals spent limit_req's bucket, sluice's did not: the
// contract is that the counts after agree, or the report says that a
// request limit_conn refuses still spends limit_req.
func TestNginxConnRefusalSpendsLimitReq(t *testing.T) {
	up := newHeldUpstream(t)
	addr := realtest.FreeAddr(t)
	site := fmt.Sprintf(`limit_conn_zone $binary_remote_addr zone=c:1m;
limit_req_zone $binary_remote_addr zone=r:1m rate=1r/m;
server {
    listen %[1]s;
    limit_conn_status 429;
    limit_req_status 429;
    location /slow/ { limit_conn c 2; limit_req zone=r burst=5 nodelay; proxy_pass %[2]s; }
    location / { proxy_pass %[2]s; }
}
`, addr, up.URL)
	targets := startTargets(t, addr, site, up.URL)
	c := http.DefaultClient
	after := map[string]int{}
	for _, name := range []string{"nginx", "sluice"} {
		url := targets[name]
		var refused []int
		first, second := up.withTwoHeld(t, name, c, url, func() {
			for range 3 {
				refused = append(refused, status(t, c, url+"/slow/b"))
			}
		})
		if first != 200 || second != 200 || !slices.Equal(refused, []int{429, 429, 429}) {
			t.Fatalf("%s: held %d %d, refused meanwhile %v", name, first, second, refused)
		}
		for range 10 {
			if status(t, c, url+"/slow/c") != 200 {
				break
			}
			after[name]++
		}
	}
	tr, err := migrate.Nginx(site, "replay.conf")
	if err != nil {
		t.Fatal(err)
	}
	if after["nginx"] != after["sluice"] && !hasDifference(tr, false, "a request limit_conn refuses has already spent") {
		t.Errorf("admitted after the held two ended: nginx %d, sluice %d; the report does not say that limit_conn's refusals spend limit_req in nginx", after["nginx"], after["sluice"])
	}
}
