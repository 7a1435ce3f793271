package server

import (
	"encoding/json"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/httplimit"
)

// A client of the public listener controls what the dashboard's most
// limited clients show of others: refused under 513 rotating subjects (513
// IPv6 /64s, or 513 unlisted API keys under unknown_keys: key), it keeps
// the 512-entry table full and raises its least count, which the
// space-saving table hands to the next client it takes in. A listed key
// refused once then holds a count of tens of refusals, nearly all
// inherited: the dashboard shows it with the one refusal it certainly got
// (the count only as the most it may have got), and never above a client
// certainly refused more; GET /v1/keys (sluice keys top) likewise.
func TestTheMostLimitedClientsNeverShowAnotherClientsRefusals(t *testing.T) {
	s := newStats(func() time.Time { return time.Unix(1e9, 0) }, nil)
	refuseUnderRotatingSubjects(s)
	all := s.snapshot(dashboardRanges[0], topCapacity).TopLimited
	rows := make([]topRow, len(all))
	copy(rows, all)
	judgeTheMostLimited(t, "the dashboard", s, rows, func(r topRow) string { return r.Client }, "api-key:acme")

	w := httptest.NewRecorder()
	(&Server{stats: s}).handleKeysTop(w, httptest.NewRequest("GET", "/v1/keys?top=512", nil), caller{})
	var subjects []topSubject
	if err := json.Unmarshal(w.Body.Bytes(), &subjects); err != nil {
		t.Fatalf("GET /v1/keys: %d %q: %v", w.Code, w.Body, err)
	}
	rows = rows[:0]
	names := make(map[topRow]string)
	for _, e := range subjects {
		rows = append(rows, e.topRow)
		names[e.topRow] = e.Subject
	}
	judgeTheMostLimited(t, "GET /v1/keys", s, rows, func(r topRow) string { return names[r] }, "key:acme")
}

// refuseUnderRotatingSubjects has s record the refusals of the attack above:
// a client refused 100 times, 513 rotating subjects 40 times each, then
// the listed key acme once.
func refuseUnderRotatingSubjects(s *stats) {
	anon := &httplimit.Plan{Name: "anonymous"}
	for range 100 {
		s.recordClient(httplimit.Identity{Kind: httplimit.KindIP, Subject: "ip:198.51.100.7", Plan: anon})
	}
	const rounds = 40
	for range rounds {
		for i := range topCapacity + 1 {
			s.recordClient(httplimit.Identity{Kind: httplimit.KindIP, Subject: "ip:2001:db8:" + strconv.Itoa(i) + "::/64", Plan: anon})
		}
	}
	// The innocent customer is refused once.
	acme := httplimit.Identity{Kind: httplimit.KindAPIKey, Subject: "key:acme", KeyName: "acme", Plan: &httplimit.Plan{Name: "pro"}}
	s.recordClient(acme)
}

// judgeTheMostLimited judges all, the most limited clients as a surface
// (where) lists them, named by name, after refuseUnderRotatingSubjects.
func judgeTheMostLimited(t *testing.T, where string, s *stats, all []topRow, name func(topRow) string, acme string) {
	t.Helper()
	found := false
	for pos, e := range all {
		if name(e) != acme {
			continue
		}
		found = true
		if e.Refused != 1 || e.AtMost <= 1 {
			t.Errorf("%s: %s, refused once after taking the place of another client, is shown with %d refusals, %d at most; "+
				"want its 1, and the count it inherited as at most", where, acme, e.Refused, e.AtMost)
		}
		for _, above := range all[:pos] {
			if above.Refused < e.Refused {
				t.Errorf("%s: %+v is listed above %s %+v", where, above, acme, e)
			}
		}
		for _, below := range all[pos+1:] {
			if below.Refused > e.Refused {
				t.Errorf("%s: %+v, certainly refused more, is listed below %s %+v", where, below, acme, e)
			}
		}
	}
	if !found {
		t.Errorf("%s: %s is not among the %d clients of the table", where, acme, len(all))
	}
	if len(all) == 0 || all[0].Client != s.displayClient(httplimit.Identity{Kind: httplimit.KindIP, Subject: "ip:198.51.100.7"}) ||
		all[0].Refused != 100 || all[0].AtMost != 100 {
		t.Errorf("%s: the most limited clients begin with %+v, want the client refused 100 times, its count exact", where, all[:min(3, len(all))])
	}
}
