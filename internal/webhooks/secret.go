package webhooks

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/signing"
)

// secretPrefix starts every signing secret, as Standard Webhooks does.
const secretPrefix = "whsec_"

// secretBytes is the size of a secret: more than the 24 bytes asked for.
const secretBytes = 32

// Secret is a signing secret in clear: shown once, never logged. String,
// Format and LogValue print REDACTED.
type Secret struct {
	_     [0]func() // not comparable
	value string
}

// String returns REDACTED.
func (Secret) String() string { return "REDACTED" }

// Format prints REDACTED for every verb: without it, %#v and %+v would
// print the secret.
func (Secret) Format(f fmt.State, _ rune) { io.WriteString(f, "REDACTED") }

// LogValue logs REDACTED.
func (Secret) LogValue() slog.Value { return slog.StringValue("REDACTED") }

// Reveal returns the secret, for the one answer that shows it.
func (s Secret) Reveal() string { return s.value }

// NewSecret returns a secret and its record sealed under m.
func NewSecret(m *signing.MasterKey, endpointID string, now time.Time) (Secret, *licentia.WebhookSecret) {
	raw := make([]byte, secretBytes)
	rand.Read(raw)
	id := licentia.NewID()
	return Secret{value: secretPrefix + base64.StdEncoding.EncodeToString(raw)}, &licentia.WebhookSecret{
		ID: id, EndpointID: endpointID, Sealed: m.Seal(raw, secretAAD(endpointID, id)),
		MasterFingerprint: m.Fingerprint(), CreatedAt: now,
	}
}

// secretAAD binds a sealed secret to its endpoint and id.
func secretAAD(endpointID, secretID string) []byte {
	return []byte("licentia/webhook-secret/v1\x00" + endpointID + "\x00" + secretID)
}

// OpenSecret unseals a secret's bytes.
func OpenSecret(keys *signing.Keyring, s *licentia.WebhookSecret) ([]byte, error) {
	m, err := keys.MasterFor(s.MasterFingerprint)
	if err != nil {
		return nil, err
	}
	return m.Open(s.Sealed, secretAAD(s.EndpointID, s.ID))
}

// ResealSecret re-encrypts a secret from one master key to another.
func ResealSecret(from, to *signing.MasterKey, s *licentia.WebhookSecret) ([]byte, error) {
	raw, err := from.Open(s.Sealed, secretAAD(s.EndpointID, s.ID))
	if err != nil {
		return nil, err
	}
	return to.Seal(raw, secretAAD(s.EndpointID, s.ID)), nil
}

// SigningSecrets returns the secrets that sign at now: the current one and
// every one replaced in the last 24 hours.
func SigningSecrets(all []licentia.WebhookSecret, now time.Time) []licentia.WebhookSecret {
	var out []licentia.WebhookSecret
	for _, s := range all {
		if s.ReplacedAt == nil || now.Sub(*s.ReplacedAt) < licentia.SecretOverlap {
			out = append(out, s)
		}
	}
	return out
}

// Sign returns the webhook-signature header of Standard Webhooks: for each
// secret, "v1," and the base64 HMAC-SHA256 of "id.timestamp.body", joined by
// spaces.
func Sign(secrets [][]byte, id string, timestamp time.Time, body []byte) string {
	content := []byte(id + "." + strconv.FormatInt(timestamp.Unix(), 10) + ".")
	content = append(content, body...)
	sigs := make([]string, len(secrets))
	for i, key := range secrets {
		mac := hmac.New(sha256.New, key)
		mac.Write(content)
		sigs[i] = "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	}
	return strings.Join(sigs, " ")
}
