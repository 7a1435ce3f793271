package httplimit

import "testing"

// phpPartName reads a Content-Disposition as PHP's rfc1867_post_handler
// does (php_ap_getword, php_ap_getword_conf).
func TestPHPPartName(t *testing.T) {
	for _, c := range []struct{ disposition, want string }{
		{`form-data; name="a"`, "a"},
		{`form-data; name="a"; name="b"`, "b"},
		{`form-data; NAME=a`, "a"},
		{`name=a b`, "a"},
		{`form-data; name='a`, "a"},
		{`form-data; name="a\"b\\c\d"`, `a"b\c\d`},
		{`form-data; name=="a"`, "a"},
		{`form-data;;; name="a"`, "a"},
		{`form-data; x="b;name=c"; name=a`, "a"},
		{`form-data; name="a"; filename=""`, ""},
		{`form-data; name="a"; FileName=b`, ""},
		{`form-data; name="a"; filename*=UTF-8''b`, "a"},
		{`form-data name="a"`, ""},
		{`form-data; name ="a"`, ""},
		{`form-data; name`, ""},
		{`form-data; name=`, ""},
	} {
		if got := phpPartName(c.disposition); got != c.want {
			t.Errorf("phpPartName(%q) = %q, want %q", c.disposition, got, c.want)
		}
	}
}

// phpParts reads a part's head as PHP does: its first Content-Disposition
// header, continued by a line that opens with whitespace or holds no
// colon, and a header line longer than the read buffer split where it
// fills it.
func TestPHPPartsReadHeads(t *testing.T) {
	long := make([]byte, phpFillUnit-len("X-Pad: "))
	for i := range long {
		long[i] = 'p'
	}
	for _, c := range []struct{ head, want string }{
		{"Content-Disposition: form-data;\r\n name=a", "a"},
		{"Content-Disposition: form-data;\r\nname=a", "a"},
		{"Content-Disposition: form-data; name=a\r\ncontent-disposition: form-data; name=b", "a"},
		{"Content-Disposition : form-data; name=a", ""},
		{"X-Pad: " + string(long) + "Content-Disposition: form-data; name=a", "a"},
	} {
		body := "--X\r\n" + c.head + "\r\n\r\nv\r\n--X--\r\n"
		parts, names := phpParts([]byte(body), "X", 2)
		if len(parts) != 1 || string(parts[0].head) != c.head+"\r\n" || string(parts[0].content) != "v" || names[0] != c.want {
			t.Errorf("head %q: %d parts, names %q, want one named %q", c.head, len(parts), names, c.want)
		}
	}
}
