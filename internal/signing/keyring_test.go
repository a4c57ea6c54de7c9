package signing_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/signing"
)

// wantCode fails unless err is a *licentia.Error with code want.
func wantCode(t *testing.T, call string, err error, want licentia.Code) {
	t.Helper()
	e, ok := errors.AsType[*licentia.Error](err)
	if !ok || e.Code != want {
		t.Errorf("%s error = %v, want code %s", call, err, want)
	}
}

// productWith returns a product whose key history is keys.
func productWith(id, prefix string, keys ...*licentia.ProductKey) *licentia.Product {
	p := &licentia.Product{
		ID: id, Name: "Product " + id, KeyPrefix: prefix, CurrentMajor: 1,
		MachinesPerSeat: licentia.DefaultMachinesPerSeat, LicenceSigningDomain: "licence.example.com",
		VerdictSigningDomain: "verdict.example.com", CreatedAt: base, UpdatedAt: base,
	}
	for _, k := range keys {
		p.Keys = append(p.Keys, *k)
	}
	return p
}

func TestKeyringMaster(t *testing.T) {
	_, err := signing.NewKeyring(nil).Master()
	wantCode(t, "Master(no key)", err, licentia.CodeSigningKeysNotConfigured)

	m := newMasterKey(t, 1)
	got, err := signing.NewKeyring(m).Master()
	if got != m || err != nil {
		t.Errorf("Master() = %v, %v, want the keyring's key", got, err)
	}
}

func TestKeyringPrivate(t *testing.T) {
	m := newMasterKey(t, 1)
	k := newProductKey(t, m, "photo-editor")
	want := openProductKey(t, m, k)

	got, err := signing.NewKeyring(m).Private(k)
	if err != nil || !got.Equal(want) {
		t.Errorf("Private() = another key, %v, want the opened key", err)
	}

	_, err = signing.NewKeyring(nil).Private(k)
	wantCode(t, "Private(no master key)", err, licentia.CodeProductUnavailable)
	// The cause, logged and never sent, says why.
	wantCode(t, "Private(no master key) cause", errors.Unwrap(err), licentia.CodeSigningKeysNotConfigured)

	_, err = signing.NewKeyring(newMasterKey(t, 2)).Private(k)
	wantCode(t, "Private(another master key)", err, licentia.CodeProductUnavailable)
	if !errors.Is(err, signing.ErrUnseal) {
		t.Errorf("Private(another master key) error = %v, want it to wrap ErrUnseal", err)
	}
}

// TestKeyringPrivateCaches opens a key once, then asks again for the same key
// id with its sealed blob destroyed: the answer comes from the cache, so
// signing costs no decryption after the first time.
func TestKeyringPrivateCaches(t *testing.T) {
	m := newMasterKey(t, 1)
	k := newProductKey(t, m, "photo-editor")
	r := signing.NewKeyring(m)
	first, err := r.Private(k)
	if err != nil {
		t.Fatalf("Private() error = %v", err)
	}

	destroyed := *k
	destroyed.Sealed = []byte("not a sealed key")
	if _, err := signing.OpenProductKey(m, &destroyed); err == nil {
		t.Fatal("OpenProductKey(destroyed) error = nil, want the test's key to be unopenable")
	}
	got, err := r.Private(&destroyed)
	if err != nil || !got.Equal(first) {
		t.Errorf("Private(cached id) = %v, want the cached key", err)
	}

	// A failure is not cached: the next call tries again.
	fresh := newProductKey(t, m, "photo-editor")
	broken := *fresh
	broken.Sealed = destroyed.Sealed
	if _, err := r.Private(&broken); err == nil {
		t.Fatal("Private(broken) error = nil, want product_unavailable")
	}
	if _, err := r.Private(fresh); err != nil {
		t.Errorf("Private(after a failure) error = %v, want the key", err)
	}
}

func TestKeyringStatus(t *testing.T) {
	m := newMasterKey(t, 1)
	current := newProductKey(t, m, "photo-editor")
	previous := newProductKey(t, m, "photo-editor")
	previous.Status = licentia.KeyPrevious
	p := productWith("photo-editor", "PHOTO", previous, current)
	noCurrent := productWith("photo-editor", "PHOTO", previous)

	for _, tt := range []struct {
		name string
		r    *signing.Keyring
		p    *licentia.Product
		want string
	}{
		{"ok", signing.NewKeyring(m), p, "ok"},
		{"no master key", signing.NewKeyring(nil), p, "unavailable"},
		{"another master key", signing.NewKeyring(newMasterKey(t, 2)), p, "unavailable"},
		{"no current key", signing.NewKeyring(m), noCurrent, "unavailable"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.r.Status(tt.p); got != tt.want {
				t.Errorf("Status() = %q, want %q", got, tt.want)
			}
		})
	}

	got, err := signing.NewKeyring(m).CurrentPrivate(p)
	if want := openProductKey(t, m, current); err != nil || !got.Equal(want) {
		t.Errorf("CurrentPrivate() = %v, want the current key", err)
	}
	_, err = signing.NewKeyring(m).CurrentPrivate(noCurrent)
	wantCode(t, "CurrentPrivate(no current key)", err, licentia.CodeProductUnavailable)
}

// TestKeyringConcurrent opens keys from many goroutines at once, some cached
// and some not; run with -race.
func TestKeyringConcurrent(t *testing.T) {
	m := newMasterKey(t, 1)
	keys := make([]*licentia.ProductKey, 8)
	want := make(map[string][]byte, len(keys))
	for i := range keys {
		keys[i] = newProductKey(t, m, "photo-editor")
		want[keys[i].ID] = openProductKey(t, m, keys[i])
	}
	r := signing.NewKeyring(m)
	p := productWith("photo-editor", "PHOTO", keys[0])
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 50 {
				k := keys[(g+i)%len(keys)]
				got, err := r.Private(k)
				if err != nil || string(got) != string(want[k.ID]) {
					t.Errorf("Private(%s) = another key, %v", k.ID, err)
					return
				}
				if s := r.Status(p); s != "ok" {
					t.Errorf("Status() = %q, want ok", s)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestKeyringRedacted prints a keyring holding an opened key every way a
// caller might: none shows the key.
func TestKeyringRedacted(t *testing.T) {
	m := newMasterKey(t, 1)
	r := signing.NewKeyring(m)
	priv, err := r.Private(newProductKey(t, m, "photo-editor"))
	if err != nil {
		t.Fatalf("Private() error = %v", err)
	}
	secrets := []string{hex.EncodeToString(priv.Seed()), strings.Trim(fmt.Sprint(priv.Seed()), "[]"), base64.StdEncoding.EncodeToString(priv.Seed())}

	var out []string
	for _, verb := range []string{"%v", "%s", "%+v", "%#v", "%q"} {
		got := fmt.Sprintf(verb, r)
		if !strings.Contains(got, "REDACTED") {
			t.Errorf("Sprintf(%q, keyring) = %q, want REDACTED", verb, got)
		}
		out = append(out, got, fmt.Sprintf(verb, struct{ Keys *signing.Keyring }{r}))
	}
	var text, json bytes.Buffer
	slog.New(slog.NewTextHandler(&text, nil)).Info("keys", "keyring", r)
	slog.New(slog.NewJSONHandler(&json, nil)).Info("keys", "keyring", r)
	out = append(out, text.String(), json.String())
	for _, o := range out {
		for _, s := range secrets {
			if strings.Contains(o, s) {
				t.Errorf("output %q holds the private key", o)
			}
		}
	}
}
