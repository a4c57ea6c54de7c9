package mail

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// DefaultFrom is the sender address of outbox mail when none is configured.
const DefaultFrom = "Licentia <licentia@localhost>"

// Outbox writes each message as an RFC 5322 .eml file in a directory, for
// installations without an SMTP server. Files are readable by the
// service's user only.
type Outbox struct {
	dir  string
	from string
	now  func() time.Time
}

// NewOutbox returns an outbox writing to dir, created on first use with
// mode 0700. An empty from is DefaultFrom.
func NewOutbox(dir, from string) *Outbox {
	if from == "" {
		from = DefaultFrom
	}
	return &Outbox{dir: dir, from: from, now: time.Now}
}

// Dir is the directory mail is written to.
func (o *Outbox) Dir() string { return o.dir }

// Send writes m to a new file whose name sorts by time and never collides,
// through a temporary file renamed into place, so a reader never sees half
// a message.
func (o *Outbox) Send(ctx context.Context, m Message) (err error) {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: %v", ErrNotSent, err)
	}
	msg, err := build(o.from, m)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.dir, 0o700); err != nil {
		return fmt.Errorf("%w: outbox: %v", ErrNotSent, err)
	}
	tmp, err := os.CreateTemp(o.dir, ".writing-*")
	if err != nil {
		return fmt.Errorf("%w: outbox: %v", ErrNotSent, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
			err = fmt.Errorf("%w: outbox: %v", ErrNotSent, err)
		}
	}()
	if _, err := msg.WriteTo(tmp); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(o.dir, o.name()))
}

// name is the UTC time to the nanosecond, which sorts, and 8 random bytes,
// which keep two messages of the same instant apart.
func (o *Outbox) name() string {
	var b [8]byte
	rand.Read(b[:])
	return o.now().UTC().Format("20060102T150405.000000000Z") + "-" + hex.EncodeToString(b[:]) + ".eml"
}
