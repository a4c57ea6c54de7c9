package mail

import (
	"io"
	"testing"

	"github.com/licentia/licentia/internal/licentia"
)

// FuzzMailableEmail: every address licentia.CheckMailableEmail accepts is
// taken by the mail library when a message is built and written, and is
// the one recipient the library would send to, spelt as stored. The check
// runs before anything is written, so a failure here would be a
// 503 after the caller was told the address was fine.
func FuzzMailableEmail(f *testing.F) {
	for _, s := range []string{
		"ada@example.com", "Ada.Lovelace+team@x.example", "o'brien@x.example", "ümlaut@x.example",
		`a"b@x.example`, "a..b@x.example", "a<b@x.example", ".a@x.example", "a.@x.example",
		"<a@x.example>", `"a"@x.example`, `"a b"@x.example`, "a(comment)@x.example", "a@[192.0.2.1]",
		"a@x..example", "a@-x.example", "=?utf-8?q?a?=@x.example", "a@x.example,b@x.example", "a@x.example\r\nBcc: b@x.example",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if licentia.CheckMailableEmail(s) != "" {
			return
		}
		msg, err := build("licences@example.com", Message{To: s, Subject: "Invitation", Text: "Hello"})
		if err != nil {
			t.Fatalf("CheckMailableEmail(%q) accepts it, but build() error = %v", s, err)
		}
		if _, err := msg.WriteTo(io.Discard); err != nil {
			t.Fatalf("CheckMailableEmail(%q) accepts it, but WriteTo() error = %v", s, err)
		}
		if to := msg.GetTo(); len(to) != 1 || to[0].Address != s {
			t.Fatalf("CheckMailableEmail(%q) accepts it, but the recipients are %v", s, to)
		}
	})
}
