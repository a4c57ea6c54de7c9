package providers

import (
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/signing"
)

// Secret is an integration's API key or webhook secret in clear. It is
// never printed or logged: String, Format and LogValue say REDACTED.
type Secret string

// String returns REDACTED.
func (Secret) String() string { return "REDACTED" }

// Format prints REDACTED for every verb, %#v and %q included.
func (Secret) Format(f fmt.State, _ rune) { io.WriteString(f, "REDACTED") }

// LogValue logs REDACTED.
func (Secret) LogValue() slog.Value { return slog.StringValue("REDACTED") }

// Reveal returns the secret, for the one call that sends it to the
// provider or checks a signature with it.
func (s Secret) Reveal() string { return string(s) }

// The two credentials an integration holds, each sealed apart.
const (
	credentialAPIKey        = "api_key"
	credentialWebhookSecret = "webhook_secret"
)

// credentialAAD binds a sealed credential to its integration and to which
// credential it is, so neither can be moved to another integration or
// swapped with the other.
func credentialAAD(integrationID, which string) []byte {
	return []byte("licentia/integration-credential/v1\x00" + integrationID + "\x00" + which)
}

// ErrNoWebhookSecret is what OpenWebhookSecret answers for an integration
// connected without a webhook secret and not given one since: no webhook
// of its provider can be verified.
var ErrNoWebhookSecret = errors.New("the integration has no webhook secret")

// Seal seals an integration's credentials under m into i, whose ID must be
// set. An empty webhook secret is stored as no secret (an empty sealed
// value), never sealed: SealWebhookSecret sets it later.
func Seal(m *signing.MasterKey, i *licentia.Integration, apiKey, webhookSecret Secret) {
	i.SealedAPIKey = m.Seal([]byte(apiKey), credentialAAD(i.ID, credentialAPIKey))
	i.SealedWebhookSecret = []byte{}
	if webhookSecret != "" {
		i.SealedWebhookSecret = SealWebhookSecret(m, i.ID, webhookSecret)
	}
	i.MasterFingerprint = m.Fingerprint()
}

// SealWebhookSecret seals the webhook secret of the integration id under
// m, as Seal does.
func SealWebhookSecret(m *signing.MasterKey, integrationID string, webhookSecret Secret) []byte {
	return m.Seal([]byte(webhookSecret), credentialAAD(integrationID, credentialWebhookSecret))
}

// OpenAPIKey unseals an integration's API key.
func OpenAPIKey(keys *signing.Keyring, i *licentia.Integration) (Secret, error) {
	return open(keys, i, i.SealedAPIKey, credentialAPIKey)
}

// OpenWebhookSecret unseals an integration's webhook secret; one without
// a secret answers ErrNoWebhookSecret.
func OpenWebhookSecret(keys *signing.Keyring, i *licentia.Integration) (Secret, error) {
	if len(i.SealedWebhookSecret) == 0 {
		return "", fmt.Errorf("open integration %s %s: %w", i.ID, credentialWebhookSecret, ErrNoWebhookSecret)
	}
	return open(keys, i, i.SealedWebhookSecret, credentialWebhookSecret)
}

func open(keys *signing.Keyring, i *licentia.Integration, sealed []byte, which string) (Secret, error) {
	m, err := keys.MasterFor(i.MasterFingerprint)
	if err != nil {
		return "", err
	}
	raw, err := m.Open(sealed, credentialAAD(i.ID, which))
	if err != nil {
		return "", fmt.Errorf("open integration %s %s: %w", i.ID, which, err)
	}
	return Secret(raw), nil
}

// Reseal re-encrypts an integration's credentials from one master key to
// another, for master-key rotation; it fits signing.ResealIntegrationFunc.
// An integration without a webhook secret keeps none.
func Reseal(from, to *signing.MasterKey, i *licentia.Integration) (apiKey, webhookSecret []byte, err error) {
	for _, c := range []struct {
		which  string
		sealed []byte
		out    *[]byte
	}{{credentialAPIKey, i.SealedAPIKey, &apiKey}, {credentialWebhookSecret, i.SealedWebhookSecret, &webhookSecret}} {
		if c.which == credentialWebhookSecret && len(c.sealed) == 0 {
			*c.out = []byte{}
			continue
		}
		raw, err := from.Open(c.sealed, credentialAAD(i.ID, c.which))
		if err != nil {
			return nil, nil, fmt.Errorf("open integration %s %s: %w", i.ID, c.which, err)
		}
		*c.out = to.Seal(raw, credentialAAD(i.ID, c.which))
	}
	return apiKey, webhookSecret, nil
}
