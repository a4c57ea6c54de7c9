// Package mailtest reads mail as a person's mail client, or a person
// copying from a raw .eml file, would: the text part exactly as it is
// written in the message, before any transfer decoding.
package mailtest

import (
	"bufio"
	"bytes"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	stdmail "net/mail"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Raw is one message as written: its headers, and its text and HTML parts
// as they stand in the message (RawText, not decoded) and decoded.
type Raw struct {
	Header   stdmail.Header
	RawText  string
	Text     string
	TextCTE  string
	HTML     string
	HTMLCTE  string
	Original []byte
}

// Parse reads a raw message and its text and HTML parts.
func Parse(t testing.TB, data []byte) Raw {
	t.Helper()
	msg, err := stdmail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("message does not parse: %v\n%s", err, data)
	}
	r := Raw{Header: msg.Header, Original: data}
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil {
		t.Fatalf("Content-Type %q: %v", msg.Header.Get("Content-Type"), err)
	}
	body, _ := io.ReadAll(msg.Body)
	if !strings.HasPrefix(mt, "multipart/") {
		r.add(t, mt, msg.Header.Get("Content-Transfer-Encoding"), body)
		return r
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	for {
		// NextRawPart leaves quoted-printable as written, which is what
		// is checked here.
		p, err := mr.NextRawPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("multipart: %v", err)
		}
		b, _ := io.ReadAll(p)
		pmt, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		r.add(t, pmt, p.Header.Get("Content-Transfer-Encoding"), b)
	}
	return r
}

func (r *Raw) add(t testing.TB, mediaType, cte string, raw []byte) {
	t.Helper()
	decoded := string(raw)
	if strings.EqualFold(cte, "quoted-printable") {
		b, err := io.ReadAll(quotedPrintable(raw))
		if err != nil {
			t.Fatalf("quoted-printable: %v", err)
		}
		decoded = string(b)
	}
	switch mediaType {
	case "text/plain":
		r.RawText, r.Text, r.TextCTE = string(raw), decoded, cte
	case "text/html":
		r.HTML, r.HTMLCTE = decoded, cte
	}
}

var linkRE = regexp.MustCompile(`https?://[^\s<>"]+`)

// Lines are the lines of the text part as written in the message.
func (r Raw) Lines() []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(r.RawText))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		out = append(out, strings.TrimRight(sc.Text(), "\r"))
	}
	return out
}

// CheckStandalone fails unless each of want stands whole on a line of its
// own in the text part as written, and every link in the text part is a
// line of its own: what a person copying from the raw message gets is
// what works.
func (r Raw) CheckStandalone(t testing.TB, want ...string) {
	t.Helper()
	lines := r.Lines()
	for _, w := range want {
		if !slices.Contains(lines, w) {
			t.Errorf("text part (%s) has no line %q as written:\n%s", r.TextCTE, w, r.RawText)
		}
	}
	for _, l := range lines {
		for _, link := range linkRE.FindAllString(l, -1) {
			if link != strings.TrimSpace(l) {
				t.Errorf("link %q shares its line %q in the text part", link, l)
			}
		}
		if strings.HasSuffix(l, "=") && strings.EqualFold(r.TextCTE, "quoted-printable") {
			t.Errorf("text part line %q ends in a quoted-printable soft break", l)
		}
	}
}

// Outbox reads every .eml file of dir, oldest first.
func Outbox(t testing.TB, dir string) []Raw {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []Raw
	for _, e := range entries {
		if filepath.Ext(e.Name()) != ".eml" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, Parse(t, data))
	}
	return out
}

func quotedPrintable(b []byte) io.Reader {
	return quotedprintable.NewReader(bytes.NewReader(b))
}
