// Package mail hands messages to an SMTP server, or, with none configured,
// writes them as .eml files to an outbox directory. Recipients and bodies
// are never logged, and never appear in the errors returned.
package mail

import (
	"context"
	"errors"
	"fmt"

	gomail "github.com/wneessen/go-mail"
)

// Message is one mail to one recipient. Text is the plain-text body.
type Message struct {
	To      string
	Subject string
	Text    string
}

// Sender hands a message over for delivery: to an SMTP server, or to the
// outbox. An error means the message was not handed over; callers answer
// 503.
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// ErrNotSent is wrapped by every error of Send.
var ErrNotSent = errors.New("mail not handed over")

// build composes the RFC 5322 message both senders hand over. Errors name
// the field, never its value.
func build(from string, m Message) (*gomail.Msg, error) {
	msg := gomail.NewMsg()
	if err := msg.From(from); err != nil {
		return nil, fmt.Errorf("%w: sender address is not valid", ErrNotSent)
	}
	if err := msg.To(m.To); err != nil {
		return nil, fmt.Errorf("%w: recipient address is not valid", ErrNotSent)
	}
	msg.Subject(m.Subject)
	msg.SetDate()
	msg.SetMessageID()
	msg.SetBodyString(gomail.TypeTextPlain, m.Text)
	return msg, nil
}
