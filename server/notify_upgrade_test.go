package server_test

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/server"
)

// A client on free (3 a minute) uses all of it and is told 50% and 100% of
// free's quota — the cue to offer the upgrade. Upgraded to pro (100 a
// minute) by a reload in the same minute, it then uses half of pro's
// quota: that crossing of another quota (plan pro, quota 100) is told too,
// under an id of its own, so that the billing system hears that the
// upgraded client used its paid quota.
func TestNotifyTellsAnUpgradedPlansQuota(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		hook := &hookReceiver{}
		hs := httptest.NewServer(hook)
		defer hs.Close()
		cfg := notifyConfig(t, hs.URL, "s")
		f := newFixture(t, cfg, kind)
		key := map[string]string{"X-API-Key": "demo-free-key"}
		for range 3 {
			readAll(t, f.do(t, "GET", "/api/search", "", key))
		}
		hook.waitFor(t, 2) // free's 50% and 100%

		upgraded := strings.Replace(cfg, "plan: free} # demo-free-key", "plan: pro} # demo-free-key", 1)
		if upgraded == cfg {
			t.Fatal("the test configuration no longer names demo-free-key's plan as expected")
		}
		old, err := os.ReadFile(f.file)
		if err != nil {
			t.Fatal(err)
		}
		first, _, _ := strings.Cut(string(old), "\n") // the upstream
		if err := os.WriteFile(f.file, []byte(first+"\n"+upgraded+testAdmin), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := f.srv.Reload(); err != nil {
			t.Fatal(err)
		}
		for range 50 {
			readAll(t, f.do(t, "GET", "/api/search", "", key))
		}
		bodies, _ := hook.waitFor(t, 3)
		var free, pro server.Notification
		if err := json.Unmarshal([]byte(bodies[0]), &free); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(bodies[2]), &pro); err != nil {
			t.Fatal(err)
		}
		if pro.Plan != "pro" || pro.Quota != 100 || pro.At != 50 || pro.ID == free.ID {
			t.Errorf("after the upgrade: %+v, want pro's 50%% of 100 under an id of its own (free's 50%%: %s)", pro, free.ID)
		}
	})
}
