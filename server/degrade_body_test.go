package server_test

import (
	"testing"
)

// PUT /v1/degradation reads its body as every JSON endpoint does: one JSON
// object and whitespace up to the end. A body with data after the object
// ({"level":"critical"} x, or a second object) is a 400 that pins nothing,
// rather than a pin read from its first part.
func TestDegradationPinRefusesDataAfterTheObject(t *testing.T) {
	f := newFixture(t, degradeConfig)
	for _, body := range []string{`{"level":"critical"} x`, `{"level":"critical"}{"level":"normal"}`, `{"level":"critical"},`} {
		r := f.do(t, "PUT", "/v1/degradation", body, nil)
		if got := readAll(t, r); r.StatusCode != 400 {
			t.Errorf("PUT %s: %d %s, want 400", body, r.StatusCode, got)
		}
		if got := f.srv.Degradation(); got.Pinned {
			t.Errorf("PUT %s pinned %v", body, got.Level)
		}
	}
	if r := f.do(t, "PUT", "/v1/degradation", "{\"level\":\"high\"}\n\t ", nil); r.StatusCode != 200 {
		t.Errorf("PUT of an object and whitespace: %d %s, want 200", r.StatusCode, readAll(t, r))
	}
}
