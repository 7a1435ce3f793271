package httplimit

import (
	"mime"
	"testing"
)

// boundariesAgree holds where Go, PHP and Rack read one boundary of a
// Content-Type, or none, and not where one of them reads another or one
// where the others read none; on an ordinary Content-Type it allocates
// nothing.
func TestBoundariesAgreeOnlyWhereGoPHPAndRackReadOne(t *testing.T) {
	for _, c := range []struct {
		ct    string
		agree bool
	}{
		{"multipart/form-data; boundary=AAA", true},
		{`multipart/form-data; boundary="AAA"`, true},
		{"multipart/form-data;boundary=AAA;charset=utf-8", true},
		{"Multipart/Form-Data; BOUNDARY=AAA", true},
		{"multipart/form-data", true},
		{"multipart/form-data; xboundary=AAA", false},                     // PHP and Rack read AAA, Go none
		{"multipart/form-data; xboundary=AAA; boundary=BBB", false},       // PHP reads AAA
		{"multipart/form-data; boundary=BBB; xboundary=AAA", false},       // Rack reads AAA
		{"multipart/form-data; boundary=BBB; name=\"boundary=A\"", false}, // Rack reads A
		{"multipart/form-data; Boundary=BBB; x=boundary", false},          // PHP: "boundary" as sent first, no '=' after it
		{"multipart/form-data; boundary=\"\"", false},                     // Go and PHP read "", Rack none
		{"multipart/form-data; boundary=\"A;B\"", false},                  // Rack reads A
		{"multipart/form-data; boundary = AAA", false},                    // PHP reads " AAA", Rack none
		{"multipart/form-data; boundary*=utf-8''AAA", false},              // Go decodes AAA, PHP does not
	} {
		_, params, err := mime.ParseMediaType(c.ct)
		if err != nil {
			t.Fatalf("%s: %v (the probe is wrong)", c.ct, err)
		}
		if got := boundariesAgree(c.ct, params); got != c.agree {
			t.Errorf("boundariesAgree(%s) = %v, want %v", c.ct, got, c.agree)
		}
	}
	const ct = "multipart/form-data; boundary=----WebKitFormBoundary7MA4YWxkTrZu0gW"
	_, params, _ := mime.ParseMediaType(ct)
	if n := testing.AllocsPerRun(100, func() { boundariesAgree(ct, params) }); n != 0 {
		t.Errorf("boundariesAgree(%s): %v allocations, want 0", ct, n)
	}
}
