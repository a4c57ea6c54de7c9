package mail

import (
	"bytes"
	"embed"
	"fmt"
	htmltemplate "html/template"
	"strings"
	texttemplate "text/template"
)

//go:embed templates
var templateFiles embed.FS

// DefaultAccent colours a mail whose organization chose no accent.
const DefaultAccent = "#334155"

// Brand is what a mail shows of the organization it comes from: its name,
// logo and colour, and where replies go.
type Brand struct {
	Name         string
	LogoURL      string
	Accent       string
	SupportEmail string
}

// kind is one mail's pair of templates, each of the layout with the kind's
// "subject" and "body".
type kind struct {
	text *texttemplate.Template
	html *htmltemplate.Template
}

// kinds are parsed once, from files embedded in the binary: a template
// that does not parse fails every test, never a send.
var kinds = parseKinds("key", "invitation", "portal_sign_in", "console_password")

func parseKinds(names ...string) map[string]kind {
	out := make(map[string]kind, len(names))
	for _, name := range names {
		out[name] = kind{
			text: texttemplate.Must(texttemplate.ParseFS(templateFiles, "templates/layout.txt", "templates/"+name+".txt")),
			html: htmltemplate.Must(htmltemplate.ParseFS(templateFiles, "templates/layout.html", "templates/"+name+".html")),
		}
	}
	return out
}

// render fills the templates of kind name with data, whose Brand field
// fills the layout.
func render(name, to string, b Brand, data any) (Message, error) {
	k := kinds[name]
	var subject, text, html bytes.Buffer
	if err := k.text.ExecuteTemplate(&subject, "subject", data); err != nil {
		return Message{}, fmt.Errorf("render %s mail: %w", name, err)
	}
	if err := k.text.ExecuteTemplate(&text, "layout", data); err != nil {
		return Message{}, fmt.Errorf("render %s mail: %w", name, err)
	}
	if err := k.html.ExecuteTemplate(&html, "layout", data); err != nil {
		return Message{}, fmt.Errorf("render %s mail: %w", name, err)
	}
	return Message{To: to, Subject: strings.TrimSpace(subject.String()), Text: text.String(), HTML: html.String(),
		ReplyTo: b.SupportEmail}, nil
}

func (b Brand) withDefaults() Brand {
	if b.Accent == "" {
		b.Accent = DefaultAccent
	}
	return b
}

// KeyLicence is one licence a key mail lists, in words.
type KeyLicence struct {
	Product string
	Key     string
	// Limit is "3 seats", "1 machine".
	Limit string
	// Expiry is a sentence: "Does not expire.", "Expires on ...".
	Expiry string
}

// KeyMail hands a customer the keys of their licences. Every key, and the
// link to the page that shows them again, stands on a line of its own in
// the text part.
type KeyMail struct {
	To       string
	Brand    Brand
	Licences []KeyLicence
	KeysURL  string
}

// Message renders the key mail, from the organization's display name.
func (k KeyMail) Message() (Message, error) {
	if len(k.Licences) == 0 {
		return Message{}, fmt.Errorf("render key mail: no licence")
	}
	k.Brand = k.Brand.withDefaults()
	m, err := render("key", k.To, k.Brand, k)
	m.FromName = k.Brand.Name
	return m, err
}

// InvitationMail invites an address to an organization's team.
type InvitationMail struct {
	To    string
	Brand Brand
	Role  string
	Link  string
	// Expires is when the link stops working, in words.
	Expires string
}

// Message renders the invitation. It comes from the service, under its
// configured sender name: the invitee joins the organization on it.
func (i InvitationMail) Message() (Message, error) {
	i.Brand = i.Brand.withDefaults()
	m, err := render("invitation", i.To, i.Brand, i)
	m.ReplyTo = ""
	return m, err
}

// SignInMail carries a one-time link that signs a customer in to an
// organization's customer portal. The link stands on a line of its own in
// the text part.
type SignInMail struct {
	To    string
	Brand Brand
	Link  string
	// Expires is when the link stops working, in words.
	Expires string
}

// Message renders the sign-in mail, from the organization's display name.
func (s SignInMail) Message() (Message, error) {
	s.Brand = s.Brand.withDefaults()
	m, err := render("portal_sign_in", s.To, s.Brand, s)
	m.FromName = s.Brand.Name
	return m, err
}

// PasswordMail carries a one-time link that sets a member's console
// password, asked for with "Forgot password?". The link stands on a line of
// its own in the text part.
type PasswordMail struct {
	To    string
	Brand Brand
	Link  string
	// Expires is when the link stops working, in words.
	Expires string
}

// Message renders the password mail. It comes from the service, under its
// configured sender name, as invitations do: the console is the service's.
func (p PasswordMail) Message() (Message, error) {
	p.Brand = p.Brand.withDefaults()
	m, err := render("console_password", p.To, p.Brand, p)
	m.ReplyTo = ""
	return m, err
}
