package signing

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
)

// LinkToken derives the token of a mailed link from the link's id, under
// the master key, for purpose (such as "portal-sign-in"). A link row keeps
// only the token's hash and its mail only the id, so the token is at rest
// nowhere: it is derived again when the mail is rendered, as licence keys
// are. It is 43 characters of URL-safe base64, which no mail client or
// quoted-printable encoder breaks. A master key rotated while a link's mail
// waits derives another token, so that link does not sign in.
func (m *MasterKey) LinkToken(purpose, id string) string {
	mac := hmac.New(sha256.New, m.links)
	mac.Write([]byte(purpose))
	mac.Write([]byte{0})
	mac.Write([]byte(id))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// LinkToken derives a link's token under the current master key (see
// MasterKey.LinkToken), or answers signing_keys_not_configured.
func (r *Keyring) LinkToken(purpose, id string) (string, error) {
	m, err := r.Master()
	if err != nil {
		return "", err
	}
	return m.LinkToken(purpose, id), nil
}
