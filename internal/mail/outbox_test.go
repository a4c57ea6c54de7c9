package mail_test

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/licentia/licentia/internal/mail"
)

func TestOutboxWrites(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "outbox")
	o := mail.NewOutbox(dir, "")
	m := mail.Message{To: "ada@example.org", Subject: "You are invited to Acme", Text: "Follow the link to join.\n"}
	if err := o.Send(t.Context(), m); err != nil {
		t.Fatalf("Send() error = %v", err)
	}
	info, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o700 {
		t.Errorf("outbox mode = %v, want 0700", info.Mode().Perm())
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || filepath.Ext(entries[0].Name()) != ".eml" {
		t.Fatalf("outbox holds %v, want one .eml file", entries)
	}
	path := filepath.Join(dir, entries[0].Name())
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode = %v, want 0600", fi.Mode().Perm())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	checkMessage(t, data, m)
}

// TestOutboxNeverCollides: messages sent at once get a file each, and the
// names sort in the order of sending.
func TestOutboxNeverCollides(t *testing.T) {
	dir := t.TempDir()
	o := mail.NewOutbox(dir, "licences@example.com")
	const n = 20
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if err := o.Send(t.Context(), mail.Message{To: "ada@example.org", Subject: "x", Text: "x"}); err != nil {
				t.Errorf("Send() error = %v", err)
			}
		})
	}
	wg.Wait()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != n {
		t.Fatalf("outbox holds %d files, want %d", len(entries), n)
	}
	first := entries[n-1].Name()
	if err := o.Send(t.Context(), mail.Message{To: "ada@example.org", Subject: "later", Text: "x"}); err != nil {
		t.Fatal(err)
	}
	entries, _ = os.ReadDir(dir)
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.IsSorted(names) || names[len(names)-1] <= first {
		t.Errorf("a later message's file does not sort last: %v", names)
	}
}

func TestOutboxInvalidRecipient(t *testing.T) {
	dir := t.TempDir()
	if err := mail.NewOutbox(dir, "").Send(t.Context(), mail.Message{To: "not an address", Subject: "x", Text: "x"}); err == nil {
		t.Fatal("Send() to an invalid address error = nil, want one")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("outbox holds %v after a refused message, want nothing", entries)
	}
}
