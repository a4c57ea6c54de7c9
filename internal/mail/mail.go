// Package mail hands messages to an SMTP server, or, with none configured,
// writes them as .eml files to an outbox directory, and renders the mails
// the service sends from their templates. Recipients and bodies are never
// logged, and never appear in the errors returned.
package mail

import (
	"context"
	"errors"
	"fmt"
	stdmail "net/mail"
	"strings"

	gomail "github.com/wneessen/go-mail"
)

// Message is one mail to one recipient. Text is the plain-text body; HTML,
// when set, is its alternative.
type Message struct {
	To      string
	Subject string
	Text    string
	HTML    string
	// FromName, when set, replaces the display name of the sender address
	// (LICENTIA_MAIL_FROM): a maker's customers read the maker's name,
	// sent from the service's address.
	FromName string
	// ReplyTo, when set, is where replies go.
	ReplyTo string
}

// Sender hands a message over for delivery: to an SMTP server, or to the
// outbox. An error means the message was not handed over; callers answer
// 503.
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// ErrNotSent is wrapped by every error of Send.
var ErrNotSent = errors.New("mail not handed over")

// maxLine is the longest line, in bytes without CRLF, that 8bit
// transfer encoding may carry (RFC 5322, 2.1.1).
const maxLine = 998

// build composes the RFC 5322 message both senders hand over. Errors name
// the field, never its value.
func build(from string, m Message) (*gomail.Msg, error) {
	// No User-Agent or X-Mailer: a customer's mail names the maker, and
	// no library of ours.
	msg := gomail.NewMsg(gomail.WithNoDefaultUserAgent())
	if err := setFrom(msg, from, m.FromName); err != nil {
		return nil, err
	}
	if err := msg.To(m.To); err != nil {
		return nil, fmt.Errorf("%w: recipient address is not valid", ErrNotSent)
	}
	if m.ReplyTo != "" {
		if err := msg.ReplyTo(m.ReplyTo); err != nil {
			return nil, fmt.Errorf("%w: reply-to address is not valid", ErrNotSent)
		}
	}
	msg.Subject(m.Subject)
	msg.SetDate()
	msg.SetMessageID()
	text := crlf(m.Text)
	msg.SetBodyString(gomail.TypeTextPlain, text, gomail.WithPartEncoding(textEncoding(text)))
	if m.HTML != "" {
		msg.AddAlternativeString(gomail.TypeTextHTML, crlf(m.HTML))
	}
	return msg, nil
}

// setFrom sets the sender: the configured address, under name when one is
// given.
func setFrom(msg *gomail.Msg, from, name string) error {
	if name == "" {
		if err := msg.From(from); err != nil {
			return fmt.Errorf("%w: sender address is not valid", ErrNotSent)
		}
		return nil
	}
	a, err := stdmail.ParseAddress(from)
	if err != nil {
		return fmt.Errorf("%w: sender address is not valid", ErrNotSent)
	}
	if err := msg.FromFormat(name, a.Address); err != nil {
		return fmt.Errorf("%w: sender address is not valid", ErrNotSent)
	}
	return nil
}

// textEncoding is how the text part is written. Quoted-printable breaks
// lines longer than 76 characters with a soft break ("=" at the end of
// the line), so a link or licence key copied out of a raw .eml file would
// come out cut; and it writes every accented letter as =C3=AB. 8bit
// writes each line as it is, which mail servers have carried for decades
// (8BITMIME, announced to the server when it offers it). Only a line
// longer than 8bit allows, which the templates never write, falls back to
// quoted-printable.
func textEncoding(text string) gomail.Encoding {
	for line := range strings.SplitSeq(text, "\r\n") {
		if len(line) > maxLine {
			return gomail.EncodingQP
		}
	}
	return gomail.NoEncoding
}

// crlf ends every line with CRLF, as a message's lines end, and leaves no
// bare CR: 8bit writes the text as given.
func crlf(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	return strings.ReplaceAll(s, "\n", "\r\n")
}
