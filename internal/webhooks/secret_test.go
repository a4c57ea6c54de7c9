package webhooks_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/webhooks"
)

var signedAt = time.Date(2026, 11, 22, 1, 16, 13, 0, time.UTC)

// newMaster returns a master key of 32 random bytes.
func newMaster(t *testing.T) *signing.MasterKey {
	t.Helper()
	raw := make([]byte, signing.MasterKeySize)
	rand.Read(raw)
	m, err := signing.NewMasterKey(raw)
	if err != nil {
		t.Fatalf("NewMasterKey() error = %v", err)
	}
	return m
}

// signedHeader is the header of a delivery signed by Sign.
func signedHeader(id string, at time.Time, signature string) http.Header {
	h := http.Header{}
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", strconv.FormatInt(at.Unix(), 10))
	h.Set("webhook-signature", signature)
	return h
}

// TestSignVerifiedByStandardWebhooks: what Sign produces, the official
// Standard Webhooks library accepts with each secret that signed, and
// refuses with any other, for another id, timestamp or body.
func TestSignVerifiedByStandardWebhooks(t *testing.T) {
	m := newMaster(t)
	keys := signing.NewKeyring(m)
	var secrets []webhooks.Secret
	var raws [][]byte
	for range 3 {
		s, rec := webhooks.NewSecret(m, licentia.NewID(), signedAt)
		raw, err := webhooks.OpenSecret(keys, rec)
		if err != nil {
			t.Fatalf("OpenSecret() error = %v", err)
		}
		secrets, raws = append(secrets, s), append(raws, raw)
	}
	id := "evt_0123456789abcdef0123456789abcdef"
	body := []byte(`{"type":"licence.issued","timestamp":"2026-11-22T01:16:13.000Z","data":{"licence":{"id":"x"}}}`)

	sig := webhooks.Sign(raws[:2], id, signedAt, body)
	if entries := strings.Split(sig, " "); len(entries) != 2 || !strings.HasPrefix(entries[0], "v1,") || !strings.HasPrefix(entries[1], "v1,") {
		t.Fatalf("Sign() = %q, want two space-separated v1, entries", sig)
	}
	for i, s := range secrets {
		wh, err := standardwebhooks.NewWebhook(s.Reveal())
		if err != nil {
			t.Fatalf("NewWebhook() error = %v", err)
		}
		err = wh.VerifyIgnoringTimestamp(body, signedHeader(id, signedAt, sig))
		if signed := i < 2; (err == nil) != signed {
			t.Errorf("secret %d: VerifyIgnoringTimestamp() error = %v, want it to verify: %v", i, err, signed)
		}
		if i == 2 {
			continue
		}
		for name, tt := range map[string]struct {
			id   string
			at   time.Time
			body []byte
		}{
			"another id":        {"evt_ffffffffffffffffffffffffffffffff", signedAt, body},
			"another timestamp": {id, signedAt.Add(time.Second), body},
			"another body":      {id, signedAt, bytes.Replace(body, []byte(`"x"`), []byte(`"y"`), 1)},
		} {
			if err := wh.VerifyIgnoringTimestamp(tt.body, signedHeader(tt.id, tt.at, sig)); err == nil {
				t.Errorf("secret %d: %s verifies", i, name)
			}
		}
		// The library's own signature is ours.
		want, err := wh.Sign(id, signedAt, body)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Split(sig, " ")[i]; got != want {
			t.Errorf("secret %d: Sign() entry = %q, library signs %q", i, got, want)
		}
	}
}

// TestNewSecret: a secret is whsec_ and the base64 of 32 random bytes; its
// sealed record opens to the same bytes, only for its own endpoint and id
// and under the master key that sealed it.
func TestNewSecret(t *testing.T) {
	m := newMaster(t)
	keys := signing.NewKeyring(m)
	endpoint := licentia.NewID()
	s, rec := webhooks.NewSecret(m, endpoint, signedAt)
	raw, ok := strings.CutPrefix(s.Reveal(), "whsec_")
	want, err := base64.StdEncoding.DecodeString(raw)
	if !ok || err != nil || len(want) != 32 {
		t.Fatalf("secret %q, want whsec_ and the base64 of 32 bytes", s.Reveal())
	}
	if rec.EndpointID != endpoint || rec.MasterFingerprint != m.Fingerprint() || !rec.CreatedAt.Equal(signedAt) || rec.ReplacedAt != nil {
		t.Errorf("record = %+v", rec)
	}
	if bytes.Contains(rec.Sealed, want) {
		t.Errorf("sealed record holds the secret in clear")
	}
	got, err := webhooks.OpenSecret(keys, rec)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("OpenSecret() = %x, %v; want %x", got, err, want)
	}
	moved := *rec
	moved.EndpointID = licentia.NewID()
	if _, err := webhooks.OpenSecret(keys, &moved); err == nil {
		t.Errorf("OpenSecret() of a record moved to another endpoint succeeded")
	}
	renamed := *rec
	renamed.ID = licentia.NewID()
	if _, err := webhooks.OpenSecret(keys, &renamed); err == nil {
		t.Errorf("OpenSecret() of a record with another id succeeded")
	}
	if _, err := webhooks.OpenSecret(signing.NewKeyring(newMaster(t)), rec); err == nil {
		t.Errorf("OpenSecret() under another master key succeeded")
	}

	other, _ := webhooks.NewSecret(m, endpoint, signedAt)
	if other.Reveal() == s.Reveal() {
		t.Errorf("two secrets are equal")
	}

	to := newMaster(t)
	sealed, err := webhooks.ResealSecret(m, to, rec)
	if err != nil {
		t.Fatalf("ResealSecret() error = %v", err)
	}
	resealed := *rec
	resealed.Sealed, resealed.MasterFingerprint = sealed, to.Fingerprint()
	if got, err := webhooks.OpenSecret(signing.NewKeyring(to), &resealed); err != nil || !bytes.Equal(got, want) {
		t.Errorf("OpenSecret() after ResealSecret() = %x, %v; want %x", got, err, want)
	}
}

// TestSecretRedacted: a secret printed or logged by mistake shows REDACTED.
func TestSecretRedacted(t *testing.T) {
	s, _ := webhooks.NewSecret(newMaster(t), licentia.NewID(), signedAt)
	raw := strings.TrimPrefix(s.Reveal(), "whsec_")
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	log.Info("secret", "secret", s, "struct", struct{ S webhooks.Secret }{s})
	slog.New(slog.NewTextHandler(&logs, nil)).Info("secret", "secret", s)
	for _, out := range []string{
		s.String(), fmt.Sprint(s), fmt.Sprintf("%v %+v %#v %s %q %x", s, s, s, s, s, s),
		fmt.Sprintf("%+v", struct{ S webhooks.Secret }{s}), logs.String(),
	} {
		if strings.Contains(out, raw) || strings.Contains(out, "whsec_") {
			t.Errorf("secret printed: %s", out)
		}
	}
	if !strings.Contains(logs.String(), "REDACTED") {
		t.Errorf("log %s does not say REDACTED", logs.String())
	}
}

// TestSigningSecrets: the current secret and every secret replaced less
// than 24 hours ago sign.
func TestSigningSecrets(t *testing.T) {
	replaced := func(d time.Duration) *time.Time { at := signedAt.Add(-d); return &at }
	all := []licentia.WebhookSecret{
		{ID: "current"},
		{ID: "an hour ago", ReplacedAt: replaced(time.Hour)},
		{ID: "just under a day ago", ReplacedAt: replaced(licentia.SecretOverlap - time.Millisecond)},
		{ID: "a day ago", ReplacedAt: replaced(licentia.SecretOverlap)},
		{ID: "a week ago", ReplacedAt: replaced(7 * 24 * time.Hour)},
	}
	var got []string
	for _, s := range webhooks.SigningSecrets(all, signedAt) {
		got = append(got, s.ID)
	}
	if diff := cmp.Diff([]string{"current", "an hour ago", "just under a day ago"}, got); diff != "" {
		t.Errorf("SigningSecrets() (-want +got):\n%s", diff)
	}
}
